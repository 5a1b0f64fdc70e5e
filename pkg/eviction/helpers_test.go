package eviction

import (
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

var testNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func u(v int64) *uint64 { x := uint64(v); return &x }

const mi = 1 << 20

// testPod is a pod with a memory request (0: none) and limit.
func testPod(name string, prio int32, memReq, memLim int64) *v1.Pod {
	c := v1.Container{Name: "c"}
	if memReq > 0 {
		c.Resources.Requests = v1.ResourceList{v1.ResourceMemory: *resource.NewQuantity(memReq, resource.BinarySI)}
	}
	if memLim > 0 {
		c.Resources.Limits = v1.ResourceList{v1.ResourceMemory: *resource.NewQuantity(memLim, resource.BinarySI)}
	}
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec:   v1.PodSpec{NodeName: "n1", Priority: &prio, Containers: []v1.Container{c}},
		Status: v1.PodStatus{Phase: v1.PodRunning}}
}

type testNode struct {
	pods    []*v1.Pod
	summary *statsapi.Summary
}

// newTestNode has 4Gi of memory, available as given.
func newTestNode(avail int64) *testNode {
	ts := metav1.NewTime(testNow.Add(-10 * time.Second))
	capacity := int64(4096 * mi)
	return &testNode{summary: &statsapi.Summary{Node: statsapi.NodeStats{NodeName: "n1",
		Memory: &statsapi.MemoryStats{Time: ts, AvailableBytes: u(avail), WorkingSetBytes: u(capacity - avail)}}}}
}

func (n *testNode) add(p *v1.Pod, ws int64) {
	n.pods = append(n.pods, p)
	n.summary.Pods = append(n.summary.Pods, statsapi.PodStats{PodRef: statsapi.PodReference{Name: p.Name, Namespace: p.Namespace, UID: string(p.UID)},
		Memory: &statsapi.MemoryStats{WorkingSetBytes: u(ws)}})
}

func (n *testNode) input(t testing.TB, hard map[string]string) Input {
	t.Helper()
	r := rules.Defaults(37)
	if hard == nil {
		hard = DefaultEvictionHard(r.Kubelet)
	}
	cfg, err := ConfigFrom(&KubeletConfiguration{EvictionHard: hard}, r.Kubelet)
	if err != nil {
		t.Fatal(err)
	}
	return Input{Node: &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}, Pods: n.pods, Summary: n.summary, Config: cfg, Rules: r, Now: testNow}
}

func names(cs []Candidate) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprintf("%s:%d", c.Pod[len("default/"):], c.Step))
	}
	return fmt.Sprint(out)
}
