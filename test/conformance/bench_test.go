package conformance

import (
	"fmt"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kubernetes/pkg/controller"

	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/engine/enginetest"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

var benchNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// BenchmarkRealControllerSort is the bare sort the ReplicaSet controller
// runs (getPodsToDelete: sort.Sort(ActivePodsWithRanks)), on the same pods
// as BenchmarkEngine, so the ratio is measured in one run.
func BenchmarkRealControllerSort(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			if testing.Short() && n > 10000 {
				b.Skip("short mode")
			}
			pods, ranks, _ := enginetest.Fleet(n, 1, benchNow)
			work := make([]*corev1.Pod, n)
			wr := make([]int, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				copy(work, pods)
				copy(wr, ranks)
				sort.Sort(controller.ActivePodsWithRanks{Pods: work, Rank: wr, Now: metav1.NewTime(benchNow)})
			}
		})
	}
}

// BenchmarkEngine is the plugin's engine on the same pods: extraction,
// sort, open-outcome analysis with probabilities, explanations for every
// pod, and stableUntil; one deletion round of 400.
func BenchmarkEngine(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("pods=%d", n), func(b *testing.B) {
			if testing.Short() && n > 10000 {
				b.Skip("short mode")
			}
			pods, _, perNode := enginetest.Fleet(n, 1, benchNow)
			r := rules.Default()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				cands := make([]engine.Pod, n)
				for j, p := range pods {
					cands[j] = engine.FromPod(p)
				}
				in := engine.Input{Candidates: cands, Related: perNode, Delete: min(400, n/10), Now: benchNow, Rules: r, Seed: 1}
				engine.Predict(in)
				engine.StableUntil(in)
			}
		})
	}
}
