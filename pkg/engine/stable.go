package engine

import (
	"container/heap"
	"slices"
	"strings"
	"time"
)

// maxStableChecks bounds how many future bucket crossings StableUntil
// evaluates; past that it reports the last crossing checked, a lower bound.
const maxStableChecks = 256

// neverHorizon: crossings further away than this are not worth reporting.
const neverHorizon = 10 * 365 * 24 * time.Hour

// StableUntil finds the first moment after in.Now at which a pod's ready or
// creation age crosses a power-of-two boundary that changes the outcome of
// the first deletion round. It returns nil when no age-based rule can change
// it: linear time comparison, nothing to sort, or a cut that rules 1-5
// decide. lowerBound is true when the search stopped at its limit.
func StableUntil(in Input) (until *time.Time, lowerBound bool) {
	if !in.Rules.LogScale || in.Delete <= 0 {
		return nil, false
	}
	d := min(in.Delete, in.burst())
	if d >= len(in.Candidates) {
		return nil, false
	}
	class, before := cutClass(in, d)
	if class == nil {
		return nil, false
	}
	// class is a copy: the search's Predicts may rank it in place.
	sub := Input{Candidates: class, Delete: d - before, Rules: in.Rules, Burst: in.burst(), FatesOnly: true, owned: true}
	return firstChange(sub, in.Now)
}

// cutClass is the class (pods rules 1-5 cannot separate) that the cut at d
// falls in, and how many pods go before it; nil when rules 1-5 decide the
// cut. Only that class can change with time. It selects instead of
// sorting, so the class comes in the candidates' order rather than the
// sort's; that order does not matter while the class's names are unique
// (firstChange orders by name), else the sort's is kept.
func cutClass(in Input, d int) (class []Pod, before int) {
	c := &Comparator{Rules: in.Rules, Now: in.Now}
	keys := make([]key, len(in.Candidates))
	idx := make([]int, len(in.Candidates))
	for i := range in.Candidates {
		keys[i], idx[i] = c.keyOf(&in.Candidates[i]), i
		keys[i].rank = in.Related[in.Candidates[i].Node]
	}
	outer := func(a, b int) int { return c.consistentCmp(&keys[a], &keys[b], Colocation) }
	pivot := selectKth(slices.Clone(idx), d, outer)
	names := map[string]bool{}
	for i := range in.Candidates {
		switch r := outer(i, pivot); {
		case r < 0:
			before++
		case r == 0:
			p := in.Candidates[i]
			p.Rank = keys[i].rank
			class = append(class, p)
			names[p.Name] = true
		}
	}
	if before == d {
		return nil, 0 // the pod before the cut is in an earlier class
	}
	if len(names) < len(class) {
		return cutClassSorted(in, d)
	}
	return class, before
}

// cutClassSorted is cutClass with the class in the order of sorting every
// candidate.
func cutClassSorted(in Input, d int) (class []Pod, before int) {
	c := &Comparator{Rules: in.Rules, Now: in.Now}
	pods := slices.Clone(in.Candidates)
	setRanks(pointers(pods), in.Related)
	keys := make([]key, len(pods))
	idx := make([]int, len(pods))
	for i := range pods {
		keys[i], idx[i] = c.keyOf(&pods[i]), i
	}
	slices.SortFunc(idx, func(a, b int) int { return c.consistentCmp(&keys[a], &keys[b], Colocation) })
	if c.consistentCmp(&keys[idx[d-1]], &keys[idx[d]], Colocation) != 0 {
		return nil, 0
	}
	for i, k := range idx {
		switch r := c.consistentCmp(&keys[k], &keys[idx[d]], Colocation); {
		case r < 0:
			before = i + 1
		case r == 0:
			class = append(class, pods[k])
		}
	}
	return class, before
}

// victimSet is the set of pods sub deletes at now, open ones marked.
func victimSet(sub Input, now time.Time) string {
	sub.Now = now
	var victims []string
	for _, p := range Predict(sub).Order {
		if p.Delete {
			mark := ""
			if !p.Certain {
				mark = "?"
			}
			victims = append(victims, p.Pod.Name+mark)
		}
	}
	slices.Sort(victims) // a set, not an order
	return strings.Join(victims, "\x00")
}

// firstChange walks the class's log2 bucket crossings in time order and
// returns the first at which the outcome differs from now's.
func firstChange(sub Input, now time.Time) (*time.Time, bool) {
	base := victimSet(sub, now)
	// Predict depends on the time only through comparisons of log2
	// buckets, so instants whose buckets order the pods alike give the
	// same victims: each such pattern is evaluated once.
	same := map[string]bool{bucketPattern(sub.Candidates, now): true}
	h := crossingsOf(sub.Candidates, now)
	w := newCutWatch(sub, now)
	var last time.Time
	for checks := 0; h.Len() > 0; checks++ {
		e := heap.Pop(h).(crossing)
		if e.at.Sub(now) > neverHorizon {
			return nil, false // nothing changes within any horizon that matters
		}
		if checks == maxStableChecks {
			return &last, true
		}
		last = e.at
		if !w.advance(e.at) {
			if pat := bucketPattern(sub.Candidates, e.at); !same[pat] {
				if victimSet(sub, e.at) != base {
					return &e.at, false
				}
				same[pat] = true
			}
			w.reset(e.at)
		}
		h.push(e.t, e.at)
	}
	return nil, false
}

