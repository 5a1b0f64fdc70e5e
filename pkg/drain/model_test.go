package drain

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func onlyNode(t *testing.T, r *Result) NodeResult {
	t.Helper()
	if len(r.Nodes) != 1 {
		t.Fatalf("nodes: %+v", r.Nodes)
	}
	return r.Nodes[0]
}

func action(n NodeResult, pod string) PodResult {
	for _, p := range n.Pods {
		if p.Pod == "default/"+pod {
			return p
		}
	}
	return PodResult{}
}

// kubectl's pre-checks: a bare pod needs --force, emptyDir needs
// --delete-emptydir-data, a DaemonSet pod --ignore-daemonsets; each
// refusal names the flag, and the other pods stay.
func TestRefusedNamesTheFlag(t *testing.T) {
	cases := []struct {
		name, flag string
		setup      func(w *world)
		allow      func(o *Options)
	}{
		{"bare", "--force", func(w *world) { w.pod("bare", "n1", nil, "", true) }, func(o *Options) { o.Force = true }},
		{"emptydir", "--delete-emptydir-data", func(w *world) {
			p := w.pod("scratch", "n1", w.rs("scratch", 1, "100m"), "ReplicaSet", true)
			p.Spec.Volumes = []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		}, func(o *Options) { o.DeleteEmptyDirData = true }},
		{"daemonset", "--ignore-daemonsets", func(w *world) {
			ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "logs", UID: "uid-logs"}}
			w.in.Workloads.DaemonSets = append(w.in.Workloads.DaemonSets, ds)
			w.pod("logs-a", "n1", ds, "DaemonSet", true)
		}, func(o *Options) { o.IgnoreDaemonSets = true }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(node("n1", "4"), node("n2", "4"))
			w.in.Options.IgnoreDaemonSets = false
			w.pod("web-a", "n1", w.rs("web", 1, "100m"), "ReplicaSet", true)
			tc.setup(w)
			n := onlyNode(t, w.predict("n1"))
			if n.Outcome != OutcomeRefused || !strings.Contains(n.Reason, tc.flag) || len(n.Evicted) != 0 || len(n.Remaining) != 2 {
				t.Fatalf("%+v", n)
			}
			tc.allow(&w.in.Options)
			n = onlyNode(t, w.predict("n1"))
			if n.Outcome != OutcomeDrained {
				t.Fatalf("with %s: %+v", tc.flag, n)
			}
		})
	}
}

func TestBarePodIsNotReplacedAndMirrorSkipped(t *testing.T) {
	w := newWorld(node("n1", "4"), node("n2", "4"))
	w.in.Options.Force = true
	w.pod("bare", "n1", nil, "", true)
	m := w.pod("static", "n1", nil, "", true)
	m.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "x"}
	r := w.predict("n1")
	n := onlyNode(t, r)
	if !slices.Equal(n.Evicted, []string{"default/bare"}) || !slices.Equal(n.Skipped, []string{"default/static"}) || len(r.Replacements) != 0 {
		t.Fatalf("%+v %+v", n, r.Replacements)
	}
}

// Two budgets over one pod: the Eviction API answers 500 and kubectl gives
// that pod up; the others go, and the node is blocked.
func TestTwoBudgetsBlock(t *testing.T) {
	w := newWorld(node("n1", "4"), node("n2", "4"))
	w.pod("web-a", "n1", w.rs("web", 2, "100m"), "ReplicaSet", true)
	w.pod("web-b", "n2", w.in.Workloads.ReplicaSets[0], "ReplicaSet", true)
	w.pod("other", "n1", w.rs("other", 1, "100m"), "ReplicaSet", true)
	w.pdb("web", nil, intOr(1))
	b := w.pdb("web", nil, intOr(1)).DeepCopy()
	b.Name = "web-too"
	w.in.PDBs = append(w.in.PDBs, b)
	n := onlyNode(t, w.predict("n1"))
	if n.Outcome != OutcomeBlocked || !slices.Equal(n.Remaining, []string{"default/web-a"}) || !slices.Equal(n.Evicted, []string{"default/other"}) {
		t.Fatalf("%+v", n)
	}
	if a := action(n, "web-a"); !strings.Contains(a.Why, "500") || !strings.Contains(a.Why, "leave one PodDisruptionBudget") {
		t.Errorf("%+v", a)
	}
}

