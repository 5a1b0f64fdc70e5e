// Code below is Go 1.26's slices/zsortanyfunc.go (pdqsort, the unstable
// part), copied with its comparison fixed to a bit table so that the
// sampled sorts call no function per comparison. It must make exactly the
// moves slices.SortFunc and sort.Sort make (TestTableSortMovesLikeSortSort).
//
// Copyright 2022 The Go Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file of the Go distribution.

package engine

import "math/bits"

// bitTable answers Less(a, b) for positions a, b < n from bit a*n+b.
type bitTable struct {
	bits []uint64
	n    int
}

func (t *bitTable) less(a, b int) bool {
	x := a*t.n + b
	return t.bits[x>>6]>>(x&63)&1 != 0
}

// sortTable sorts data (positions) as slices.SortFunc would with t.less
// as cmp(a, b) < 0.
func sortTable(data []int, t *bitTable) {
	n := len(data)
	pdqsortTable(data, 0, n, bits.Len(uint(n)), t)
}

type sortedHint int // hint for pdqsort when choosing the pivot

const (
	unknownHint sortedHint = iota
	increasingHint
	decreasingHint
)

// xorshift paper: https://www.jstatsoft.org/article/view/v008i14/xorshift.pdf
type xorshift uint64

func (r *xorshift) Next() uint64 {
	*r ^= *r << 13
	*r ^= *r >> 7
	*r ^= *r << 17
	return uint64(*r)
}

func nextPowerOfTwo(length int) uint {
	return 1 << bits.Len(uint(length))
}

func insertionSortTable(data []int, a, b int, t *bitTable) {
	for i := a + 1; i < b; i++ {
		for j := i; j > a && (t.less(data[j], data[j-1])); j-- {
			data[j], data[j-1] = data[j-1], data[j]
		}
	}
}

// siftDownTable implements the heap property on data[lo:hi].
// first is an offset into the array where the root of the heap lies.
func siftDownTable(data []int, lo, hi, first int, t *bitTable) {
	root := lo
	for {
		child := 2*root + 1
		if child >= hi {
			break
		}
		if child+1 < hi && (t.less(data[first+child], data[first+child+1])) {
			child++
		}
		if !(t.less(data[first+root], data[first+child])) {
			return
		}
		data[first+root], data[first+child] = data[first+child], data[first+root]
		root = child
	}
}

func heapSortTable(data []int, a, b int, t *bitTable) {
	first := a
	lo := 0
	hi := b - a

	// Build heap with greatest element at top.
	for i := (hi - 1) / 2; i >= 0; i-- {
		siftDownTable(data, i, hi, first, t)
	}

	// Pop elements, largest first, into end of data.
	for i := hi - 1; i >= 0; i-- {
		data[first], data[first+i] = data[first+i], data[first]
		siftDownTable(data, lo, i, first, t)
	}
}

// pdqsortTable sorts data[a:b].
// The algorithm based on pattern-defeating quicksort(pdqsort), but without the optimizations from BlockQuicksort.
// pdqsort paper: https://arxiv.org/pdf/2106.05123.pdf
// C++ implementation: https://github.com/orlp/pdqsort
// Rust implementation: https://docs.rs/pdqsort/latest/pdqsort/
// limit is the number of allowed bad (very unbalanced) pivots before falling back to heapsort.
func pdqsortTable(data []int, a, b, limit int, t *bitTable) {
	const maxInsertion = 12

	var (
		wasBalanced    = true // whether the last partitioning was reasonably balanced
		wasPartitioned = true // whether the slice was already partitioned
	)

	for {
		length := b - a

		if length <= maxInsertion {
			insertionSortTable(data, a, b, t)
			return
		}

		// Fall back to heapsort if too many bad choices were made.
		if limit == 0 {
			heapSortTable(data, a, b, t)
			return
		}

		// If the last partitioning was imbalanced, we need to breaking patterns.
		if !wasBalanced {
			breakPatternsTable(data, a, b, t)
			limit--
		}

		pivot, hint := choosePivotTable(data, a, b, t)
		if hint == decreasingHint {
			reverseRangeTable(data, a, b, t)
			// The chosen pivot was pivot-a elements after the start of the array.
			// After reversing it is pivot-a elements before the end of the array.
			// The idea came from Rust's implementation.
			pivot = (b - 1) - (pivot - a)
			hint = increasingHint
		}

		// The slice is likely already sorted.
		if wasBalanced && wasPartitioned && hint == increasingHint {
			if partialInsertionSortTable(data, a, b, t) {
				return
			}
		}

		// Probably the slice contains many duplicate elements, partition the slice into
		// elements equal to and elements greater than the pivot.
		if a > 0 && !(t.less(data[a-1], data[pivot])) {
			mid := partitionEqualTable(data, a, b, pivot, t)
			a = mid
			continue
		}

		mid, alreadyPartitioned := partitionTable(data, a, b, pivot, t)
		wasPartitioned = alreadyPartitioned

		leftLen, rightLen := mid-a, b-mid
		balanceThreshold := length / 8
		if leftLen < rightLen {
			wasBalanced = leftLen >= balanceThreshold
			pdqsortTable(data, a, mid, limit, t)
			a = mid + 1
		} else {
			wasBalanced = rightLen >= balanceThreshold
			pdqsortTable(data, mid+1, b, limit, t)
			b = mid
		}
	}
}

