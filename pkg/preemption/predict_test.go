package preemption

import (
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func node(name, cpu string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}}}
}

func pod(name, nodeName, cpu string, prio int32, started int) *corev1.Pod {
	st := metav1.NewTime(t0.Add(time.Duration(started) * time.Minute))
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name), Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{NodeName: nodeName, Priority: &prio, Containers: []corev1.Container{{Name: "c",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &st}}
}

func TestPredictPicksFewestPDBViolationsThenLowestPriority(t *testing.T) {
	pods := []*corev1.Pod{
		pod("a1", "n1", "3", 10, 1), pod("a2", "n1", "1", 5, 2),
		pod("b1", "n2", "3", 20, 1), pod("b2", "n2", "1", 1, 3),
		pod("c1", "n3", "4", 1, 1),
	}
	budget := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"},
		Spec:   policyv1.PodDisruptionBudgetSpec{MinAvailable: &intstr.IntOrString{IntVal: 1}, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "c1"}}},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0}}
	pre := pod("hi", "", "3", 100, 0)
	pre.Spec.NodeName = ""
	pre.Status = corev1.PodStatus{Phase: corev1.PodPending}
	res, err := Predict(Input{Nodes: []*corev1.Node{node("n1", "4"), node("n2", "4"), node("n3", "4")}, Pods: pods,
		PDBs: []*policyv1.PodDisruptionBudget{budget}, Preemptor: pre, Rules: rules.Scheduler(37, nil)})
	if err != nil {
		t.Fatal(err)
	}
	// n3 violates the budget; n1's highest victim has priority 10, n2's 20.
	if !res.Certain || res.Nominated() != "n1" {
		t.Fatalf("nominated %q certain %v (%v), want n1", res.Nominated(), res.Certain, res.Uncertain)
	}
	if v := res.Outcomes[0].Victims; len(v) != 1 || v[0].Pod.Name != "a1" {
		t.Fatalf("victims %+v, want a1 only (a2 is reprieved)", v)
	}
	if res.Separation == nil || res.Separation.RunnerUp != "n2" || res.Separation.Criterion != CriterionHighestPriority {
		t.Fatalf("separation %+v", res.Separation)
	}
}

func TestPreemptNeverIsNotEligible(t *testing.T) {
	never := corev1.PreemptNever
	pre := pod("hi", "", "3", 100, 0)
	pre.Spec.PreemptionPolicy = &never
	res, err := Predict(Input{Nodes: []*corev1.Node{node("n1", "4")}, Pods: []*corev1.Pod{pod("a", "n1", "3", 1, 1)}, Preemptor: pre, Rules: rules.Scheduler(37, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Eligible || len(res.Outcomes) != 0 {
		t.Fatalf("eligible %v outcomes %v", res.Eligible, res.Outcomes)
	}
}

func TestResolvePriority(t *testing.T) {
	never := corev1.PreemptNever
	classes := []*schedulingv1.PriorityClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "low"}, Value: 5, GlobalDefault: true},
		{ObjectMeta: metav1.ObjectMeta{Name: "lower"}, Value: 1, GlobalDefault: true},
		{ObjectMeta: metav1.ObjectMeta{Name: "batch"}, Value: 1000, PreemptionPolicy: &never},
	}
	p := &corev1.Pod{}
	if err := ResolvePriority(p, classes); err != nil || *p.Spec.Priority != 5 || p.Spec.PriorityClassName != "low" {
		t.Fatalf("default class: %v %v", err, p.Spec)
	}
	p = &corev1.Pod{Spec: corev1.PodSpec{PriorityClassName: "batch"}}
	if err := ResolvePriority(p, classes); err != nil || *p.Spec.Priority != 1000 || *p.Spec.PreemptionPolicy != never {
		t.Fatalf("batch: %v %v", err, p.Spec)
	}
	p = &corev1.Pod{Spec: corev1.PodSpec{PriorityClassName: "nope"}}
	if err := ResolvePriority(p, classes); !errors.Is(err, ErrUnknownPriorityClass) {
		t.Fatalf("unknown class: %v", err)
	}
	p = &corev1.Pod{Spec: corev1.PodSpec{PriorityClassName: "system-node-critical"}}
	if err := ResolvePriority(p, nil); err != nil || *p.Spec.Priority != 2000001000 {
		t.Fatalf("system class: %v", err)
	}
}

