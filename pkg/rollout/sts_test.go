package rollout

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

// stsFixture: StatefulSet "web" of n Running and Ready pods on one node.
func stsFixture(t *testing.T, n int32, minor int, gates map[string]bool, opts ...func(*appsv1.StatefulSet)) Input {
	t.Helper()
	labels := map[string]string{"app": "web"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "v1",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	set := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "sts-uid"},
		Spec: appsv1.StatefulSetSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl, ServiceName: "web",
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType}}}
	for _, o := range opts {
		o(set)
	}
	rs, err := rules.For(minor, gates)
	if err != nil {
		t.Fatal(err)
	}
	in := Input{StatefulSet: set, Nodes: []*corev1.Node{node("n1", "100")}, Change: Change{Kind: ChangeRestart}, Rules: rs, Scheduler: rules.Scheduler(minor, gates), Now: now}
	for i := range int(n) {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-%d", i), Namespace: "ns", UID: types.UID(fmt.Sprintf("u%d", i)), Labels: labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(set, appsv1.SchemeGroupVersion.WithKind("StatefulSet"))}},
			Spec: *tmpl.Spec.DeepCopy(), Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}}}}
		p.Spec.NodeName = "n1"
		in.Pods = append(in.Pods, p)
	}
	return in
}

func predictSTS(t *testing.T, in Input) prediction.Rollout {
	t.Helper()
	res, err := Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	return res.Rollout
}

// createdPerStep: the pod names each step creates.
func createdPerStep(r prediction.Rollout) [][]string {
	var out [][]string
	for _, s := range r.Steps {
		var names []string
		for _, c := range s.Created {
			names = append(names, c.Pod)
		}
		out = append(out, names)
	}
	return out
}

func wantSteps(t *testing.T, what string, got, want [][]string) {
	t.Helper()
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("%s per step = %v, want %v", what, got, want)
	}
}

func unready(in Input, name string) {
	for _, p := range in.Pods {
		if p.Name == name {
			p.Status.Conditions[0].Status = corev1.ConditionFalse
		}
	}
}

func partition(p int32) func(*appsv1.StatefulSet) {
	return func(s *appsv1.StatefulSet) {
		s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: &p}
	}
}

