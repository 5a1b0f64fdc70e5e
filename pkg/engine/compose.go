package engine

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// A scale-in past the burst runs in rounds, and which pods a round leaves
// decides what the next one deletes. When a round before the last cuts
// through an open group, the fates shown for the representative outcome
// are conditional on it; compose follows every outcome of such a round,
// with its probability, through the later rounds, and gives each pod its
// overall probability of deletion and a certainty that holds in every
// outcome.

// joint is an open round's distribution over which group members go.
type joint struct {
	members []*Pod
	m       int // how many of members go
	// uniform: every m-subset of members is equally likely (a full tie:
	// the sort cannot tell members apart, so a uniformly random input order
	// gives each subset the same chance).
	uniform bool
	// Otherwise the sets with their probabilities, summing to 1.
	sets []weightedSet
	// sampled: sets and weights are estimated from sort trials, so an
	// outcome may be missing.
	sampled bool
	// cost is the work spent finding the sets, in units of composer.work.
	cost int
}

type weightedSet struct {
	pods []*Pod
	w    float64
}

// enumeratedJoint turns the enumerated sets of universe positions into
// sets of member pods (the pods before the group always go and are left
// out).
func enumeratedJoint(active []*Pod, members, universe []int, sets map[uint16]int64, total int64, m int) *joint {
	inGroup := make(map[int]bool, len(members))
	j := &joint{m: m}
	for _, k := range members {
		inGroup[k] = true
		j.members = append(j.members, active[k])
	}
	masks := slices.Sorted(maps.Keys(sets)) // a fixed order: sums are reproducible
	merged := map[uint16]int{}
	for _, mask := range masks {
		var pods []*Pod
		var id uint16 // the members only
		for i, k := range universe {
			if mask&(1<<i) != 0 && inGroup[k] {
				pods = append(pods, active[k])
				id |= 1 << i
			}
		}
		w := float64(sets[mask]) / float64(total)
		if i, ok := merged[id]; ok {
			j.sets[i].w += w
			continue
		}
		merged[id] = len(j.sets)
		j.sets = append(j.sets, weightedSet{pods: pods, w: w})
	}
	return j
}

// sampledSets counts the sets of group members one sort trial deletes. A
// nil *sampledSets ignores everything.
type sampledSets struct {
	cost   int
	active []*Pod
	m      int
	cur    []int
	count  map[string]int
	first  map[string][]int
	order  []string
}

func newSampledSets(active []*Pod, m int) *sampledSets {
	return &sampledSets{active: active, m: m, count: map[string]int{}, first: map[string][]int{}}
}

func (s *sampledSets) add(k int) {
	if s != nil {
		s.cur = append(s.cur, k)
	}
}

func (s *sampledSets) end() {
	if s == nil {
		return
	}
	slices.Sort(s.cur)
	var b strings.Builder
	for _, k := range s.cur {
		b.WriteString(strconv.Itoa(k))
		b.WriteByte(',')
	}
	id := b.String()
	if s.count[id] == 0 {
		s.order = append(s.order, id)
		s.first[id] = slices.Clone(s.cur)
	}
	s.count[id]++
	s.cur = s.cur[:0]
}

func (s *sampledSets) joint(members []int, trials int) *joint {
	u := len(s.active)
	if u > simulateFullLimit {
		u = len(members)
	}
	// Each trial sorts the round (or the group) once.
	j := &joint{m: s.m, sampled: true, cost: s.cost + trials*u}
	for _, k := range members {
		j.members = append(j.members, s.active[k])
	}
	for _, id := range s.order {
		var pods []*Pod
		for _, k := range s.first[id] {
			pods = append(pods, s.active[k])
		}
		j.sets = append(j.sets, weightedSet{pods: pods, w: float64(s.count[id]) / float64(trials)})
	}
	return j
}

// Fates a pod has had across the outcomes followed.
const (
	fateDelete uint8 = 1 << iota
	fateKeep
	fateOpen
)

// maxComposeWork bounds the work over all outcomes followed (a pod in a
// round is one unit); an open round whose outcomes do not fit is sampled
// instead, and what follows it is marked uncertain. Past it, each outcome
// still open is finished along a single path.
const maxComposeWork = 1 << 18

// A round costs roundCost units besides one per pod; costScale steps of
// an enumeration or comparisons of sort trials make one unit.
const (
	roundCost = 16
	costScale = 4
)

