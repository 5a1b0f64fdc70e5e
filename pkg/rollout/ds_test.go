package rollout

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

// dsFixture: DaemonSet "agent" (1 CPU per pod) with one available old pod
// on each node; surge and unavail as the strategy ("" leaves it unset).
func dsFixture(t *testing.T, minor int, surge, unavail string, nodes ...*corev1.Node) Input {
	t.Helper()
	labels := map[string]string{"app": "agent"}
	tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "agent", Image: "v1",
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}}}}
	ru := &appsv1.RollingUpdateDaemonSet{}
	if surge != "" {
		v := intstr.Parse(surge)
		ru.MaxSurge = &v
	}
	if unavail != "" {
		v := intstr.Parse(unavail)
		ru.MaxUnavailable = &v
	}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns", UID: "ds-uid"},
		Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl,
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType, RollingUpdate: ru}}}
	rs, err := rules.For(minor, nil)
	if err != nil {
		t.Fatal(err)
	}
	in := Input{DaemonSet: ds, Nodes: nodes, Change: Change{Kind: ChangeRestart}, Rules: rs, Scheduler: rules.Scheduler(minor, nil), Now: now,
		Workloads: disruption.Workloads{DaemonSets: []*appsv1.DaemonSet{ds}}}
	for _, n := range nodes {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "agent-" + n.Name, Namespace: "ns", UID: types.UID("u-" + n.Name),
			Labels:          map[string]string{"app": "agent", appsv1.DefaultDaemonSetUniqueLabelKey: "old"},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(ds, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))}},
			Spec: *tmpl.Spec.DeepCopy(), Status: corev1.PodStatus{Phase: corev1.PodRunning,
				Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(now.Add(-time.Hour))}}}}
		p.Spec.NodeName = n.Name
		in.Pods = append(in.Pods, p)
	}
	return in
}

func dsNodes(cpus ...string) []*corev1.Node {
	var out []*corev1.Node
	for i, c := range cpus {
		out = append(out, node(fmt.Sprintf("n%d", i+1), c))
	}
	return out
}

