package runbook

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/workload"
)

var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// fixture: a standalone ReplicaSet "web" with pods a..e; a,b on n1 (zone
// z1), c on n2 (z1), d,e on n3 (z2). All ready, readied an hour apart so
// the log buckets order them: a newest ... e oldest.
func fixture() *snapshot.Snapshot {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "rs"},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(5)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}
	s := &snapshot.Snapshot{ReplicaSets: []*appsv1.ReplicaSet{rs}}
	nodes := map[string]string{"a": "n1", "b": "n1", "c": "n2", "d": "n3", "e": "n3"}
	for i, n := range []string{"a", "b", "c", "d", "e"} {
		ready := now.Add(-time.Duration(1<<(i+1)) * time.Hour)
		s.Pods = append(s.Pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: n, Namespace: "ns", UID: types.UID("uid-" + n), Labels: map[string]string{"app": "web"},
				CreationTimestamp: metav1.NewTime(ready.Add(-time.Minute)),
				OwnerReferences:   []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web", UID: "rs", Controller: ptr.To(true)}}},
			Spec:   corev1.PodSpec{NodeName: nodes[n]},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready)}}},
		})
	}
	for n, z := range map[string]string{"n1": "z1", "n2": "z1", "n3": "z2"} {
		s.Nodes = append(s.Nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{ZoneLabel: z}}})
	}
	return s
}

var ref = snapshot.Ref{Kind: snapshot.ReplicaSet, Namespace: "ns", Name: "web"}

func predict(t *testing.T, s *snapshot.Snapshot, replicas int32, r rules.RuleSet) (*prediction.Prediction, workload.Options) {
	t.Helper()
	o := workload.Options{Rules: r, Now: now, Seed: 1}
	p, err := workload.Predict(s, ref, replicas, o)
	if err != nil {
		t.Fatal(err)
	}
	Analyze(s, ref, p)
	return p, o
}

func TestImpactPerNodeAndZone(t *testing.T) {
	p, _ := predict(t, fixture(), 2, rules.Default())
	if !slices.Equal(p.Victims, []string{"a", "b", "c"}) {
		t.Fatalf("victims %v", p.Victims)
	}
	want := []prediction.Placement{{Name: "n1", Before: 2, After: 0, Emptied: true}, {Name: "n2", Before: 1, After: 0, Emptied: true}, {Name: "n3", Before: 2, After: 2}}
	if !slices.Equal(p.Impact.Nodes, want) {
		t.Fatalf("nodes %+v", p.Impact.Nodes)
	}
	if z := p.Impact.Zones; len(z) != 2 || !z[0].Emptied || z[0].Name != "z1" || z[1].After != 2 {
		t.Fatalf("zones %+v", z)
	}
	if !slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "zone z1 loses all 3") }) {
		t.Fatalf("want a zone warning, got %v", p.Warnings)
	}
}

func conflict(p *prediction.Prediction, kind string) string {
	for _, c := range p.Conflicts {
		if c.Kind == kind {
			return c.Message
		}
	}
	return ""
}

func TestHPAConflict(t *testing.T) {
	s := fixture()
	s.HPAs = []*autoscalingv2.HorizontalPodAutoscaler{{ObjectMeta: metav1.ObjectMeta{Name: "web-hpa", Namespace: "ns"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{Kind: "ReplicaSet", Name: "web"}, MinReplicas: ptr.To(int32(4)), MaxReplicas: 10}}}
	p, _ := predict(t, s, 2, rules.Default())
	if m := conflict(p, "HorizontalPodAutoscaler"); !strings.Contains(m, "web-hpa has minReplicas 4 above 2: it will scale back up") {
		t.Fatalf("got %q", m)
	}
}

func TestPDBBelowMinimum(t *testing.T) {
	s := fixture()
	s.PDBs = []*policyv1.PodDisruptionBudget{{ObjectMeta: metav1.ObjectMeta{Name: "web-pdb", Namespace: "ns"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(3)), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}}
	p, _ := predict(t, s, 2, rules.Default())
	if m := conflict(p, "PodDisruptionBudget"); !strings.Contains(m, "2 healthy pods after the scale-in, it asks for at least 3") || !strings.Contains(m, "below its minimum") {
		t.Fatalf("got %q", m)
	}
}

func TestTerminatingAndInvalidCostConflicts(t *testing.T) {
	s := fixture()
	s.Pods[4].DeletionTimestamp = ptr.To(metav1.NewTime(now))
	s.Pods[3].Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": "+5"}
	p, _ := predict(t, s, 2, rules.Default())
	if !strings.Contains(conflict(p, "Terminating"), "e is already terminating") {
		t.Fatalf("conflicts %+v", p.Conflicts)
	}
	if !strings.Contains(conflict(p, "DeletionCost"), `d has an invalid pod-deletion-cost "+5"`) {
		t.Fatalf("conflicts %+v", p.Conflicts)
	}
}