// cutWatch follows the class of sub's cut (pods equal under outerCmp)
// from one instant to the next. sub is one round (sub.Delete is at most
// the burst) and FatesOnly, so its victims are the pods of the classes
// before the cut's class and what settleClass picks inside it, and the
// latter depends only on the class's members and on how they compare
// with one another. A crossing that leaves those comparisons alone and
// moves no other pod across the class therefore leaves the victims alone.
type cutWatch struct {
	c     Comparator
	pods  []Pod
	d     int
	keys  []key // at the instant last seen
	next  []key
	inCut []bool
	idx   []int
}

func newCutWatch(sub Input, now time.Time) *cutWatch {
	n := len(sub.Candidates)
	w := &cutWatch{c: Comparator{Rules: sub.Rules}, pods: sub.Candidates, d: sub.Delete,
		keys: make([]key, n), next: make([]key, n), inCut: make([]bool, n), idx: make([]int, n)}
	w.reset(now)
	return w
}

// keysAt fills out with the pods' keys at now, ranked 0 as in Predict(sub)
// (no related pods).
func (w *cutWatch) keysAt(now time.Time, out []key) {
	w.c.Now = now
	for i := range w.pods {
		out[i] = w.c.keyOf(&w.pods[i])
		out[i].rank = 0
	}
}

// reset takes now's keys and finds the cut's class afresh.
func (w *cutWatch) reset(now time.Time) {
	w.keysAt(now, w.keys)
	for i := range w.idx {
		w.idx[i] = i
	}
	outer := func(a, b int) int { return outerCmp(&w.c, &w.keys[a], &w.keys[b]) }
	pivot := selectKth(w.idx, w.d, outer)
	for i := range w.inCut {
		w.inCut[i] = outer(i, pivot) == 0
	}
}

// advance moves to now and reports whether the victims are those of the
// instant last seen: some member of the cut's class keeps its buckets, and
// every pod whose buckets changed either stays on the same side of that
// member, or is in the class and compares with each member exactly as
// before (result, rule and branch). Then the class, the pods before it and
// the comparisons inside it are unchanged. It changes nothing when it
// reports false.
func (w *cutWatch) advance(now time.Time) bool {
	w.keysAt(now, w.next)
	k0 := -1 // a member whose key is unchanged
	for i := range w.keys {
		if w.inCut[i] && sameBuckets(&w.keys[i], &w.next[i]) {
			k0 = i
			break
		}
	}
	for p := range w.keys {
		if sameBuckets(&w.keys[p], &w.next[p]) {
			continue
		}
		if k0 < 0 {
			// Every member moved: nothing anchors the class.
			return false
		}
		if !w.inCut[p] {
			if outerCmp(&w.c, &w.keys[p], &w.keys[k0]) != outerCmp(&w.c, &w.next[p], &w.next[k0]) {
				return false
			}
			continue
		}
		for q := range w.keys {
			if q == p || !w.inCut[q] {
				continue
			}
			r0, rule0, how0 := w.c.cmp(&w.keys[p], &w.keys[q])
			r1, rule1, how1 := w.c.cmp(&w.next[p], &w.next[q])
			if r0 != r1 || rule0 != rule1 || how0 != how1 {
				return false
			}
		}
	}
	w.keys, w.next = w.next, w.keys
	return true
}

func sameBuckets(a, b *key) bool {
	return a.readyBucket == b.readyBucket && a.createdBucket == b.createdBucket
}

// bucketPattern is how the pods' ready buckets, and their creation
// buckets, compare at now: each bucket replaced by its rank among the
// distinct buckets of its kind.
func bucketPattern(pods []Pod, now time.Time) string {
	ready := make([]int64, len(pods))
	created := make([]int64, len(pods))
	for i, p := range pods {
		ready[i], created[i] = -2, -2 // zero times are not compared by bucket
		if !p.ReadyTime.IsZero() {
			ready[i] = Bucket(p.ReadyTime, now)
		}
		if !p.Created.IsZero() {
			created[i] = Bucket(p.Created, now)
		}
	}
	b := make([]byte, 0, 2*len(pods))
	for _, bs := range [][]int64{ready, created} {
		distinct := slices.Compact(slices.Sorted(slices.Values(bs)))
		for _, x := range bs {
			r, _ := slices.BinarySearch(distinct, x)
			b = append(b, byte(r), byte(r>>8))
		}
	}
	return string(b)
}

// nextCrossing is the first instant after now at which Bucket(t, ·) grows.
func nextCrossing(t, now time.Time) time.Time {
	b := Bucket(t, now)
	if b < 0 {
		return t.Add(time.Nanosecond)
	}
	if b >= 62 {
		return time.Time{}
	}
	at := t.Add(time.Duration(int64(1) << (b + 1)))
	// math.Log2 rounds up a few nanoseconds below large powers of two.
	for i := 0; i < 1<<10 && Bucket(t, at.Add(-time.Nanosecond)) > b; i++ {
		at = at.Add(-time.Nanosecond)
	}
	for Bucket(t, at) <= b {
		at = at.Add(time.Nanosecond)
	}
	return at
}

type crossing struct{ t, at time.Time }

type crossings []crossing

func (h crossings) Len() int           { return len(h) }
func (h crossings) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h crossings) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *crossings) Push(x any)        { *h = append(*h, x.(crossing)) }
func (h *crossings) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// crossingsOf holds the next bucket crossing of every pod's ready and
// creation time after now.
func crossingsOf(pods []Pod, now time.Time) *crossings {
	h := &crossings{}
	for _, p := range pods {
		if p.Ready && !p.ReadyTime.IsZero() {
			h.push(p.ReadyTime, now)
		}
		if !p.Created.IsZero() {
			h.push(p.Created, now)
		}
	}
	return h
}

func (h *crossings) push(t, now time.Time) {
	if at := nextCrossing(t, now); !at.IsZero() {
		heap.Push(h, crossing{t: t, at: at})
	}
}