func predictDS(t *testing.T, in Input) *Result {
	t.Helper()
	res, err := Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func counts(r prediction.Rollout) (deleted, created []int) {
	for _, s := range r.Steps {
		deleted, created = append(deleted, len(s.Deleted)), append(created, len(s.Created))
	}
	return deleted, created
}

func wantCounts(t *testing.T, r prediction.Rollout, deleted, created string) {
	t.Helper()
	d, c := counts(r)
	if fmt.Sprint(d) != deleted || fmt.Sprint(c) != created {
		t.Errorf("deleted per step %v, created %v; want %s and %s", d, c, deleted, created)
	}
}

// maxSurge 0: maxUnavailable resolved against desiredNumberScheduled and
// rounded up (UnavailableCount: GetScaledValueFromIntOrPercent(.., true));
// both 0 makes it 1 (updatedDesiredNodeCounts). Each step deletes k of the
// old pods left, a set Go map order picks: the first step's is a contender
// group with k of n, and the answer is uncertain.
func TestDaemonSetMaxUnavailable(t *testing.T) {
	for _, c := range []struct {
		unavail, surge  string
		deleted, groups string
	}{
		{"", "", "[1 1 1]", "1 of 3, 1 of 2"}, // the API server's default: 1
		{"34%", "", "[2 1]", "2 of 3"},        // 1.02 rounds up to 2
		{"50%", "", "[2 1]", "2 of 3"},
		{"100%", "", "[3]", ""},
		{"0", "0", "[1 1 1]", "1 of 3, 1 of 2"},
		{"0%", "0%", "[1 1 1]", "1 of 3, 1 of 2"},
	} {
		in := dsFixture(t, 37, c.surge, c.unavail, dsNodes("4", "4", "4")...)
		res := predictDS(t, in)
		r := res.Rollout
		d, _ := counts(r)
		var groups []string
		for _, g := range res.Contenders {
			groups = append(groups, fmt.Sprintf("%d of %d", g.Delete, len(g.Pods)))
		}
		if fmt.Sprint(d) != c.deleted || strings.Join(groups, ", ") != c.groups || r.Outcome != prediction.RolloutCompletes || len(res.Victims) != 3 {
			t.Errorf("maxUnavailable %q: deleted %v, groups %v, outcome %s, victims %v", c.unavail, d, groups, r.Outcome, res.Victims)
		}
		if res.Certain != (c.groups == "") || r.Steps[0].Certain != (c.groups == "") {
			t.Errorf("maxUnavailable %q: certain %v, step 1 certain %v", c.unavail, res.Certain, r.Steps[0].Certain)
		}
		if c.groups != "" && !strings.Contains(r.Steps[0].Why[0], "Go map order") {
			t.Errorf("why %v", r.Steps[0].Why)
		}
	}
}

// An old pod that is already unavailable is replaced whatever the budget;
// from 1.28 it counts against maxUnavailable (numUnavailable++), before
// it did not, so an available old pod went with it.
func TestDaemonSetUnavailableOldPod(t *testing.T) {
	for _, c := range []struct {
		minor   int
		deleted string
	}{{37, "[1 1 1]"}, {28, "[1 1 1]"}, {27, "[2 1]"}, {21, "[2 1]"}} {
		in := dsFixture(t, c.minor, "", "1", dsNodes("4", "4", "4")...)
		in.Pods[1].Status.Conditions[0].Status = corev1.ConditionFalse
		r := predictDS(t, in).Rollout
		d, _ := counts(r)
		if fmt.Sprint(d) != c.deleted || r.Steps[0].Deleted[0] != "ns/agent-n2" || !strings.Contains(r.Steps[0].Why[0], "already unavailable") {
			t.Errorf("1.%d: deleted %v (%v), want %s with ns/agent-n2 first", c.minor, d, deletedPerStep(r), c.deleted)
		}
	}
	// In 1.37 the unavailable pod is the only deletion of step 1: certain.
	in := dsFixture(t, 37, "", "1", dsNodes("4", "4", "4")...)
	in.Pods[1].Status.Conditions[0].Status = corev1.ConditionFalse
	if r := predictDS(t, in).Rollout; !r.Steps[0].Certain || r.Steps[0].AvailableMin != 2 {
		t.Errorf("step 1 %+v", r.Steps[0])
	}
}

// maxSurge: a new pod beside up to maxSurge old ones (rounded up); each
// old pod goes once the new pod on its node is available, in the sync
// that creates the next ones. Availability never drops.
func TestDaemonSetSurge(t *testing.T) {
	in := dsFixture(t, 37, "1", "0", dsNodes("4", "4", "4")...)
	res := predictDS(t, in)
	r := res.Rollout
	wantCounts(t, r, "[0 1 1 1]", "[1 1 1 0]")
	for i, st := range r.Steps {
		if st.AvailableMin != 3 {
			t.Errorf("step %d availableMin %d", i+1, st.AvailableMin)
		}
	}
	if r.Outcome != prediction.RolloutCompletes || res.Certain || len(res.Contenders) != 2 || !strings.Contains(res.Contenders[0].Reason, "creates new pods beside 1 of these 3") {
		t.Errorf("outcome %s certain %v contenders %+v", r.Outcome, res.Certain, res.Contenders)
	}
	// The old pod deleted in step 2 is the one beside step 1's new pod.
	if node := r.Steps[0].Created[0].Node; r.Steps[1].Deleted[0] != "ns/agent-"+node {
		t.Errorf("step 1 created on %s, step 2 deleted %v", node, r.Steps[1].Deleted)
	}
	if f := r.IfNewPodsFail; len(f.Deleted) != 0 || f.AvailableMin != 3 {
		t.Errorf("a bad release under maxSurge deletes nothing: %+v", f)
	}
	// 50% of 3 rounds up to 2 (SurgeCount); 100% is determined.
	wantCounts(t, predictDS(t, dsFixture(t, 37, "50%", "0", dsNodes("4", "4", "4")...)).Rollout, "[0 2 1]", "[2 1 0]")
	all := predictDS(t, dsFixture(t, 37, "100%", "0", dsNodes("4", "4", "4")...))
	wantCounts(t, all.Rollout, "[0 3]", "[3 0]")
	if !all.Certain || len(all.Contenders) != 0 {
		t.Errorf("maxSurge 100%%: certain %v contenders %v", all.Certain, all.Contenders)
	}
}

// Before 1.22 the DaemonSetUpdateSurge gate is off: SurgeCount is 0, so
// maxSurge is ignored and maxUnavailable (here 0) falls back to 1.
func TestDaemonSetSurgeGate(t *testing.T) {
	res := predictDS(t, dsFixture(t, 21, "1", "0", dsNodes("4", "4")...))
	wantCounts(t, res.Rollout, "[1 1]", "[1 1]")
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "DaemonSetUpdateSurge gate is off") {
		t.Errorf("warnings %v", res.Warnings)
	}
	in := dsFixture(t, 21, "1", "0", dsNodes("4", "4")...)
	in.Rules, _ = rules.For(21, map[string]bool{rules.DaemonSetUpdateSurge: true})
	wantCounts(t, predictDS(t, in).Rollout, "[0 1 1]", "[1 1 0]")
}