// maxSamples bounds the outcomes drawn for a round that is sampled.
const maxSamples = 64

// composer accumulates, over the outcomes followed, each candidate's
// probability of deletion and the fates it has had.
type composer struct {
	in      Input
	index   map[*Pod]int
	prob    []float64
	fates   []uint8
	work    int
	rng     *rand.Rand
	nodes   *nodeCounts
	scratch scratch
}

// compose returns, per candidate (in in.Candidates order), the overall
// probability of deletion and its fate: fateDelete or fateKeep when it is
// the same in every outcome of every open round, else fateOpen.
func compose(in Input) (prob []float64, fate []uint8) {
	// Each open round's outcomes are followed: its groups record them.
	in.composing, in.Joint, in.resortAll = true, true, false
	pods := slices.Clone(in.Candidates)
	active := pointers(pods)
	c := &composer{
		in: in, index: make(map[*Pod]int, len(active)),
		prob: make([]float64, len(active)), fates: make([]uint8, len(active)),
		rng: rand.New(rand.NewPCG(in.Seed, 0x636f6d706f7365)),
	}
	for i, p := range active {
		c.index[p] = i
	}
	slices.SortFunc(active, func(a, b *Pod) int { return strings.Compare(a.Name, b.Name) })
	remaining := min(in.Delete, len(active))
	c.nodes = newNodeCounts(in.Related, active)
	c.round(active, nil, c.nodes.initial(), remaining, 1, 1, false)
	for i, f := range c.fates {
		if f != fateDelete && f != fateKeep {
			c.fates[i] = fateOpen
		}
	}
	return c.prob, c.fates
}

// note records a fate with probability p of deletion in an outcome of
// weight w; approx marks it open whatever it is.
func (c *composer) note(pod *Pod, w, p float64, f uint8, approx bool) {
	i := c.index[pod]
	c.prob[i] += w * p
	if approx {
		f = fateOpen
	}
	c.fates[i] |= f
}

// round follows one round of the outcome of weight w; active is in name
// order, keys are its keys or nil, and related (counts by node number) is
// this branch's own.
func (c *composer) round(active []*Pod, keys []key, related []int, remaining, round int, w float64, approx bool) {
	d := min(remaining, c.in.burst())
	before := c.work
	c.work += roundCost + len(active)
	if d >= len(active) {
		for _, p := range active {
			c.note(p, w, 1, fateDelete, approx)
		}
		return
	}
	if keys == nil {
		// Kept for the later rounds: with the same reference time only
		// the rank changes.
		cmp := &Comparator{Rules: c.in.Rules, Now: c.in.Now}
		keys = make([]key, len(active))
		for i, p := range active {
			keys[i] = cmp.keyOf(p)
			keys[i].node = c.nodes.id[p.Node]
		}
	}
	for i, p := range active {
		p.Rank = related[keys[i].node]
		keys[i].rank = p.Rank
	}
	in := c.in
	spent := c.work > maxComposeWork
	if spent {
		// Out of budget: the rest of this outcome is followed along one
		// path, without sampling or enumerating open groups.
		in.FatesOnly, approx = true, true
	}
	placed, groups := analyze(active, keys, &c.scratch, d, in, round, 0, false)
	if len(groups) > 0 && groups[0].joint != nil {
		c.work += groups[0].joint.cost / costScale
	}
	if d == remaining {
		c.noteLast(active, placed, w, approx)
		return
	}
	gone := map[*Pod]bool{}
	for _, pl := range placed {
		if pl.Delete && pl.Group < 0 {
			gone[pl.Pod] = true
			c.note(pl.Pod, w, 1, fateDelete, approx)
		}
	}
	if len(groups) == 0 {
		c.next(active, keys, related, gone, nil, remaining-d, round, w, approx, true)
		return
	}
	var sets []weightedSet
	exact := false
	if spent || groups[0].joint == nil {
		var took []*Pod
		for _, pl := range placed {
			if pl.Delete && pl.Group >= 0 {
				took = append(took, pl.Pod)
			}
		}
		sets = []weightedSet{{pods: took, w: 1}}
	} else {
		later := (remaining - d + c.in.burst() - 1) / c.in.burst()
		// Each outcome's later rounds are taken to cost what this one did.
		sets, exact = c.outcomes(groups[0].joint, (c.work-before)*later)
	}
	for i, s := range sets {
		for _, p := range s.pods {
			c.note(p, w*s.w, 1, fateDelete, approx || !exact)
		}
		c.next(active, keys, related, gone, s.pods, remaining-d, round, w*s.w, approx || !exact, i == len(sets)-1)
	}
}

