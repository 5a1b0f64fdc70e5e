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