// A node with room for one pod: with maxSurge the new pod cannot fit
// beside the old one, which keeps its resources until the new one is
// available, so it never is: it holds a surge slot for good. With
// maxSurge 2 the other nodes finish (victims determined: all but that
// node's); with maxSurge 1 the stall comes when map order reaches it.
func TestDaemonSetSurgeTightNode(t *testing.T) {
	res := predictDS(t, dsFixture(t, 37, "2", "0", dsNodes("4", "1.5", "4")...))
	r := res.Rollout
	if r.Outcome != prediction.RolloutStalls || strings.Join(r.Remaining, ",") != "ns/agent-n2" || !strings.Contains(r.Reason, "node n2 fits nowhere beside the old pod") ||
		!strings.Contains(r.Unblock, "n2") {
		t.Fatalf("outcome %s remaining %v reason %q unblock %q", r.Outcome, r.Remaining, r.Reason, r.Unblock)
	}
	nowhere := 0
	for _, st := range r.Steps {
		for _, c := range st.Created {
			if c.Node == "" && strings.Contains(c.Reason, "Insufficient cpu") {
				nowhere++
			}
		}
	}
	if nowhere != 1 || len(res.Victims) != 2 {
		t.Errorf("fits nowhere %d, victims %v", nowhere, res.Victims)
	}
	one := predictDS(t, dsFixture(t, 37, "1", "0", dsNodes("4", "1.5", "4")...))
	if one.Rollout.Outcome != prediction.RolloutStalls || one.Certain || !strings.Contains(one.Rollout.Reason, "Go map order") {
		t.Errorf("maxSurge 1: %s certain %v %q", one.Rollout.Outcome, one.Certain, one.Rollout.Reason)
	}
}

// With maxSurge 0 the same node takes its new pod once the old one is
// gone (the scheduler retries after its grace period).
func TestDaemonSetTightNodeMaxUnavailable(t *testing.T) {
	r := predictDS(t, dsFixture(t, 37, "0", "100%", dsNodes("4", "1.5")...)).Rollout
	if r.Outcome != prediction.RolloutCompletes || len(r.Steps) != 1 {
		t.Fatalf("%s in %d steps", r.Outcome, len(r.Steps))
	}
	for _, c := range r.Steps[0].Created {
		if c.Node == "n2" && !strings.Contains(c.Reason, "once the old pod is gone") {
			t.Errorf("n2: %+v", c)
		}
	}
}