func TestCriteriaNamesMatchTheContract(t *testing.T) {
	if !slices.Equal(criteria[:], prediction.PreemptionCriteria) {
		t.Fatalf("criteria %v, contract %v", criteria, prediction.PreemptionCriteria)
	}
}

// Version switches: a terminating lower-priority pod on the nominated node
// blocks a new preemption in 1.26 whatever its conditions; from 1.27 only
// when the scheduler's DisruptionTarget condition marks it.
func TestTerminatingVictimBlocksByVersion(t *testing.T) {
	pods := []*corev1.Pod{pod("a", "n1", "3", 1, 1), pod("b", "n1", "1", 1, 2)}
	now := metav1.NewTime(t0)
	pods[1].DeletionTimestamp = &now // deleted by someone else: no DisruptionTarget
	pre := pod("hi", "", "3", 100, 0)
	pre.Status = corev1.PodStatus{Phase: corev1.PodPending, NominatedNodeName: "n1"}
	for _, c := range []struct {
		minor    int
		eligible bool
	}{{26, false}, {27, true}, {37, true}} {
		res, err := Predict(Input{Nodes: []*corev1.Node{node("n1", "4")}, Pods: pods, Preemptor: pre, Rules: rules.Scheduler(c.minor, nil)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Eligible != c.eligible {
			t.Errorf("1.%d: eligible %v (%s), want %v", c.minor, res.Eligible, res.Reason, c.eligible)
		}
	}
	pods[1].Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonPreemptionByScheduler}}
	res, _ := Predict(Input{Nodes: []*corev1.Node{node("n1", "4")}, Pods: pods, Preemptor: pre, Rules: rules.Scheduler(37, nil)})
	if res.Eligible {
		t.Errorf("1.37 with the scheduler's DisruptionTarget: eligible")
	}
}

// From 1.34 a request above the node's whole allocatable rules the node out
// before the dry run; before, the dry run fails there. Either way it is no
// candidate, for a different reason.
func TestRequestAboveAllocatableByVersion(t *testing.T) {
	pre := pod("hi", "", "8", 100, 0)
	pre.Status = corev1.PodStatus{Phase: corev1.PodPending}
	for _, c := range []struct {
		minor     int
		potential int
		reason    string
	}{{33, 1, "does not fit even with all lower-priority pods removed: Insufficient cpu"}, {34, 0, "Insufficient cpu"}} {
		res, err := Predict(Input{Nodes: []*corev1.Node{node("n1", "4")}, Pods: []*corev1.Pod{pod("a", "n1", "3", 1, 1)}, Preemptor: pre, Rules: rules.Scheduler(c.minor, nil)})
		if err != nil {
			t.Fatal(err)
		}
		if res.PotentialNodes != c.potential || res.Excluded["n1"] != c.reason || len(res.Outcomes) != 0 {
			t.Errorf("1.%d: potential %d excluded %q outcomes %d", c.minor, res.PotentialNodes, res.Excluded["n1"], len(res.Outcomes))
		}
	}
}

