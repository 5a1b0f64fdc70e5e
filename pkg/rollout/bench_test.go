package rollout

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// A 2,000-pod Deployment at 25%/25% over 100 nodes, restarted.
func BenchmarkRollout2000(b *testing.B) {
	var nodes []*corev1.Node
	for i := range 100 {
		nodes = append(nodes, node(fmt.Sprintf("n%03d", i), "64"))
	}
	in := fixture(2000, "25%", "25%", nodes...)
	b.ResetTimer()
	for range b.N {
		if _, err := Predict(in); err != nil {
			b.Fatal(err)
		}
	}
}