func steer(t *testing.T, s *snapshot.Snapshot, replicas int32, r rules.RuleSet, req Request) *prediction.Steering {
	t.Helper()
	p, o := predict(t, s, replicas, r)
	st, err := Steer(s, ref, replicas, o, p, req)
	if err != nil {
		t.Fatalf("Steer(%+v): %v", req, err)
	}
	return st
}

// The verified annotations really change the outcome: apply them to the
// snapshot and predict again.
func applyAndPredict(t *testing.T, s *snapshot.Snapshot, replicas int32, st *prediction.Steering) []string {
	t.Helper()
	annot := map[string]int32{}
	for _, a := range st.Annotations {
		annot[a.Pod] = a.Cost
	}
	p, _ := predict(t, annotated(s, annot), replicas, rules.Default())
	out := slices.Clone(p.Victims)
	slices.Sort(out)
	return out
}

func TestSteerSpare(t *testing.T) {
	s := fixture()
	st := steer(t, s, 3, rules.Default(), Request{Spare: []string{"a"}})
	// One annotation suffices (raise a, or lower c); the pruning keeps one.
	if !st.Possible || !st.Verified || len(st.Annotations) != 1 {
		t.Fatalf("%+v", st)
	}
	if got := applyAndPredict(t, s, 3, st); !slices.Equal(got, []string{"b", "c"}) {
		t.Fatalf("after annotating: %v", got)
	}
	a := st.Annotations[0]
	if want := fmt.Sprintf("kubectl annotate pod %s -n ns controller.kubernetes.io/pod-deletion-cost=%d --overwrite", a.Pod, a.Cost); st.Commands[0] != want {
		t.Fatalf("command %q, want %q", st.Commands[0], want)
	}
}

func TestSteerTargetAndNode(t *testing.T) {
	s := fixture()
	st := steer(t, s, 3, rules.Default(), Request{Target: []string{"d", "e"}})
	if !st.Possible || !st.Verified {
		t.Fatalf("%+v", st)
	}
	if got := applyAndPredict(t, s, 3, st); !slices.Equal(got, []string{"d", "e"}) {
		t.Fatalf("after annotating: %v", got)
	}
	st = steer(t, s, 4, rules.Default(), Request{TargetNode: "n3"})
	if !st.Possible || !slices.Equal(st.Wanted, []string{"d"}) {
		t.Fatalf("%+v", st)
	}
	if got := applyAndPredict(t, s, 4, st); !slices.Equal(got, []string{"d"}) {
		t.Fatalf("after annotating: %v", got)
	}
}

func TestSteerAlreadySo(t *testing.T) {
	st := steer(t, fixture(), 4, rules.Default(), Request{Target: []string{"a"}})
	if !st.Possible || len(st.Annotations) != 0 || !strings.Contains(st.Reason, "already") {
		t.Fatalf("%+v", st)
	}
}

func TestSteerImpossible(t *testing.T) {
	s := fixture()
	s.Pods[2].Status.Conditions[0].Status = corev1.ConditionFalse // c not ready: R3 puts it first
	cases := []struct {
		name string
		r    rules.RuleSet
		req  Request
		want string
	}{
		{"readiness decides before cost", rules.Default(), Request{Spare: []string{"c"}}, "c must stay but it goes before"},
		{"cost rule off", mustRules(t, 30, map[string]bool{rules.PodDeletionCost: false}), Request{Spare: []string{"a"}}, "PodDeletionCost=false"},
		{"too many targets", rules.Default(), Request{Target: []string{"a", "b", "d"}}, "3 targets but the scale-in deletes only 1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := steer(t, s, 4, tc.r, tc.req)
			if st.Possible || !strings.Contains(st.Reason, tc.want) {
				t.Fatalf("possible=%v reason %q, want %q", st.Possible, st.Reason, tc.want)
			}
		})
	}
	sts, err := Steer(s, snapshot.Ref{Kind: snapshot.StatefulSet}, 1, workload.Options{Rules: rules.Default()}, &prediction.Prediction{Victims: []string{"x"}}, Request{Spare: []string{"x"}})
	if err != nil || sts.Possible || !strings.Contains(sts.Reason, "ordinal") {
		t.Fatalf("%+v", sts)
	}
}

func mustRules(t *testing.T, minor int, g map[string]bool) rules.RuleSet {
	r, err := rules.For(minor, g)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