// minAvailable equal to the replicas never allows a disruption; with no
// --timeout kubectl waits forever and never reaches the next node.
func TestBudgetThatNeverAllowsStopsTheCommand(t *testing.T) {
	w := newWorld(node("n1", "4"), node("n2", "4"), node("n3", "4"))
	web := w.rs("web", 2, "100m")
	w.pod("web-a", "n1", web, "ReplicaSet", true)
	w.pod("web-b", "n3", web, "ReplicaSet", true)
	w.pod("x", "n2", w.rs("x", 1, "100m"), "ReplicaSet", true)
	w.pdb("web", intOr(2), nil)
	r := w.predict("n1", "n2")
	if r.Nodes[0].Outcome != OutcomeBlocked || !strings.Contains(action(r.Nodes[0], "web-a").Why, "never allows a disruption") {
		t.Fatalf("n1: %+v", r.Nodes[0])
	}
	if n2 := r.Nodes[1]; n2.Outcome != OutcomeBlocked || !strings.Contains(n2.Reason, "never reached") || !slices.Equal(n2.Remaining, []string{"default/x"}) {
		t.Fatalf("n2: %+v", n2)
	}
	w.in.Options.Timeout = 30e9
	r = w.predict("n1", "n2")
	if r.Nodes[1].Outcome != OutcomeDrained {
		t.Fatalf("with --timeout, n2: %+v", r.Nodes[1])
	}
}

// An unready pod under a budget that is not healthy waits under
// IfHealthyBudget and goes at once under AlwaysAllow.
func TestUnhealthyPodEvictionPolicy(t *testing.T) {
	w := newWorld(node("n1", "4"), node("n2", "4"))
	web := w.rs("web", 2, "100m")
	w.pod("web-a", "n1", web, "ReplicaSet", false)
	w.pod("web-b", "n2", web, "ReplicaSet", false)
	b := w.pdb("web", intOr(1), nil)
	w.in.Options.Timeout = 30e9
	n := onlyNode(t, w.predict("n1"))
	if n.Outcome != OutcomeBlocked || !strings.Contains(action(n, "web-a").Why, "unhealthyPodEvictionPolicy: AlwaysAllow") {
		t.Fatalf("IfHealthyBudget: %+v", n)
	}
	always := policyv1.AlwaysAllow
	b.Spec.UnhealthyPodEvictionPolicy = &always
	n = onlyNode(t, w.predict("n1"))
	if n.Outcome != OutcomeDrained || action(n, "web-a").Action != ActionEvicted {
		t.Fatalf("AlwaysAllow: %+v", n)
	}
}

func TestDisableEvictionBreaksBudgets(t *testing.T) {
	w := newWorld(node("n1", "4"), node("n2", "4"))
	web := w.rs("web", 2, "100m")
	w.pod("web-a", "n1", web, "ReplicaSet", true)
	w.pod("web-b", "n2", web, "ReplicaSet", true)
	w.pdb("web", intOr(2), nil)
	w.in.Options.DisableEviction = true
	w.in.Options.GracePeriodSeconds = 5
	r := w.predict("n1")
	n := onlyNode(t, r)
	if n.Outcome != OutcomeDrained || n.Pods[0].Action != ActionDeleted || n.Pods[0].GracePeriodSeconds != 5 {
		t.Fatalf("%+v", n)
	}
	if len(r.BrokenBudgets) != 1 || !strings.Contains(r.BrokenBudgets[0], "healthy 1 < 2") {
		t.Fatalf("%v", r.BrokenBudgets)
	}
}

// A StatefulSet pod is recreated under its own name once it is gone.
func TestStatefulSetReplacedByName(t *testing.T) {
	w := newWorld(node("n1", "4"), node("n2", "4"))
	r3 := int32(1)
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "db", UID: types.UID("uid-db")},
		Spec: appsv1.StatefulSetSpec{Replicas: &r3, Template: podTemplate("db", "1")}}
	w.in.Workloads.StatefulSets = append(w.in.Workloads.StatefulSets, sts)
	w.pod("db-0", "n1", sts, "StatefulSet", true)
	r := w.predict("n1")
	if len(r.Replacements) != 1 || r.Replacements[0].Node != "n2" || r.Replacements[0].For != "default/db-0" || !r.Replacements[0].Certain {
		t.Fatalf("%+v", r.Replacements)
	}
}

// A pod whose owner is missing from the input makes the node uncertain.
func TestMissingOwnerIsUncertain(t *testing.T) {
	w := newWorld(node("n1", "4"), node("n2", "4"))
	w.pod("web-a", "n1", w.rs("web", 1, "100m"), "ReplicaSet", true)
	w.in.Workloads.ReplicaSets = nil
	w.in.OwnersRead = map[string]bool{}
	r := w.predict("n1")
	if r.Certain || r.Nodes[0].Certain || len(r.Replacements) != 1 || r.Replacements[0].Certain {
		t.Fatalf("%+v %+v", r.Nodes[0], r.Replacements)
	}
}