// OnDelete starts nothing; a new pod that never becomes Ready stops the
// update after maxUnavailable deletions.
func TestDaemonSetOnDeleteAndBadRelease(t *testing.T) {
	in := dsFixture(t, 37, "", "", dsNodes("4", "4")...)
	in.DaemonSet.Spec.UpdateStrategy = appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}
	if r := predictDS(t, in).Rollout; r.Outcome != prediction.RolloutNotStarted || len(r.Steps) != 0 || !strings.Contains(r.Reason, "OnDelete") {
		t.Errorf("OnDelete: %s %q", r.Outcome, r.Reason)
	}
	f := predictDS(t, dsFixture(t, 37, "", "2", dsNodes("4", "4", "4", "4")...)).Rollout.IfNewPodsFail
	if len(f.Deleted) != 2 || f.AvailableMin != 2 {
		t.Errorf("bad release: %+v", f)
	}
}

// A rollout never asks the Eviction API: minAvailable 3 of 4 breaks with
// maxUnavailable 2.
func TestDaemonSetBudget(t *testing.T) {
	in := dsFixture(t, 37, "", "2", dsNodes("4", "4", "4", "4")...)
	three := intstr.FromInt32(3)
	in.PDBs = []*policyv1.PodDisruptionBudget{{ObjectMeta: metav1.ObjectMeta{Name: "agent", Namespace: "ns"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &three, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "agent"}}}}}
	r := predictDS(t, in).Rollout
	for i, st := range r.Steps {
		if len(st.Budgets) != 1 || st.Budgets[0].DesiredHealthy != 3 || st.Budgets[0].CurrentHealthyMin != 2 || !st.Budgets[0].Violated {
			t.Errorf("step %d budgets %+v", i+1, st.Budgets)
		}
	}
}

// --image back to an earlier template: the controller reuses that
// ControllerRevision, so pods still at its hash are new. Without
// ControllerRevisions in the input that is unknown: uncertain.
func TestDaemonSetImageRevisions(t *testing.T) {
	in := dsFixture(t, 37, "", "1", dsNodes("4", "4", "4")...)
	in.Change = Change{Kind: ChangeImage, Images: map[string]string{"agent": "v0"}}
	older := in.DaemonSet.Spec.Template.DeepCopy()
	older.Spec.Containers[0].Image = "v0"
	raw, _ := json.Marshal(map[string]any{"spec": map[string]any{"template": older}})
	in.Revisions = []*appsv1.ControllerRevision{{ObjectMeta: metav1.ObjectMeta{Name: "agent-v0", Namespace: "ns",
		Labels:          map[string]string{appsv1.DefaultDaemonSetUniqueLabelKey: "v0hash"},
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(in.DaemonSet, appsv1.SchemeGroupVersion.WithKind("DaemonSet"))}},
		Data: runtime.RawExtension{Raw: raw}, Revision: 1}}
	in.RevisionsRead = true
	in.Pods[2].Labels[appsv1.DefaultDaemonSetUniqueLabelKey] = "v0hash"
	res := predictDS(t, in)
	if fmt.Sprint(res.Victims) != "[ns/agent-n1 ns/agent-n2]" || len(res.Rollout.Steps) != 2 {
		t.Errorf("victims %v in %d steps", res.Victims, len(res.Rollout.Steps))
	}
	in.Revisions, in.RevisionsRead = nil, false
	res = predictDS(t, in)
	if len(res.Victims) != 3 || res.Certain || !strings.Contains(strings.Join(res.Warnings, "\n"), "no ControllerRevisions") {
		t.Errorf("without revisions: victims %v certain %v warnings %v", res.Victims, res.Certain, res.Warnings)
	}
}

// A malformed or negative budget is refused as the API server refuses it.
func TestDaemonSetBadStrategy(t *testing.T) {
	for _, v := range []string{"-1", "ten%", "x"} {
		_, err := Predict(dsFixture(t, 37, v, "1", dsNodes("4")...))
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), "maxSurge") {
			t.Errorf("maxSurge %q: %v", v, err)
		}
	}
}

