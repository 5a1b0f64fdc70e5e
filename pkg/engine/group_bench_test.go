package engine

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// BenchmarkSmallGroup compares, for an intransitive group of 8 pods, the
// exact count over every input order with the 2,000 sampled sorts the
// simulation would otherwise run.
func BenchmarkSmallGroup(b *testing.B) {
	c := &Comparator{Rules: rules.Default(), Now: now}
	keys := intransitiveKeys(rand.New(rand.NewPCG(8, 8)), c, 8)
	universe := []int{0, 1, 2, 3, 4, 5, 6, 7}
	b.Run("enumerated", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, _, ok := enumerate(c, keys, universe, 4); !ok {
				b.Fatal("not enumerated")
			}
		}
	})
	b.Run("sampled-2000", func(b *testing.B) {
		rng := rand.New(rand.NewPCG(1, 1))
		work := make([]int, len(universe))
		for i := 0; i < b.N; i++ {
			for range 2000 {
				copy(work, universe)
				rng.Shuffle(len(work), func(i, j int) { work[i], work[j] = work[j], work[i] })
				sort.Sort(&sorter{c: c, keys: keys, idx: work})
			}
		}
	})
}
