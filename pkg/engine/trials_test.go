package engine

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// TestSortTrialsMatchPlainSorts: sortTrials (positions, a table of
// answers) deletes exactly the pods, trial by trial, that the first
// version's loop did (sort.Sort over the keys themselves, from the same
// generator), for random intransitive universes in a shuffled key order,
// on both sides of maxTable.
func TestSortTrialsMatchPlainSorts(t *testing.T) {
	c := &Comparator{Rules: rules.Default(), Now: now}
	rng := rand.New(rand.NewPCG(18, 3))
	for it := range 40 {
		n := 2 + rng.IntN(300)
		switch it % 10 {
		case 8:
			n = 1000 + rng.IntN(maxTable-1000) // a large table
		case 9:
			n = maxTable + 1 + rng.IntN(40)
		}
		keys := intransitiveKeys(rng, c, n+5)
		universe := rng.Perm(n + 5)[:n] // not every key, in no particular order
		cut := 1 + rng.IntN(n)
		trials := 1 + rng.IntN(100)
		if n >= 1000 {
			trials = 3
		}
		seed := rng.Uint64()

		var want [][]int
		ref := rand.New(rand.NewPCG(seed, 1))
		work := make([]int, n)
		for range trials {
			copy(work, universe)
			ref.Shuffle(n, func(i, j int) { work[i], work[j] = work[j], work[i] })
			sort.Sort(&sorter{c: c, keys: keys, idx: work})
			want = append(want, slices.Clone(work[:cut]))
		}

		var got [][]int
		var cur []int
		sortTrials(c, keys, universe, cut, trials, rand.New(rand.NewPCG(seed, 1)),
			func(pos int) { cur = append(cur, universe[pos]) },
			func() { got, cur = append(got, cur), nil })
		if len(got) != len(want) {
			t.Fatalf("iteration %d: %d trials, want %d", it, len(got), len(want))
		}
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("iteration %d (n=%d cut=%d), trial %d: took %v, want %v", it, n, cut, i, got[i], want[i])
			}
		}
	}
}

// TestSortFuncMovesLikeSortSort: the trials rely on slices.SortFunc making
// sort.Sort's moves when it is given Less as a comparison. Random Less
// tables (far from transitive, so the pivots go wrong and the fallbacks
// run) and random input orders, over small and large sizes.
func TestSortFuncMovesLikeSortSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 4))
	for it := range 600 {
		n := rng.IntN(16)
		switch it % 3 {
		case 1:
			n = 16 + rng.IntN(100)
		case 2:
			n = 100 + rng.IntN(1500)
		}
		less := make([]bool, n*n)
		p := rng.Float64()
		for i := range less {
			less[i] = rng.Float64() < p
		}
		a := rng.Perm(n)
		b := slices.Clone(a)
		sort.Sort(&tableOrder{n: n, less: less, idx: a})
		slices.SortFunc(b, func(x, y int) int { return lessCmp(less[x*n+y]) })
		if !slices.Equal(a, b) {
			t.Fatalf("iteration %d, n=%d: slices.SortFunc and sort.Sort differ", it, n)
		}
	}
}

// TestTableSortMovesLikeSortSort: sortTable, the copy of slices.SortFunc
// that reads a bit table, makes sort.Sort's moves on random Less tables
// and input orders (as TestSortFuncMovesLikeSortSort), and so does the
// inline shuffle rng.Shuffle's.
func TestTableSortMovesLikeSortSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 5))
	for it := range 900 {
		n := rng.IntN(16)
		switch it % 3 {
		case 1:
			n = 16 + rng.IntN(100)
		case 2:
			n = 100 + rng.IntN(1500)
		}
		less := make([]bool, n*n)
		table := &bitTable{bits: make([]uint64, (n*n+63)/64), n: n}
		p := rng.Float64()
		if it%4 == 0 {
			p = 0.5 // many cycles
		}
		for i := range less {
			if rng.Float64() < p {
				less[i] = true
				table.bits[i>>6] |= 1 << (i & 63)
			}
		}
		a := rng.Perm(n)
		b := slices.Clone(a)
		sort.Sort(&tableOrder{n: n, less: less, idx: a})
		sortTable(b, table)
		if !slices.Equal(a, b) {
			t.Fatalf("iteration %d, n=%d: sortTable and sort.Sort differ", it, n)
		}
	}
	r1, r2 := rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		a, b := firstN(n), firstN(n)
		r1.Shuffle(n, func(i, j int) { a[i], a[j] = a[j], a[i] })
		for i := n - 1; i > 0; i-- {
			j := int(r2.Uint64N(uint64(i + 1)))
			b[i], b[j] = b[j], b[i]
		}
		if !slices.Equal(a, b) {
			t.Fatalf("n=%d: the inline shuffle differs from rng.Shuffle", n)
		}
	}
}

type tableOrder struct {
	n    int
	less []bool
	idx  []int
}

func (s *tableOrder) Len() int           { return len(s.idx) }
func (s *tableOrder) Swap(i, j int)      { s.idx[i], s.idx[j] = s.idx[j], s.idx[i] }
func (s *tableOrder) Less(i, j int) bool { return s.less[s.idx[i]*s.n+s.idx[j]] }

// TestSortFuncLeavesSortedInput: analyze skips sorting pods that are
// already in name order, relying on pdqsort moving nothing in a
// non-decreasing input, repeated names included.
func TestSortFuncLeavesSortedInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 7))
	for it := range 300 {
		n := rng.IntN(3000)
		vals := make([]int, n)
		for i := range vals {
			vals[i] = rng.IntN(1 + n/(1+it%5))
		}
		slices.Sort(vals)
		idx := firstN(n)
		slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(vals[a], vals[b]) })
		if !slices.Equal(idx, firstN(n)) {
			t.Fatalf("iteration %d: a sorted input of %d was moved", it, n)
		}
	}
}
