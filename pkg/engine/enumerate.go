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
	layer, ok := arrangements(c, keys, universe)
	if !ok {
		return nil, 0, false
	}
	counts = make([]int64, len(universe))
	for s, w := range layer {
		for i := 0; i < cut && i < len(universe); i++ {
			counts[arrangedAt(s, i)] += w
		}
		total += w
	}
	return counts, total, true
}

// arrangedAt is the universe position at place i of an arrangement.
func arrangedAt(s uint64, i int) int { return int(s>>(4*i)) & 0xf }

// arrangements follows insertion sort over every input order of universe
// and returns each final arrangement with the number of input orders that
// reach it.
func arrangements(c *Comparator, keys []key, universe []int) (map[uint64]int64, bool) {
	n := len(universe)
	if n > maxEnumerated || n == 0 {
		return nil, false
	}
	var less [maxEnumerated][maxEnumerated]bool
	for i, a := range universe {
		for j, b := range universe {
			less[i][j] = c.less(&keys[a], &keys[b])
		}
	}
	// A state is an arrangement of positions in universe, four bits per
	// element, the first in the lowest bits; its length is the step.
	at := arrangedAt
	layer := map[uint64]int64{0: 1}
	for t := 0; t < n; t++ {
		next := make(map[uint64]int64, len(layer)*2)
		for s, w := range layer {
			used := 0
			for i := 0; i < t; i++ {
				used |= 1 << at(s, i)
			}
			for x := 0; x < n; x++ {
				if used&(1<<x) != 0 {
					continue
				}
				// insertionSort: the new element moves left while it is
				// Less than its left neighbour.
				j := t
				for j > 0 && less[x][at(s, j-1)] {
					j--
				}
				low := s & (1<<(4*j) - 1)
				high := s &^ (1<<(4*j) - 1)
				next[low|uint64(x)<<(4*j)|high<<4] += w
			}
		}
		if len(next) > maxStates {
			return nil, false
		}
		layer = next
	}
	return layer, true
}