// A budget without status waits for the controller's first sync and the
// answer says the status was computed.
func TestBudgetWithoutStatus(t *testing.T) {
	w := newWorld(node("n1", "4"), node("n2", "4"))
	web := w.rs("web", 2, "100m")
	w.pod("web-a", "n1", web, "ReplicaSet", true)
	w.pod("web-b", "n2", web, "ReplicaSet", true)
	b := w.pdb("web", intOr(1), nil)
	b.Status, b.Generation = policyv1.PodDisruptionBudgetStatus{}, 0
	r := w.predict("n1")
	n := onlyNode(t, r)
	if n.Outcome != OutcomeDrained || n.Certain || !strings.Contains(strings.Join(r.Uncertain, " "), "has no status") {
		t.Fatalf("%+v %v", n, r.Uncertain)
	}
}

// Finished pods are deleted without a budget check and not replaced.
func TestFinishedPod(t *testing.T) {
	w := newWorld(node("n1", "4"), node("n2", "4"))
	p := w.pod("done", "n1", w.rs("web", 1, "100m"), "ReplicaSet", false)
	p.Status.Phase = corev1.PodSucceeded
	r := w.predict("n1")
	if n := onlyNode(t, r); n.Outcome != OutcomeDrained || len(r.Replacements) != 0 || !strings.Contains(n.Pods[0].Why, "Succeeded") {
		t.Fatalf("%+v %+v", n, r.Replacements)
	}
}

// When a later replacement's room depends on where an earlier one went,
// the answer is uncertain.
func TestPlacementThatMattersIsUncertain(t *testing.T) {
	w := newWorld(node("n1", "4"), node("a", "1"), node("b", "2"))
	small := w.rs("small", 1, "1")
	big := w.rs("big", 1, "2")
	w.pod("a-small", "n1", small, "ReplicaSet", true) // fits on a or b
	w.pod("b-big", "n1", big, "ReplicaSet", true)     // fits only on b
	r := w.predict("n1")
	if r.Certain {
		t.Fatalf("certain: %+v", r.Replacements)
	}
}

// The scheduler's likeliest choice (least allocated) can differ from the
// first and the last feasible node; any difference in what gets scheduled
// makes the answer uncertain.
func TestLeastAllocatedChoiceIsUncertain(t *testing.T) {
	w := newWorld(node("n1", "8"), node("a", "2"), node("b", "2"), node("c", "2"))
	filler := w.rs("filler", 2, "1")
	w.pod("fill-a", "a", filler, "ReplicaSet", true)
	w.pod("fill-c", "c", filler, "ReplicaSet", true)
	w.pod("x-1", "n1", w.rs("x", 1, "1"), "ReplicaSet", true)
	w.pod("y-1", "n1", w.rs("y", 1, "2"), "ReplicaSet", true)
	r := w.predict("n1")
	if r.Replacements[0].Node != "b" || r.Replacements[1].Node != "" || r.Certain || r.Replacements[1].Certain {
		t.Fatalf("%+v certain=%v", r.Replacements, r.Certain)
	}
}

// A ReplicaSet that already has fewer replicas wanted than pods (an old
// ReplicaSet of a rollout, scaled to 0) replaces nothing.
func TestScaledDownReplicaSetReplacesNothing(t *testing.T) {
	w := newWorld(node("n1", "4"), node("n2", "4"))
	w.pod("old-a", "n1", w.rs("old", 0, "100m"), "ReplicaSet", true)
	r := w.predict("n1")
	if onlyNode(t, r).Outcome != OutcomeDrained || len(r.Replacements) != 0 {
		t.Fatalf("%+v", r.Replacements)
	}
}

// kubectl retries a 429 every 5 s: four pods under maxUnavailable 1 need
// three retries, which a 10 s --timeout does not leave; a retry that takes
// half the timeout is uncertain.
func TestTimeoutEndsTheRetries(t *testing.T) {
	w := newWorld(node("n1", "8"), node("n2", "8"))
	web := w.rs("web", 4, "100m")
	for _, n := range []string{"a", "b", "c", "d"} {
		w.pod("web-"+n, "n1", web, "ReplicaSet", true)
	}
	w.pdb("web", nil, intOr(1))
	w.in.Options.Timeout = 10e9
	n := onlyNode(t, w.predict("n1"))
	if n.Outcome != OutcomeBlocked || len(n.Evicted) != 3 || n.Certain || !strings.Contains(action(n, "web-d").Why, "--timeout=10s ends first") {
		t.Fatalf("%+v", n)
	}
	w.in.Options.Timeout = 0
	if n := onlyNode(t, w.predict("n1")); n.Outcome != OutcomeDrained || !n.Certain {
		t.Fatalf("no timeout: %+v", n)
	}
}