// nodeShouldRunDaemonPod: an untolerated NoSchedule taint or a node
// selector leaves a node out of desiredNumberScheduled; a cordoned node
// stays in (the daemon pods tolerate node.kubernetes.io/unschedulable).
func TestDaemonSetNodesThatRunIt(t *testing.T) {
	nodes := dsNodes("4", "4", "4", "4")
	nodes[0].Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "gpu", Effect: corev1.TaintEffectNoSchedule}}
	nodes[1].Spec.Unschedulable = true
	nodes[1].Spec.Taints = []corev1.Taint{{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}}
	nodes[3].Labels = map[string]string{"pool": "batch"}
	in := dsFixture(t, 37, "", "100%", nodes...)
	in.DaemonSet.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "pool", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"batch"}}}}}}}}
	in.Pods = in.Pods[1:3] // the pods of n2 and n3
	none := dsFixture(t, 37, "", "1", dsNodes("4")...)
	none.DaemonSet.Spec.Template.Spec.NodeSelector = map[string]string{"pool": "none"}
	none.Pods = nil
	if r := predictDS(t, none).Rollout; r.Outcome != prediction.RolloutNotStarted || !strings.Contains(r.Reason, "no node") {
		t.Errorf("no node qualifies: %s %q", r.Outcome, r.Reason)
	}
	res := predictDS(t, in)
	if fmt.Sprint(deletedPerStep(res.Rollout)) != "[[ns/agent-n2 ns/agent-n3]]" || res.Rollout.Outcome != prediction.RolloutCompletes || !res.Certain {
		t.Errorf("steps %v outcome %s certain %v warnings %v", deletedPerStep(res.Rollout), res.Rollout.Outcome, res.Certain, res.Warnings)
	}
}

// Up to 8 nodes the controller's map is one group read from a random one
// of 8 slots onwards: the nodes added first are favoured, so no chance is
// given. From 9 the keys sit where a seeded hash puts them: k/n each.
func TestDaemonSetMapOrderChances(t *testing.T) {
	for _, c := range []struct {
		nodes int
		exact bool
		words string
	}{{8, false, "chances not weighed"}, {9, true, "chance 11% each"}} {
		var cpus []string
		for range c.nodes {
			cpus = append(cpus, "4")
		}
		res := predictDS(t, dsFixture(t, 37, "", "1", dsNodes(cpus...)...))
		g := res.Contenders[0]
		if g.Exact != c.exact || len(g.Pods) != c.nodes || g.Delete != 1 || !strings.Contains(g.Reason, c.words) || !strings.Contains(res.Rollout.Steps[0].Why[0], c.words) {
			t.Errorf("%d nodes: %+v, why %q", c.nodes, g, res.Rollout.Steps[0].Why[0])
		}
	}
}

// A ResourceQuota that charges pods is not modelled for a DaemonSet's
// update: where surge pods come on top of the old ones the answer says so
// and is uncertain; a restart without surge replaces each pod by one alike
// after it is gone, and a quota on other objects charges nothing.
func TestDaemonSetQuotaUncertain(t *testing.T) {
	for _, c := range []struct {
		hard           corev1.ResourceName
		surge, unavail string
		certain        bool
	}{
		{corev1.ResourcePods, "2", "0", false},
		{corev1.ResourceRequestsCPU, "2", "0", false},
		{"count/configmaps", "2", "0", true},
		{corev1.ResourcePods, "", "2", true},
	} {
		in := dsFixture(t, 37, c.surge, c.unavail, dsNodes("4", "4")...) // both nodes in one step: certain without a quota
		in.Quotas = []*corev1.ResourceQuota{{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "ns"},
			Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{c.hard: resource.MustParse("100")}}}}
		res := predictDS(t, in)
		warned := strings.Contains(strings.Join(res.Warnings, "\n"), "ResourceQuota q")
		if res.Certain != c.certain || warned == c.certain {
			t.Errorf("%s surge %q: certain %v (want %v), warnings %q", c.hard, c.surge, res.Certain, c.certain, res.Warnings)
		}
	}
}