// partitionTable does one quicksort partition.
// Let p = data[pivot]
// Moves elements in data[a:b] around, so that data[i]<p and data[j]>=p for i<newpivot and j>newpivot.
// On return, data[newpivot] = p
func partitionTable(data []int, a, b, pivot int, t *bitTable) (newpivot int, alreadyPartitioned bool) {
	data[a], data[pivot] = data[pivot], data[a]
	i, j := a+1, b-1 // i and j are inclusive of the elements remaining to be partitioned

	for i <= j && (t.less(data[i], data[a])) {
		i++
	}
	for i <= j && !(t.less(data[j], data[a])) {
		j--
	}
	if i > j {
		data[j], data[a] = data[a], data[j]
		return j, true
	}
	data[i], data[j] = data[j], data[i]
	i++
	j--

	for {
		for i <= j && (t.less(data[i], data[a])) {
			i++
		}
		for i <= j && !(t.less(data[j], data[a])) {
			j--
		}
		if i > j {
			break
		}
		data[i], data[j] = data[j], data[i]
		i++
		j--
	}
	data[j], data[a] = data[a], data[j]
	return j, false
}

// partitionEqualTable partitions data[a:b] into elements equal to data[pivot] followed by elements greater than data[pivot].
// It assumed that data[a:b] does not contain elements smaller than the data[pivot].
func partitionEqualTable(data []int, a, b, pivot int, t *bitTable) (newpivot int) {
	data[a], data[pivot] = data[pivot], data[a]
	i, j := a+1, b-1 // i and j are inclusive of the elements remaining to be partitioned

	for {
		for i <= j && !(t.less(data[a], data[i])) {
			i++
		}
		for i <= j && (t.less(data[a], data[j])) {
			j--
		}
		if i > j {
			break
		}
		data[i], data[j] = data[j], data[i]
		i++
		j--
	}
	return i
}

// partialInsertionSortTable partially sorts a slice, returns true if the slice is sorted at the end.
func partialInsertionSortTable(data []int, a, b int, t *bitTable) bool {
	const (
		maxSteps         = 5  // maximum number of adjacent out-of-order pairs that will get shifted
		shortestShifting = 50 // don't shift any elements on short arrays
	)
	i := a + 1
	for j := 0; j < maxSteps; j++ {
		for i < b && !(t.less(data[i], data[i-1])) {
			i++
		}

		if i == b {
			return true
		}

		if b-a < shortestShifting {
			return false
		}

		data[i], data[i-1] = data[i-1], data[i]

		// Shift the smaller one to the left.
		if i-a >= 2 {
			for j := i - 1; j >= 1; j-- {
				if !(t.less(data[j], data[j-1])) {
					break
				}
				data[j], data[j-1] = data[j-1], data[j]
			}
		}
		// Shift the greater one to the right.
		if b-i >= 2 {
			for j := i + 1; j < b; j++ {
				if !(t.less(data[j], data[j-1])) {
					break
				}
				data[j], data[j-1] = data[j-1], data[j]
			}
		}
	}
	return false
}

// breakPatternsTable scatters some elements around in an attempt to break some patterns
// that might cause imbalanced partitions in quicksort.
func breakPatternsTable(data []int, a, b int, t *bitTable) {
	length := b - a
	if length >= 8 {
		random := xorshift(length)
		modulus := nextPowerOfTwo(length)

		for idx := a + (length/4)*2 - 1; idx <= a+(length/4)*2+1; idx++ {
			other := int(uint(random.Next()) & (modulus - 1))
			if other >= length {
				other -= length
			}
			data[idx], data[a+other] = data[a+other], data[idx]
		}
	}
}

// choosePivotTable chooses a pivot in data[a:b].
//
// [0,8): chooses a static pivot.
// [8,shortestNinther): uses the simple median-of-three method.
// [shortestNinther,∞): uses the Tukey ninther method.
func choosePivotTable(data []int, a, b int, t *bitTable) (pivot int, hint sortedHint) {
	const (
		shortestNinther = 50
		maxSwaps        = 4 * 3
	)

	l := b - a

	var (
		swaps int
		i     = a + l/4*1
		j     = a + l/4*2
		k     = a + l/4*3
	)

	if l >= 8 {
		if l >= shortestNinther {
			// Tukey ninther method, the idea came from Rust's implementation.
			i = medianAdjacentTable(data, i, &swaps, t)
			j = medianAdjacentTable(data, j, &swaps, t)
			k = medianAdjacentTable(data, k, &swaps, t)
		}
		// Find the median among i, j, k and stores it into j.
		j = medianTable(data, i, j, k, &swaps, t)
	}

	switch swaps {
	case 0:
		return j, increasingHint
	case maxSwaps:
		return j, decreasingHint
	default:
		return j, unknownHint
	}
}

// order2Table returns x,y where data[x] <= data[y], where x,y=a,b or x,y=b,a.
func order2Table(data []int, a, b int, swaps *int, t *bitTable) (int, int) {
	if t.less(data[b], data[a]) {
		*swaps++
		return b, a
	}
	return a, b
}

// medianTable returns x where data[x] is the median of data[a],data[b],data[c], where x is a, b, or c.
func medianTable(data []int, a, b, c int, swaps *int, t *bitTable) int {
	a, b = order2Table(data, a, b, swaps, t)
	b, _ = order2Table(data, b, c, swaps, t)
	_, b = order2Table(data, a, b, swaps, t)
	return b
}

// medianAdjacentTable finds the median of data[a - 1], data[a], data[a + 1] and stores the index into a.
func medianAdjacentTable(data []int, a int, swaps *int, t *bitTable) int {
	return medianTable(data, a-1, a, a+1, swaps, t)
}

func reverseRangeTable(data []int, a, b int, t *bitTable) {
	i := a
	j := b - 1
	for i < j {
		data[i], data[j] = data[j], data[i]
		i++
		j--
	}
}