// noteLast notes the last round's fates, which are final.
func (c *composer) noteLast(active []*Pod, placed []Placed, w float64, approx bool) {
	seen := make(map[*Pod]bool, len(placed))
	for _, pl := range placed {
		seen[pl.Pod] = true
		f := fateOpen
		if pl.Certain && pl.Delete {
			f = fateDelete
		} else if pl.Certain {
			f = fateKeep
		}
		c.note(pl.Pod, w, pl.Probability, f, approx)
	}
	for _, p := range active {
		if !seen[p] { // past the cut's class: certainly kept
			c.note(p, w, 0, fateKeep, approx)
		}
	}
}

// next runs the following round on what this one leaves. The last branch
// of a round takes over active and keys, which the round no longer needs.
func (c *composer) next(active []*Pod, keys []key, related []int, gone map[*Pod]bool, also []*Pod, remaining, round int, w float64, approx, last bool) {
	out := maps.Clone(gone)
	for _, p := range also {
		out[p] = true
	}
	left, leftKeys := active[:0], keys[:0]
	if !last {
		left = make([]*Pod, 0, len(active)-len(out))
		leftKeys = make([]key, 0, len(active)-len(out))
	}
	for i, p := range active {
		if !out[p] {
			left = append(left, p)
			leftKeys = append(leftKeys, keys[i])
		}
	}
	rel := slices.Clone(related)
	for p := range out {
		c.nodes.remove(rel, p)
	}
	c.round(left, leftKeys, rel, remaining, round+1, w, approx)
}

// outcomes lists an open round's outcomes to follow, each costing about
// cost units: all of them when they fit in the budget (exact), otherwise
// a sample drawn from the round's distribution, equally weighted.
func (c *composer) outcomes(j *joint, cost int) (sets []weightedSet, exact bool) {
	left := max(0, maxComposeWork-c.work)
	samples := min(maxSamples, max(1, left/max(1, cost)))
	if j.uniform {
		k := len(j.members)
		if n, ok := choose(k, j.m, left/max(1, cost)); ok {
			w := 1 / float64(n)
			forSubsets(k, j.m, func(idx []int) {
				pods := make([]*Pod, len(idx))
				for i, x := range idx {
					pods[i] = j.members[x]
				}
				sets = append(sets, weightedSet{pods: pods, w: w})
			})
			return sets, true
		}
		for range samples {
			perm := c.rng.Perm(k)[:j.m]
			slices.Sort(perm)
			pods := make([]*Pod, j.m)
			for i, x := range perm {
				pods[i] = j.members[x]
			}
			sets = append(sets, weightedSet{pods: pods, w: 1 / float64(samples)})
		}
		return sets, false
	}
	if len(j.sets) <= left/max(1, cost) {
		return j.sets, !j.sampled
	}
	// Draw by weight.
	for range samples {
		r, i := c.rng.Float64(), 0
		for ; i < len(j.sets)-1 && r >= j.sets[i].w; i++ {
			r -= j.sets[i].w
		}
		sets = append(sets, weightedSet{pods: j.sets[i].pods, w: 1 / float64(samples)})
	}
	return sets, false
}

// choose is C(n, k) when it is at most limit.
func choose(n, k, limit int) (int, bool) {
	k = min(k, n-k)
	r := 1
	for i := 1; i <= k; i++ {
		// r*(n-k+i)/i stays exact: r is C(n-k+i-1, i-1).
		r = r * (n - k + i) / i
		if r > limit {
			return 0, false
		}
	}
	return r, r <= limit
}

// forSubsets calls f with every k-subset of 0..n-1, in lexicographic
// order; f must not keep idx.
func forSubsets(n, k int, f func(idx []int)) {
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	for {
		f(idx)
		i := k - 1
		for i >= 0 && idx[i] == n-k+i {
			i--
		}
		if i < 0 {
			return
		}
		idx[i]++
		for j := i + 1; j < k; j++ {
			idx[j] = idx[j-1] + 1
		}
	}
}
