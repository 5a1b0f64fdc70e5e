package engine

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

var now = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

// pb builds a test pod fluently.
type pb struct{ p *corev1.Pod }

func newPod(name, uid string) pb {
	return pb{&corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(uid),
			CreationTimestamp: metav1.NewTime(now.Add(-30 * 24 * time.Hour))},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}}
}

func (b pb) node(n string) pb            { b.p.Spec.NodeName = n; return b }
func (b pb) phase(ph corev1.PodPhase) pb { b.p.Status.Phase = ph; return b }
func (b pb) created(ago time.Duration) pb {
	b.p.CreationTimestamp = metav1.NewTime(now.Add(-ago))
	return b
}
func (b pb) createdAt(t time.Time) pb      { b.p.CreationTimestamp = metav1.NewTime(t); return b }
func (b pb) notReady() pb                  { return b.cond(corev1.ConditionFalse, now.Add(-time.Hour)) }
func (b pb) readyFor(ago time.Duration) pb { return b.cond(corev1.ConditionTrue, now.Add(-ago)) }
func (b pb) readyAt(t time.Time) pb        { return b.cond(corev1.ConditionTrue, t) }
func (b pb) cost(v string) pb {
	if b.p.Annotations == nil {
		b.p.Annotations = map[string]string{}
	}
	b.p.Annotations[DeletionCostAnnotation] = v
	return b
}
func (b pb) restarts(n int32) pb {
	b.p.Status.ContainerStatuses = append(b.p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "app", RestartCount: n})
	return b
}
func (b pb) sidecarRestarts(n int32) pb {
	always := corev1.ContainerRestartPolicyAlways
	b.p.Spec.InitContainers = append(b.p.Spec.InitContainers, corev1.Container{Name: "proxy", RestartPolicy: &always})
	b.p.Status.InitContainerStatuses = append(b.p.Status.InitContainerStatuses, corev1.ContainerStatus{Name: "proxy", RestartCount: n})
	return b
}
func (b pb) cond(s corev1.ConditionStatus, at time.Time) pb {
	b.p.Status.Conditions = nil
	b.p.Status.Conditions = append(b.p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: s, LastTransitionTime: metav1.NewTime(at)})
	return b
}
func (b pb) pod() Pod { return FromPod(b.p) }

func rules37(t testing.TB) rules.RuleSet { return ruleSet(t, 37, nil) }

func ruleSet(t testing.TB, minor int, gates map[string]bool) rules.RuleSet {
	t.Helper()
	r, err := rules.For(minor, gates)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func names(res Result) []string {
	var out []string
	for _, p := range res.Order {
		if p.Delete {
			out = append(out, p.Pod.Name)
		}
	}
	return out
}

func byName(res Result, name string) Placed {
	for _, p := range res.Order {
		if p.Pod.Name == name {
			return p
		}
	}
	panic("no pod " + name)
}

// sorter is sort.Sort over key indices with the controller's comparator:
// the plain reference the engine's faster sorts are checked against.
type sorter struct {
	c    *Comparator
	keys []key
	idx  []int
}

func (s *sorter) Len() int           { return len(s.idx) }
func (s *sorter) Swap(i, j int)      { s.idx[i], s.idx[j] = s.idx[j], s.idx[i] }
func (s *sorter) Less(i, j int) bool { return s.c.less(&s.keys[s.idx[i]], &s.keys[s.idx[j]]) }
