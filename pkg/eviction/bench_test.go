package eviction

import (
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// benchNode is a 250-pod node under memory pressure: ten kinds of pod
// (replicas of the same Deployment are exact ties), some over their
// requests, three priorities, a few critical pods.
func benchNode(b *testing.B) Input {
	n := newTestNode(20 * mi)
	n.summary.Node.Memory.WorkingSetBytes = u(64 << 30)
	n.summary.Node.Memory.AvailableBytes = u(20 * mi)
	for i := range 250 {
		kind := i % 10
		p := testPod(fmt.Sprintf("app%d-%03d", kind, i), int32(kind%3)*1000, int64(kind*64)*mi, 0)
		if kind == 9 {
			prio := int32(2000001000)
			p.Spec.Priority = &prio
		}
		if p.Spec.Containers[0].Resources.Requests == nil {
			p.Spec.Containers[0].Resources.Requests = v1.ResourceList{}
		}
		p.Spec.Containers[0].Resources.Requests[v1.ResourceEphemeralStorage] = *resource.NewQuantity(1<<30, resource.BinarySI)
		n.add(p, int64(100+kind*20)*mi)
	}
	return n.input(b, map[string]string{"memory.available": "2Gi"})
}

// BenchmarkPredict250 is the node preview's model on 250 pods (the lead
// measures the time; the budget is 100 ms for the whole command).
func BenchmarkPredict250(b *testing.B) {
	in := benchNode(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Predict(in); err != nil {
			b.Fatal(err)
		}
	}
}
