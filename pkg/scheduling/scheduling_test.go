package scheduling

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

func node(name, cpu string, unschedulable bool) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Unschedulable: unschedulable},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: resource.MustParse("110")}}}
}

func pod(name, nodeName, cpu string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: k8stypes.UID("uid-" + name)}, Spec: corev1.PodSpec{NodeName: nodeName,
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu)}}}}}}
}

// The FitError message is the scheduler's: a sorted histogram of reasons.
func TestPlaceFitError(t *testing.T) {
	nodes := []*corev1.Node{node("a", "2", true), node("b", "2", true), node("c", "1", false), node("d", "1", false), node("e", "1", false)}
	pods := []*corev1.Pod{pod("x", "c", "500m"), pod("y", "d", "500m"), pod("z", "e", "500m")}
	pl, err := Place(Input{Nodes: nodes, Pods: pods, Pod: pod("new", "", "1"), Rules: rules.Scheduler(rules.Newest, nil)})
	if err != nil {
		t.Fatal(err)
	}
	want := "0/5 nodes are available: 2 node(s) were unschedulable, 3 Insufficient cpu."
	if len(pl.Feasible) != 0 || pl.FitError != want {
		t.Fatalf("got %v %q, want %q", pl.Feasible, pl.FitError, want)
	}
	pl, _ = Place(Input{Nodes: nodes, Pods: pods, Pod: pod("new", "", "500m"), Rules: rules.Scheduler(rules.Newest, nil)})
	if len(pl.Feasible) != 3 || pl.FitError != "" {
		t.Fatalf("%+v", pl)
	}
}