// The scheduler's NodeInfo keeps used host ports as a set: removing one of
// two pods declaring the same port frees it (seen in the real scheduler).
func TestHostPortFreedByOneOfTwo(t *testing.T) {
	withPort := func(p *corev1.Pod) *corev1.Pod {
		p.Spec.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: corev1.ProtocolTCP}}
		return p
	}
	pods := []*corev1.Pod{withPort(pod("keep", "n1", "1", 1000, 1)), withPort(pod("go", "n1", "1", 1, 2))}
	pre := withPort(pod("hi", "", "1", 100, 0))
	pre.Status = corev1.PodStatus{Phase: corev1.PodPending}
	res, err := Predict(Input{Nodes: []*corev1.Node{node("n1", "4")}, Pods: pods, Preemptor: pre, Rules: rules.Scheduler(37, nil)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Nominated() != "n1" || len(res.Outcomes[0].Victims) != 1 || res.Outcomes[0].Victims[0].Pod.Name != "go" {
		t.Fatalf("outcomes %+v (%s)", res.Outcomes, res.Reason)
	}
}

// Past 100 potential nodes the random offset decides which are tried: the
// outcomes' probabilities add up to 1 and the answer is uncertain.
func TestSampledCandidatesGiveProbabilities(t *testing.T) {
	res, err := Predict(benchCluster(150))
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, o := range res.Outcomes {
		sum += o.Probability
	}
	if res.Certain || res.Tried != 100 || res.PotentialNodes != 150 || sum < 0.999 || sum > 1.001 {
		t.Fatalf("certain %v tried %d of %d, probabilities sum to %v", res.Certain, res.Tried, res.PotentialNodes, sum)
	}
}

// Before 1.29 a node's PDB-violating victims came first and criterion 2
// read the first victim's priority; from 1.29 the victims are sorted again.
func TestHighestVictimPriorityBefore129ReadsFirstVictim(t *testing.T) {
	inBudget := func(p *corev1.Pod) *corev1.Pod { p.Labels["budget"] = "b"; return p }
	pods := []*corev1.Pod{
		inBudget(pod("v1", "n1", "2", 5, 1)), pod("w1", "n1", "2", 50, 1),
		inBudget(pod("v2", "n2", "2", 20, 1)), pod("x2", "n2", "2", 20, 1),
	}
	budget := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "b", Namespace: "default"},
		Spec:   policyv1.PodDisruptionBudgetSpec{MinAvailable: &intstr.IntOrString{IntVal: 1}, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"budget": "b"}}},
		Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: 0}}
	for _, tc := range []struct {
		minor int
		want  string
	}{{28, "n1"}, {29, "n2"}} {
		pre := pod("hi", "", "4", 100, 0)
		pre.Status = corev1.PodStatus{Phase: corev1.PodPending}
		res, err := Predict(Input{Nodes: []*corev1.Node{node("n1", "4"), node("n2", "4")}, Pods: pods,
			PDBs: []*policyv1.PodDisruptionBudget{budget}, Preemptor: pre, Rules: rules.Scheduler(tc.minor, nil)})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Certain || res.Nominated() != tc.want || res.Separation == nil || res.Separation.Criterion != CriterionHighestPriority {
			t.Errorf("1.%d: nominated %q certain %v separation %+v, want %s by %s", tc.minor, res.Nominated(), res.Certain, res.Separation, tc.want, CriterionHighestPriority)
		}
	}
}

// Before 1.24 a topology domain with one node matching the pod's node
// selector counted the matching pods of all its nodes.
func TestSpreadCountsWholeDomainBefore124(t *testing.T) {
	zoned := func(n *corev1.Node, zone string, ssd bool) *corev1.Node {
		n.Labels[corev1.LabelTopologyZone] = zone
		if ssd {
			n.Labels["disk"] = "ssd"
		}
		return n
	}
	nodes := []*corev1.Node{zoned(node("a", "4"), "za", true), zoned(node("b", "4"), "za", false), zoned(node("c", "4"), "zb", true)}
	var pods []*corev1.Pod
	for _, name := range []string{"db1", "db2", "db3"} {
		p := pod(name, "b", "1", 0, 1)
		p.Labels["app"] = "db"
		pods = append(pods, p)
	}
	for _, tc := range []struct {
		minor int
		want  []string
	}{{23, []string{"c"}}, {24, []string{"a", "c"}}} {
		pre := pod("hi", "", "1", 100, 0)
		pre.Labels["app"] = "db"
		pre.Status = corev1.PodStatus{Phase: corev1.PodPending}
		pre.Spec.NodeSelector = map[string]string{"disk": "ssd"}
		pre.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone,
			WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}
		res, err := Predict(Input{Nodes: nodes, Pods: pods, Preemptor: pre, Rules: rules.Scheduler(tc.minor, nil)})
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Sorted(slices.Values(res.FitsOn)); !slices.Equal(got, tc.want) {
			t.Errorf("1.%d: fits on %v, want %v", tc.minor, got, tc.want)
		}
	}
}