func maxUnavailable(v string) func(*appsv1.StatefulSet) {
	return func(s *appsv1.StatefulSet) {
		mu := intstr.Parse(v)
		if s.Spec.UpdateStrategy.RollingUpdate == nil {
			s.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
		s.Spec.UpdateStrategy.RollingUpdate.MaxUnavailable = &mu
	}
}

func parallelPolicy(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement }

// Reverse ordinal, one at a time: each step deletes the highest old pod
// and recreates it under its name; a bad release stops after the first.
func TestStatefulSetReverseOrdinal(t *testing.T) {
	in := stsFixture(t, 3, 37, nil)
	res, err := Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Rollout
	if r.Outcome != prediction.RolloutCompletes || r.Kind != "StatefulSet" {
		t.Fatalf("outcome %s %s", r.Outcome, r.Reason)
	}
	wantSteps(t, "deleted", deletedPerStep(r), [][]string{{"ns/web-2"}, {"ns/web-1"}, {"ns/web-0"}})
	wantSteps(t, "created", createdPerStep(r), [][]string{{"web-2"}, {"web-1"}, {"web-0"}})
	for i, s := range r.Steps {
		if s.AvailableMin != 2 || s.Created[0].Node != "n1" || s.WaitsFor != 1 {
			t.Errorf("step %d: availableMin %d node %q waitsFor %d, want 2 n1 1", i+1, s.AvailableMin, s.Created[0].Node, s.WaitsFor)
		}
	}
	if !slices.Equal(res.Victims, []string{"ns/web-2", "ns/web-1", "ns/web-0"}) || !res.Certain {
		t.Errorf("victims %v certain %v", res.Victims, res.Certain)
	}
	if f := r.IfNewPodsFail; !slices.Equal(f.Deleted, []string{"ns/web-2"}) || f.AvailableMin != 2 {
		t.Errorf("ifNewPodsFail %+v, want web-2 deleted and 2 available", f)
	}
}

// Ordinals below the partition stay on the old revision: it completes.
func TestStatefulSetPartition(t *testing.T) {
	r := predictSTS(t, stsFixture(t, 4, 37, nil, partition(2)))
	wantSteps(t, "deleted", deletedPerStep(r), [][]string{{"ns/web-3"}, {"ns/web-2"}})
	if r.Outcome != prediction.RolloutCompletes || !strings.Contains(r.Reason, "partition 2") || !strings.Contains(r.Reason, "web-0, web-1") {
		t.Errorf("outcome %s reason %q", r.Outcome, r.Reason)
	}
}

func TestStatefulSetOnDelete(t *testing.T) {
	r := predictSTS(t, stsFixture(t, 3, 37, nil, func(s *appsv1.StatefulSet) {
		s.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	}))
	if r.Outcome != prediction.RolloutNotStarted || len(r.Steps) != 0 || !strings.Contains(r.Reason, "OnDelete") {
		t.Errorf("outcome %s steps %d reason %q", r.Outcome, len(r.Steps), r.Reason)
	}
}

// OrderedReady: processReplica stops at the first pod that is not Running
// and Ready, at any ordinal, before any update.
func TestStatefulSetOrderedReadyBlocks(t *testing.T) {
	in := stsFixture(t, 3, 37, nil)
	unready(in, "web-0")
	r := predictSTS(t, in)
	if r.Outcome != prediction.RolloutStalls || len(r.Steps) != 0 || !strings.Contains(r.Reason, "web-0") || !strings.Contains(r.Unblock, "kubectl delete pod web-0") {
		t.Errorf("outcome %s steps %d reason %q unblock %q", r.Outcome, len(r.Steps), r.Reason, r.Unblock)
	}
	if len(r.Remaining) != 3 {
		t.Errorf("remaining %v", r.Remaining)
	}
}

// maxUnavailable 2: on 1.37 (gate on by default) OrderedReady deletes the
// two highest together, then recreates the lower first (monotonic: one
// creation per sync, waiting for it); on 1.36 the gate is off (one at a
// time, a warning) unless turned on.
func TestStatefulSetMaxUnavailableByVersion(t *testing.T) {
	batch := [][]string{{"ns/web-3", "ns/web-2"}, nil, {"ns/web-1", "ns/web-0"}, nil}
	one := [][]string{{"ns/web-3"}, {"ns/web-2"}, {"ns/web-1"}, {"ns/web-0"}}
	for _, c := range []struct {
		minor int
		gates map[string]bool
		want  [][]string
	}{
		{37, nil, batch},
		{36, nil, one},
		{35, nil, one},
		{34, nil, one},
		{36, map[string]bool{rules.MaxUnavailableStatefulSet: true}, batch},
		{37, map[string]bool{rules.MaxUnavailableStatefulSet: false}, one},
	} {
		r := predictSTS(t, stsFixture(t, 4, c.minor, c.gates, maxUnavailable("2")))
		wantSteps(t, fmt.Sprintf("1.%d %v deleted", c.minor, c.gates), deletedPerStep(r), c.want)
		if r.Outcome != prediction.RolloutCompletes {
			t.Errorf("1.%d: %s %s", c.minor, r.Outcome, r.Reason)
		}
	}
	r := predictSTS(t, stsFixture(t, 4, 37, nil, maxUnavailable("2")))
	wantSteps(t, "1.37 created", createdPerStep(r), [][]string{{"web-2"}, {"web-3"}, {"web-0"}, {"web-1"}})
	if r.Steps[0].AvailableMin != 2 {
		t.Errorf("availableMin %d, want 2", r.Steps[0].AvailableMin)
	}
}

// Parallel with an old pod already unavailable, maxUnavailable 1: 1.37's
// phase 1 deletes it first whatever the budget; 1.36 with the gate on
// counts it against the budget and never deletes anything; with the gate
// off the highest old pod goes first regardless.
func TestStatefulSetParallelUnavailableOld(t *testing.T) {
	in := stsFixture(t, 3, 37, nil, parallelPolicy)
	unready(in, "web-0")
	r := predictSTS(t, in)
	wantSteps(t, "1.37 deleted", deletedPerStep(r), [][]string{{"ns/web-0"}, {"ns/web-2"}, {"ns/web-1"}})
	in = stsFixture(t, 3, 36, map[string]bool{rules.MaxUnavailableStatefulSet: true}, parallelPolicy)
	unready(in, "web-0")
	r = predictSTS(t, in)
	if r.Outcome != prediction.RolloutStalls || len(r.Steps) != 0 || !strings.Contains(r.Reason, "web-0") {
		t.Errorf("1.36 gate on: %s steps %d %q", r.Outcome, len(r.Steps), r.Reason)
	}
	in = stsFixture(t, 3, 36, nil, parallelPolicy)
	unready(in, "web-0")
	r = predictSTS(t, in)
	wantSteps(t, "1.36 deleted", deletedPerStep(r), [][]string{{"ns/web-2"}, {"ns/web-1"}, {"ns/web-0"}})
}

// A recreated pod that fits no node (the node was tainted since): the
// rollout stalls after deleting it, and PDB minAvailable 3 is broken.
func TestStatefulSetFitsNowhereAndBudget(t *testing.T) {
	in := stsFixture(t, 3, 37, nil)
	in.Nodes[0].Spec.Taints = []corev1.Taint{{Key: "maintenance", Effect: corev1.TaintEffectNoSchedule}}
	three := intstr.FromInt32(3)
	in.PDBs = []*policyv1.PodDisruptionBudget{{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &three, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}}}
	r := predictSTS(t, in)
	if r.Outcome != prediction.RolloutStalls || len(r.Steps) != 1 || !strings.Contains(r.Reason, "web-2 fits no node") {
		t.Fatalf("outcome %s steps %d reason %q", r.Outcome, len(r.Steps), r.Reason)
	}
	if c := r.Steps[0].Created[0]; c.Node != "" || c.Reason == "" {
		t.Errorf("created %+v, want no node and the fit error", c)
	}
	if b := r.Steps[0].Budgets; len(b) != 1 || !b[0].Violated || b[0].DesiredHealthy != 3 {
		t.Errorf("budgets %+v, want ns/web violated at 3 desired", b)
	}
}

