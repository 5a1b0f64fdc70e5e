package statefulset

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var now = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

const ns = "default"

type setOpt func(*appsv1.StatefulSet)

func newSet(name string, opts ...setOpt) *appsv1.StatefulSet {
	s := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, UID: types.UID("uid-" + name)},
		Spec: appsv1.StatefulSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType},
		},
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

func parallel(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement }

func startAt(n int32) setOpt {
	return func(s *appsv1.StatefulSet) { s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: n} }
}

func minReady(n int32) setOpt { return func(s *appsv1.StatefulSet) { s.Spec.MinReadySeconds = n } }

func withClaims(whenScaled appsv1.PersistentVolumeClaimRetentionPolicyType, templates ...string) setOpt {
	return func(s *appsv1.StatefulSet) {
		for _, t := range templates {
			s.Spec.VolumeClaimTemplates = append(s.Spec.VolumeClaimTemplates, corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: t}})
		}
		s.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType, WhenScaled: whenScaled,
		}
	}
}

type podOpt func(*corev1.Pod)

// newPod is a pod of set, Running and Ready for an hour.
func newPod(set *appsv1.StatefulSet, name string, opts ...podOpt) *corev1.Pod {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: ns, UID: types.UID("uid-" + name),
			Labels:          map[string]string{"app": set.Name},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(set, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{{
				Type: corev1.PodReady, Status: corev1.ConditionTrue,
				LastTransitionTime: metav1.NewTime(now.Add(-time.Hour)),
			}},
		},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func notReady(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }

func pending(p *corev1.Pod) {
	p.Status.Phase = corev1.PodPending
	p.Status.Conditions[0].Status = corev1.ConditionFalse
}

func phase(ph corev1.PodPhase) podOpt {
	return func(p *corev1.Pod) {
		p.Status.Phase = ph
		p.Status.Conditions[0].Status = corev1.ConditionFalse
	}
}

func terminating(p *corev1.Pod) {
	t := metav1.NewTime(now.Add(-5 * time.Second))
	p.DeletionTimestamp = &t
}

func readyFor(d time.Duration) podOpt {
	return func(p *corev1.Pod) { p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(now.Add(-d)) }
}

func orphan(p *corev1.Pod) { p.OwnerReferences = nil }

func ownedBy(kind, name string) podOpt {
	return func(p *corev1.Pod) {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: name, UID: types.UID("uid-" + name), Controller: &yes}}
	}
}

func labelled(k, v string) podOpt { return func(p *corev1.Pod) { p.Labels = map[string]string{k: v} } }

// pods builds set-<i> for each ordinal, with opts applied to the ordinals
// named in per.
func pods(set *appsv1.StatefulSet, ords []int, per map[int][]podOpt) []*corev1.Pod {
	var out []*corev1.Pod
	for _, o := range ords {
		out = append(out, newPod(set, set.Name+"-"+strconv.Itoa(o), per[o]...))
	}
	return out
}

func seq(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func predict(t *testing.T, in Input) Result {
	t.Helper()
	if in.Now.IsZero() {
		in.Now = now
	}
	if in.Minor == 0 {
		in.Minor = 37
	}
	res, err := Predict(in)
	if err != nil {
		t.Fatalf("Predict: %v", err)
	}
	return res
}

func names(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

func wantList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(names(got), names(want)) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func fateOf(t *testing.T, res Result, name string) PodFate {
	t.Helper()
	for _, f := range res.Pods {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no fate for %s in %+v", name, res.Pods)
	return PodFate{}
}

func wantFate(t *testing.T, res Result, name, fate, reasonPart string) {
	t.Helper()
	f := fateOf(t, res, name)
	if f.Fate != fate {
		t.Errorf("%s: fate %q, want %q (reason %q)", name, f.Fate, fate, f.Reason)
	}
	if !strings.Contains(f.Reason, reasonPart) {
		t.Errorf("%s: reason %q does not mention %q", name, f.Reason, reasonPart)
	}
}

func wantStall(t *testing.T, res Result, pod, reasonPart string) {
	t.Helper()
	if !res.Stalled || res.StallPod != pod {
		t.Fatalf("stall = %v at %q (%s), want stall at %q", res.Stalled, res.StallPod, res.StallReason, pod)
	}
	if !strings.Contains(res.StallReason, reasonPart) {
		t.Errorf("stall reason %q does not mention %q", res.StallReason, reasonPart)
	}
}

func wantNoStall(t *testing.T, res Result) {
	t.Helper()
	if res.Stalled {
		t.Fatalf("unexpected stall at %s: %s", res.StallPod, res.StallReason)
	}
}
