package engine

import (
	"cmp"
	"slices"
)

// arrange puts idx, given in name order, into the order a round shows:
// the classes (pods equal under outerCmp, between which the comparator is
// consistent) in order, and inside each class the order Go's sort.Sort
// with the controller's comparator leaves when given the class in name
// order. The result depends only on the pods, not on how they were listed,
// and a class's order only on its own members, so a later round can sort
// just what it needs and still agree with sorting everything.
//
// With full false only the classes up to the one at position d are
// arranged and the rest follow in name order: enough for a round whose
// survivors are not shown. It returns how many leading pods are arranged.
func arrange(c *Comparator, keys []key, idx []int, d int, full bool, sc *scratch) int {
	outer := func(a, b int) int { return outerCmp(c, &keys[a], &keys[b]) }
	sorted := idx
	if !full && d < len(idx) {
		// The pods up to the cut's class, found in linear time.
		sel := sc.ints(&sc.sel, len(idx))
		copy(sel, idx)
		pivot := selectKth(sel, d, outer)
		head := make([]int, 0, d+1)
		tail := sc.ints(&sc.tail, len(idx)-d)[:0]
		for _, k := range idx {
			if outer(k, pivot) <= 0 {
				head = append(head, k)
			} else {
				tail = append(tail, k)
			}
		}
		copy(idx, head)
		copy(idx[len(head):], tail)
		sorted = idx[:len(head)]
	}
	slices.SortStableFunc(sorted, outer)
	for lo := 0; lo < len(sorted); {
		hi := lo + 1
		for hi < len(sorted) && outer(sorted[lo], sorted[hi]) == 0 {
			hi++
		}
		if hi-lo > 1 {
			// sort.Sort's moves (see sortTrials), without interface calls.
			slices.SortFunc(sorted[lo:hi], func(a, b int) int { return lessCmp(c.less(&keys[a], &keys[b])) })
		}
		lo = hi
	}
	return len(sorted)
}

// selectKth returns the element at position k of s sorted by cmpf,
// reordering s: three-way quickselect, median-of-three pivots, and a plain
// sort for short or stubborn ranges.
func selectKth(s []int, k int, cmpf func(a, b int) int) int {
	lo, hi := 0, len(s)
	for rounds := 0; hi-lo > 16 && rounds < 64; rounds++ {
		a, b, m := s[lo], s[hi-1], s[lo+(hi-lo)/2]
		if cmpf(a, m) > 0 {
			a, m = m, a
		}
		if cmpf(m, b) > 0 {
			m = b
			if cmpf(a, m) > 0 {
				m = a
			}
		}
		p := m
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch r := cmpf(s[i], p); {
			case r < 0:
				s[lt], s[i] = s[i], s[lt]
				lt++
				i++
			case r > 0:
				gt--
				s[i], s[gt] = s[gt], s[i]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return s[k]
		}
	}
	slices.SortFunc(s[lo:hi], cmpf)
	return s[k]
}

// maxTable bounds the universes whose comparisons are tabled (16 million
// bits, 2 MiB, at most).
const maxTable = 4096

// lessTable is the comparator's Less over keys as bits: bit i*n+j says
// keys[i] goes before keys[j]. The comparator is antisymmetric
// (TestOneComparator), so one comparison gives both orders of a pair.
func lessTable(c *Comparator, keys []key) []uint64 {
	n := len(keys)
	bits := make([]uint64, (n*n+63)/64)
	set := func(x int) { bits[x>>6] |= 1 << (x & 63) }
	for i := range keys {
		for j := i + 1; j < n; j++ {
			switch r, _, _ := c.cmp(&keys[i], &keys[j]); {
			case r < 0:
				set(i*n + j)
			case r > 0:
				set(j*n + i)
			}
		}
	}
	return bits
}

// rankedKeys copies universe's keys, in its order, with their UIDs ranked
// (uidRank), so that comparing them compares no strings.
func rankedKeys(keys []key, universe []int) []key {
	out := make([]key, len(universe))
	byUID := make([]int, len(universe))
	for i, k := range universe {
		out[i] = keys[k]
		byUID[i] = i
	}
	slices.SortFunc(byUID, func(a, b int) int { return cmp.Compare(out[a].uid, out[b].uid) })
	rank := int32(0)
	for i, x := range byUID {
		if i == 0 || out[x].uid != out[byUID[i-1]].uid {
			rank++
		}
		out[x].uidRank = rank
	}
	return out
}
