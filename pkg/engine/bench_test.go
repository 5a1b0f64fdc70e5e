package engine_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/engine/enginetest"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

var benchNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// BenchmarkPredict is the whole engine: extraction, ranks, sort, the
// analysis of open outcomes with probabilities, explanations, and
// stableUntil, for one deletion round (400 pods, under the 500 burst).
func BenchmarkPredict(b *testing.B) { benchPredict(b, func(n int) int { return min(400, n/10) }) }

// BenchmarkPredictRounds deletes 10%: past 500 the controller works in
// rounds of 500, each re-ranked and re-sorted, and so does the engine.
func BenchmarkPredictRounds(b *testing.B) { benchPredict(b, func(n int) int { return n / 10 }) }

func benchPredict(b *testing.B, deleteOf func(int) int) {
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
				cands := make([]engine.Pod, len(pods))
				for j, p := range pods {
					cands[j] = engine.FromPod(p)
				}
				in := engine.Input{Candidates: cands, Related: perNode, Delete: deleteOf(n), Now: benchNow, Rules: r, Seed: 1}
				res := engine.Predict(in)
				engine.StableUntil(in)
				if res.Victims != deleteOf(n) {
					b.Fatal(res.Victims)
				}
			}
		})
	}
}