func TestStatefulSetBadInput(t *testing.T) {
	in := stsFixture(t, 3, 37, nil, func(s *appsv1.StatefulSet) { s.Spec.UpdateStrategy.Type = "Recreate" })
	var ue *UnsupportedError
	if _, err := Predict(in); err == nil || !asErr(err, &ue) {
		t.Errorf("Recreate: %v, want UnsupportedError", err)
	}
	in = stsFixture(t, 3, 37, nil, maxUnavailable("-1"))
	var ie *InputError
	if _, err := Predict(in); err == nil || !asErr(err, &ie) {
		t.Errorf("maxUnavailable -1: %v, want InputError", err)
	}
	in = stsFixture(t, 3, 37, nil)
	in.Change = Change{Kind: ChangeResume}
	var ce *ChangeError
	if _, err := Predict(in); err == nil || !asErr(err, &ce) {
		t.Errorf("--resume: %v, want ChangeError", err)
	}
}

func asErr[T error](err error, target *T) bool { return errors.As(err, target) }

// Several nodes pass the filters: the recreated pod's node is left to the
// scoring (candidates, uncertain answer), but the step's deletions follow
// the ordinals and stay certain.
func TestStatefulSetCandidatesKeepStepCertain(t *testing.T) {
	in := stsFixture(t, 2, 37, nil)
	in.Nodes = append(in.Nodes, node("n2", "100"))
	res, err := Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	st := res.Rollout.Steps[0]
	if res.Certain || !st.Certain || st.Created[0].Node != "" || len(st.Created[0].Candidates) != 2 {
		t.Errorf("certain %v, step %+v", res.Certain, st)
	}
}

