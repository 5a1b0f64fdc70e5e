package engine

// maxEnumerated is the largest universe enumerated exactly: Go's sort.Sort
// sorts up to 12 elements by insertion sort alone, so for such a universe
// the outcome of every input order can be followed exactly.
const maxEnumerated = 12

// maxStates bounds the arrangements followed per step; comparators that
// are far from transitive can make them many, and then sampling is used.
const maxStates = 1 << 15

// enumerate counts, over all len(universe)! input orders, how often each
// element of universe ends in the first cut positions after sort.Sort with
// the controller's comparator. It follows insertion sort one inserted
// element at a time: after t steps the state is the arrangement of the t
// elements taken so far, and orders that reach the same arrangement are
// merged, so a nearly consistent comparator keeps the states few. counts
// are per position in universe; total is len(universe)!. ok is false when
// the universe is too large or the states too many.
func enumerate(c *Comparator, keys []key, universe []int, cut int) (counts []int64, total int64, ok bool) {
	layer, _, ok := enumLayer(c, keys, universe)
	if !ok {
		return nil, 0, false
	}
	counts, total = cutCounts(layer, len(universe), cut)
	return counts, total, true
}

// slot is element i of an arrangement: four bits per element, the first in
// the lowest bits.
func slot(s uint64, i int) int { return int(s>>(4*i)) & 0xf }

// enumLayer follows insertion sort over every input order of universe and
// returns the final arrangements with how many input orders reach each,
// and the insertions it followed (its cost).
func enumLayer(c *Comparator, keys []key, universe []int) (layer map[uint64]int64, steps int, ok bool) {
	n := len(universe)
	if n > maxEnumerated || n == 0 {
		return nil, 0, false
	}
	var less [maxEnumerated][maxEnumerated]bool
	for i, a := range universe {
		for j, b := range universe {
			less[i][j] = c.less(&keys[a], &keys[b])
		}
	}
	// A state is an arrangement of positions in universe; its length is
	// the step.
	layer = map[uint64]int64{0: 1}
	for t := 0; t < n; t++ {
		steps += len(layer) * (n - t)
		next := make(map[uint64]int64, len(layer)*2)
		for s, w := range layer {
			used := 0
			for i := 0; i < t; i++ {
				used |= 1 << slot(s, i)
			}
			for x := 0; x < n; x++ {
				if used&(1<<x) != 0 {
					continue
				}
				// insertionSort: the new element moves left while it is
				// Less than its left neighbour.
				j := t
				for j > 0 && less[x][slot(s, j-1)] {
					j--
				}
				low := s & (1<<(4*j) - 1)
				high := s &^ (1<<(4*j) - 1)
				next[low|uint64(x)<<(4*j)|high<<4] += w
			}
		}
		if len(next) > maxStates {
			return nil, steps, false
		}
		layer = next
	}
	return layer, steps, true
}

// cutCounts counts, per position in universe, the input orders that end
// with it among the first cut.
func cutCounts(layer map[uint64]int64, n, cut int) (counts []int64, total int64) {
	counts = make([]int64, n)
	for s, w := range layer {
		for i := 0; i < cut && i < n; i++ {
			counts[slot(s, i)] += w
		}
		total += w
	}
	return counts, total
}

// cutSets is the joint outcome: how many input orders end with each set
// of universe positions (a bit mask) among the first cut.
func cutSets(layer map[uint64]int64, n, cut int) map[uint16]int64 {
	sets := map[uint16]int64{}
	for s, w := range layer {
		var set uint16
		for i := 0; i < cut && i < n; i++ {
			set |= 1 << slot(s, i)
		}
		sets[set] += w
	}
	return sets
}