// replicasTo is the StatefulSet's spec.replicas lowered with the change
// (--desired): the pods past it are condemned.
func replicasTo(n int32) func(*appsv1.StatefulSet) {
	return func(s *appsv1.StatefulSet) { s.Spec.Replicas = &n }
}

// A scale-in with the template change: processCondemned deletes the
// ordinals past spec.replicas, highest first, before any update (one per
// sync under OrderedReady, each gone before the next), then the rolling
// update goes on in the same step. Parallel deletes them at once.
func TestStatefulSetScaleInThenUpdate(t *testing.T) {
	for _, parallel := range []bool{false, true} {
		in := stsFixture(t, 5, 37, nil)
		replicasTo(3)(in.StatefulSet)
		if parallel {
			parallelPolicy(in.StatefulSet)
		}
		res, err := Predict(in)
		if err != nil {
			t.Fatal(err)
		}
		r := res.Rollout
		if r.Outcome != prediction.RolloutCompletes {
			t.Fatalf("parallel %v: %s %s", parallel, r.Outcome, r.Reason)
		}
		wantSteps(t, "deleted", deletedPerStep(r), [][]string{{"ns/web-4", "ns/web-3", "ns/web-2"}, {"ns/web-1"}, {"ns/web-0"}})
		wantSteps(t, "created", createdPerStep(r), [][]string{{"web-2"}, {"web-1"}, {"web-0"}})
		if r.Steps[0].AvailableMin != 2 || len(res.Victims) != 5 {
			t.Errorf("parallel %v: step 1 available %d, victims %v", parallel, r.Steps[0].AvailableMin, res.Victims)
		}
		// A bad release still loses the condemned pods and the first update.
		if f := r.IfNewPodsFail; len(f.Deleted) != 3 || f.AvailableMin != 2 {
			t.Errorf("parallel %v: ifNewPodsFail %+v", parallel, f)
		}
	}
}

// OrderedReady's scale-in waits on a condemned pod that is not Ready
// unless it is the first unhealthy one (the lowest such ordinal): web-4
// unready alone goes first; with web-3 unready too, web-4 blocks.
func TestStatefulSetScaleInUnhealthy(t *testing.T) {
	in := stsFixture(t, 5, 37, nil, replicasTo(3))
	unready(in, "web-4")
	r := predictSTS(t, in)
	if r.Outcome != prediction.RolloutCompletes || r.Steps[0].Deleted[0] != "ns/web-4" {
		t.Fatalf("%s %s: %v", r.Outcome, r.Reason, deletedPerStep(r))
	}
	unready(in, "web-3")
	r = predictSTS(t, in)
	if r.Outcome != prediction.RolloutStalls || len(r.Steps) != 0 || !strings.Contains(r.Reason, "web-4, past spec.replicas") || !strings.Contains(r.Unblock, "not recreated") {
		t.Fatalf("%s: %s / %s; %v", r.Outcome, r.Reason, r.Unblock, deletedPerStep(r))
	}
}

// A StatefulSet's restart recreates each pod alike after it is gone: a
// quota only delays the create, the answer stays certain. A manifest's
// template may ask for more: then the quota is named and the answer
// uncertain.
func TestStatefulSetQuota(t *testing.T) {
	in := stsFixture(t, 3, 37, nil)
	in.Quotas = []*corev1.ResourceQuota{{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns"},
		Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{corev1.ResourcePods: resource.MustParse("3")}}}}
	res, err := Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Certain || len(res.Warnings) != 0 {
		t.Errorf("restart under a quota: certain %v, warnings %q", res.Certain, res.Warnings)
	}
	in.Change.Kind = ChangeDesired
	if w := quotasUnmodelled(in, "ns", "StatefulSet", false); len(w) != 1 || !strings.Contains(w[0], "ResourceQuota q") {
		t.Errorf("a manifest's template under a quota: %q", w)
	}
}
