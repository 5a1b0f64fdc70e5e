package engine

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// Input is one ReplicaSet's (or ReplicationController's) scale-in as its
// controller sees it.
type Input struct {
	// Candidates are the active pods the controller owns or adopts.
	Candidates []Pod
	// Related counts active related pods per node (the pods of every
	// ReplicaSet with the same controller owner). nil: no related pods, so
	// every rank is 0, as for a standalone ReplicaSet or any RC in 1.24+.
	Related map[string]int
	// Delete is how many pods go: len(Candidates) - replicas.
	Delete int
	Now    time.Time
	Rules  rules.RuleSet
	// Burst caps deletions per sync; 0 means rules.BurstReplicas.
	Burst int
	// Trials is the number of simulated input orders for groups the
	// comparator cannot order consistently; 0 picks a default by size.
	Trials int
	// Seed makes the simulation reproducible.
	Seed uint64
	// FatesOnly skips what only a reader needs: probabilities of
	// intransitive groups are not estimated and no comparison is explained.
	// StableUntil uses it to compare outcomes cheaply.
	FatesOnly bool
	// resortAll (tests only) arranges and explains every round whole and
	// hands the survivors on in the order it placed them, as the first
	// version did; Predict must give the same Result without it.
	resortAll bool
	// composing: a branch of compose. Nothing is explained, and open
	// groups record their joint outcome.
	composing bool
	// Joint: open groups record their joint outcome (see
	// Contenders.Outcomes), for a caller whose later steps depend on which
	// members went (compose, and a Deployment's steps).
	Joint bool
	// owned: Candidates are the caller's own copies (the stable-until
	// search's), which Predict may rank in place instead of copying them.
	owned bool
}

// Placed is one candidate's predicted fate.
type Placed struct {
	Pod         *Pod
	Position    int // 1-based, in predicted deletion order
	Delete      bool
	Certain     bool
	Probability float64 // of being deleted, in any round
	Round       int     // sync round that deletes it (0: kept)
	// Next explains the comparison with the pod right after this one in
	// the same round's sort; nil for the last pod or an unsorted round.
	Next    *Decision
	NextPod *Pod
	// Boundary compares a victim with its round's first survivor, or a
	// survivor with the last victim: the comparison that decided its fate.
	Boundary    *Decision
	BoundaryPod *Pod
	// Group indexes Result.Contenders when the pod's fate is open; -1 if not.
	Group int
}

// Contenders is a group of pods among which the controller's choice is open.
type Contenders struct {
	Pods   []string
	Delete int // how many of them go
	Rule   Rule
	Reason string
	// Exact: the probabilities follow from symmetry (a full tie); otherwise
	// they are estimated by running Go's sort.Sort over random input orders.
	Exact bool
	// Enumerated: the probabilities are exact, counted over every input
	// order of a universe small enough for sort.Sort to use insertion sort
	// alone (12 pods); Trials is then 0.
	Enumerated bool
	Round      int
	Trials     int
	// joint is which sets of Pods can go, for compose: set for ties, and
	// for intransitive groups only while composing.
	joint *joint
}

// Result is the predicted order of one scale-in.
type Result struct {
	Order      []Placed
	Victims    int
	Rounds     int
	Unsorted   bool // every candidate goes, so the controller does not sort
	Contenders []Contenders
	Certain    bool
}

// burst is the per-sync deletion cap in force.
func (in Input) burst() int {
	if in.Burst <= 0 {
		return rules.BurstReplicas
	}
	return in.Burst
}

// Predict runs the controller's deletion rounds: at most Burst pods per
// sync, each round re-ranked and re-sorted on what is left.
func Predict(in Input) Result {
	pods := in.Candidates
	if !in.owned {
		pods = slices.Clone(pods)
	}
	res := Result{Certain: true}
	active := pointers(pods)
	remaining := min(in.Delete, len(active))
	earlierOpen := false
	rs := newRounds(in, active)
	var sc scratch
	if len(pods) > 0 {
		// Every candidate ends in Order (which stays nil without any).
		res.Order = make([]Placed, 0, len(pods))
	}
	c := &Comparator{Rules: in.Rules, Now: in.Now}
	for round := 1; remaining > 0; round++ {
		d := min(remaining, in.burst())
		roundKeys := rs.ranked(c, active, in, round)
		// Only this round's victims are shown, and the survivors of the
		// last round, in this round's order also when the next round takes
		// them all: only then is the whole round arranged.
		explainAll := d == remaining || remaining == len(active) || in.resortAll
		placed := placeRound(&res, active, roundKeys, &sc, rs.shown, d, in, round, earlierOpen, explainAll)
		rs.remove(&res, placed, d)
		next := rs.byName
		if in.resortAll {
			next = slices.Clone(rs.shown)
		}
		for _, g := range res.Contenders {
			earlierOpen = earlierOpen || g.Round == round
		}
		res.Rounds = round
		res.Victims += d
		remaining -= d
		if remaining == 0 {
			res.Order = append(res.Order, placed[d:]...)
		}
		active = next
	}
	if !in.FatesOnly && slices.ContainsFunc(res.Contenders, func(g Contenders) bool { return g.Round < res.Rounds }) {
		settleAcrossRounds(&res, in, pods)
	}
	if in.Delete <= 0 {
		for _, p := range active {
			res.Order = append(res.Order, Placed{Pod: p, Certain: true, Group: -1})
		}
		for i := range res.Order {
			res.Order[i].Position = i + 1
		}
	}
	return res
}

// rounds is what one round of deletions hands the next.
type rounds struct {
	related map[string]int // nil: no related pods
	// byName: later rounds take the survivors in name order, the order
	// the first round's analysis starts from, filtered instead of sorted
	// again.
	byName []*Pod
	// shown is the survivors in the order the last round placed them.
	shown []*Pod
	// keys are byName's from round 2 on, kept alongside it: with the same
	// reference time only the rank changes from round to round, counted in
	// counts by node number.
	keys   []key
	nodes  *nodeCounts
	counts []int
}

func newRounds(in Input, active []*Pod) *rounds {
	rs := &rounds{related: maps.Clone(in.Related), byName: slices.Clone(active), shown: slices.Clone(active)}
	slices.SortFunc(rs.byName, func(a, b *Pod) int { return cmp.Compare(a.Name, b.Name) })
	return rs
}

// ranked sets the active pods' ranks for this round; from round 2 on it
// returns their keys with the new ranks (nil: analyze computes them).
func (rs *rounds) ranked(c *Comparator, active []*Pod, in Input, round int) []key {
	if round == 1 || in.resortAll {
		setRanks(active, rs.related)
		return nil
	}
	if rs.keys == nil {
		rs.nodes = newNodeCounts(rs.related, rs.byName)
		rs.counts = rs.nodes.initial()
		rs.keys = make([]key, len(rs.byName))
		for i, p := range rs.byName {
			rs.keys[i] = c.keyOf(p)
			rs.keys[i].node = rs.nodes.id[p.Node]
		}
	}
	for i, p := range active {
		p.Rank = rs.counts[rs.keys[i].node]
		rs.keys[i].rank = p.Rank
	}
	return rs.keys
}

// remove takes the round's d victims out, into res.Order, and keeps the
// survivors in name order and in the round's order.
func (rs *rounds) remove(res *Result, placed []Placed, d int) {
	gone := make(map[*Pod]bool, d)
	for i := range placed[:d] {
		if rs.related != nil {
			rs.related[placed[i].Pod.Node]--
		}
		if rs.nodes != nil {
			rs.nodes.remove(rs.counts, placed[i].Pod)
		}
		res.Order = append(res.Order, placed[i])
		gone[placed[i].Pod] = true
	}
	kept := 0
	for i, p := range rs.byName {
		if !gone[p] {
			rs.byName[kept] = p
			if rs.keys != nil {
				rs.keys[kept] = rs.keys[i]
			}
			kept++
		}
	}
	clear(rs.byName[kept:])
	rs.byName = rs.byName[:kept]
	if rs.keys != nil {
		rs.keys = rs.keys[:kept]
	}
	rs.shown = rs.shown[:0]
	for i := range placed[d:] {
		rs.shown = append(rs.shown, placed[d+i].Pod)
	}
}

// settleAcrossRounds replaces the fates shown for the representative
// outcome of an open earlier round by those over every outcome (compose):
// the overall probability, and certainty only where all outcomes agree.
func settleAcrossRounds(res *Result, in Input, pods []Pod) {
	prob, fate := compose(in)
	index := make(map[*Pod]int, len(pods))
	for i := range pods {
		index[&pods[i]] = i
	}
	res.Certain = true
	for i := range res.Order {
		pl := &res.Order[i]
		k := index[pl.Pod]
		pl.Probability = min(1, max(0, prob[k]))
		// A certain fate agrees with the outcome shown whenever that outcome
		// is one of those followed; the check guards an intransitive round
		// whose likeliest pods are not a set the sort can reach.
		pl.Certain = fate[k] == fateDelete && pl.Delete || fate[k] == fateKeep && !pl.Delete
		if pl.Certain {
			pl.Probability = 0
			if pl.Delete {
				pl.Probability = 1
			}
		}
		res.Certain = res.Certain && pl.Certain
	}
	// A group whose members all end certain decides only the round, not
	// a fate: it is no longer open.
	open := make([]bool, len(res.Contenders))
	for _, pl := range res.Order {
		if pl.Group >= 0 && !pl.Certain {
			open[pl.Group] = true
		}
	}
	renumber := make([]int, len(res.Contenders))
	kept := res.Contenders[:0]
	for i, g := range res.Contenders {
		renumber[i] = -1
		if open[i] {
			renumber[i] = len(kept)
			kept = append(kept, g)
		}
	}
	res.Contenders = kept
	for i := range res.Order {
		if g := res.Order[i].Group; g >= 0 {
			res.Order[i].Group = renumber[g]
		}
	}
}

func pointers(pods []Pod) []*Pod {
	out := make([]*Pod, len(pods))
	for i := range pods {
		out[i] = &pods[i]
	}
	return out
}

// setRanks gives each pod the count of active related pods on its node;
// with no related pods (nil) every rank is 0.
func setRanks(pods []*Pod, related map[string]int) {
	for _, p := range pods {
		p.Rank = related[p.Node]
	}
}

// nodeCounts numbers the nodes of a related map and of some pods, so that
// the rounds read ranks from a slice (counts) instead of a map keyed by
// node name: the same counts, read and counted down alike.
type nodeCounts struct {
	id      map[string]int32
	related map[string]int // nil: no related pods, every rank 0
	names   []string
}

func newNodeCounts(related map[string]int, pods []*Pod) *nodeCounts {
	n := &nodeCounts{id: map[string]int32{}, related: related}
	for _, p := range pods {
		if _, ok := n.id[p.Node]; !ok {
			n.id[p.Node] = int32(len(n.names))
			n.names = append(n.names, p.Node)
		}
	}
	return n
}

// initial is the related map's counts by node number.
func (n *nodeCounts) initial() []int {
	counts := make([]int, len(n.names))
	for i, name := range n.names {
		counts[i] = n.related[name]
	}
	return counts
}

// remove counts down p's node, as the map would be unless it is nil.
func (n *nodeCounts) remove(counts []int, p *Pod) {
	if n.related != nil {
		counts[n.id[p.Node]]--
	}
}

// placeRound orders one deletion round of d pods and settles their fates,
// appending any open groups to res. shown is active in the order the last
// round left it, used when every pod goes and nothing is sorted.
func placeRound(res *Result, active []*Pod, keys []key, sc *scratch, shown []*Pod, d int, in Input, round int, earlierOpen, explainAll bool) []Placed {
	var placed []Placed
	if d >= len(active) {
		// getPodsToDelete: no need to sort when every pod goes.
		res.Unsorted = round == 1
		placed = make([]Placed, len(active))
		for i, p := range shown {
			placed[i] = Placed{Pod: p, Delete: true, Certain: true, Probability: 1, Group: -1}
		}
	} else {
		var groups []Contenders
		placed, groups = analyze(active, keys, sc, d, in, round, len(res.Contenders), explainAll)
		res.Contenders = append(res.Contenders, groups...)
	}
	for i := range placed {
		placed[i].Position = len(res.Order) + i + 1
		if placed[i].Delete {
			placed[i].Round = round
		}
		if earlierOpen {
			// Which pods the earlier round left depends on chance;
			// settleAcrossRounds refines this unless FatesOnly.
			placed[i].Certain = false
		}
		if !placed[i].Certain {
			res.Certain = false
		}
	}
	return placed
}

// analyze sorts one round and settles, for each pod, whether its fate is
// certain. keys, when not nil, are active's keys, and active is then in
// name order. The comparator is consistent across "classes" (pods that differ
// on rules 1-5, on the log2 ready bucket, or on restarts and creation
// bucket), so only the class the cut falls in can be open; only that class
// gets the careful treatment.
func analyze(active []*Pod, keys []key, sc *scratch, d int, in Input, round, groupBase int, explainAll bool) ([]Placed, []Contenders) {
	c := &Comparator{Rules: in.Rules, Now: in.Now}
	n := len(active)
	idx := sc.ints(&sc.idx, n)
	for i := range idx {
		idx[i] = i
	}
	// A realistic order: classes in order, each as the controller's
	// sort.Sort leaves it from name order (see arrange). Given keys, active
	// is already in name order, which the sort would leave as it is.
	if keys == nil {
		keys = make([]key, n)
		for i, p := range active {
			keys[i] = c.keyOf(p)
		}
		slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(active[a].Name, active[b].Name) })
	}
	// Pods past the cut's class are certain survivors: when they are not
	// shown they are not placed either.
	placed := make([]Placed, arrange(c, keys, idx, d, explainAll, sc))
	keyOf := make(map[*Pod]*key, len(placed))
	for i, k := range idx[:len(placed)] {
		placed[i] = Placed{Pod: active[k], Delete: i < d, Certain: true, Group: -1}
		if i < d {
			placed[i].Probability = 1
		}
		keyOf[active[k]] = &keys[k]
	}
	var groups []Contenders
	if outerCmp(c, &keys[idx[d-1]], &keys[idx[d]]) == 0 {
		lo, hi := d-1, d+1
		for lo > 0 && outerCmp(c, &keys[idx[lo-1]], &keys[idx[d]]) == 0 {
			lo--
		}
		for hi < n && outerCmp(c, &keys[idx[hi]], &keys[idx[d]]) == 0 {
			hi++
		}
		groups = settleClass(c, active, keys, idx, lo, hi, d, in, round, groupBase, placed)
	}
	if !in.FatesOnly && !in.composing {
		explainPlaced(c, placed, keyOf, d, explainAll)
	}
	return placed, groups
}

// explainPlaced records, for the pods shown, the decision against the next
// pod and against the cut.
func explainPlaced(c *Comparator, placed []Placed, keyOf map[*Pod]*key, d int, explainAll bool) {
	cmpPods := func(a, b *Pod) Decision { return c.decide(a, b, keyOf[a], keyOf[b]) }
	explain := d
	if explainAll {
		explain = len(placed)
	}
	if explain > 4096 {
		// Many pods share a second: render each age once (c is this
		// round's own comparator). Not worth a map for fewer pods.
		c.ages = map[ageKey]string{}
	}
	// The decisions of a round in one allocation.
	decs := make([]Decision, 2*explain)
	for i := range placed[:explain] {
		if i+1 < len(placed) {
			decs[2*i] = cmpPods(placed[i].Pod, placed[i+1].Pod)
			placed[i].Next, placed[i].NextPod = &decs[2*i], placed[i+1].Pod
		}
		dec := &decs[2*i+1]
		if i < d {
			*dec = cmpPods(placed[i].Pod, placed[d].Pod)
			placed[i].BoundaryPod = placed[d].Pod
		} else {
			*dec = cmpPods(placed[d-1].Pod, placed[i].Pod)
			placed[i].BoundaryPod = placed[d-1].Pod
		}
		placed[i].Boundary = dec
	}
}

// scratch is index space that analyze reuses from round to round; nothing
// it returns keeps it.
type scratch struct{ idx, sel, tail []int }

// ints resizes *buf to n ints, reallocating only when it is too small.
func (sc *scratch) ints(buf *[]int, n int) []int {
	if cap(*buf) < n {
		*buf = make([]int, n)
	}
	return (*buf)[:n]
}

// outerCmp orders by the comparator's consistent prefix: rules 1-5, then
// for two ready pods the ready time (its log2 bucket in log mode); it stops
// where the UID tie-break can make the comparator intransitive.
func outerCmp(c *Comparator, a, b *key) int { return c.consistentCmp(a, b, ReadyTime) }

// innerCmp orders, within one class whose ready times are equal (or not
// compared), by restarts and then by creation (bucket in log mode).
func innerCmp(c *Comparator, a, b *key) int { return c.consistentCmp(a, b, CreationTime) }

// fullCmp is the controller's comparator as a three-way result.
func fullCmp(c *Comparator, a, b *key) int {
	r, _, _ := c.cmp(a, b)
	return r
}

// settleClass decides the fates inside the class [lo,hi) that the cut at d
// falls in, rewriting placed[lo:hi].
func settleClass(c *Comparator, active []*Pod, keys []key, idx []int, lo, hi, d int, in Input, round, groupBase int, placed []Placed) []Contenders {
	members := slices.Clone(idx[lo:hi])
	m := d - lo
	k0 := &keys[members[0]]
	logReady := c.Rules.LogScale && k0.ready && !k0.readyZero
	if logReady && !allSame(members, func(i int) int64 { return keys[i].readyNs }) {
		if !anyRepeated(members, func(i int) int64 { return keys[i].readyNs }) {
			// Distinct ready times in one bucket: ordered by UID alone.
			return settleByUID(c, active, keys, members, lo, m, in, round, groupBase, placed, ReadyTime)
		}
		return simulate(c, active, keys, members, lo, d, in, round, groupBase, placed, ReadyTime,
			"ready times in the same log2 bucket: pods ready in the same second fall through to restarts and creation time while the others are ordered by UID, so the comparator is not transitive here and the outcome depends on the input order")
	}
	// Same ready time (or not compared): restarts, then creation bucket.
	// innerCmp's order, refined by the full comparator where it is silent.
	slices.SortStableFunc(members, func(a, b int) int { return fullCmp(c, &keys[a], &keys[b]) })
	apply := func(from int, order []int) {
		for i, k := range order {
			placed[from+i].Pod = active[k]
		}
	}
	apply(lo, members)
	sLo, sHi := m-1, m+1
	if innerCmp(c, &keys[members[m-1]], &keys[members[m]]) != 0 {
		// The cut falls between sub-classes: settled.
		return nil
	}
	for sLo > 0 && innerCmp(c, &keys[members[sLo-1]], &keys[members[m]]) == 0 {
		sLo--
	}
	for sHi < len(members) && innerCmp(c, &keys[members[sHi]], &keys[members[m]]) == 0 {
		sHi++
	}
	sub := members[sLo:sHi]
	sm := m - sLo
	kc := &keys[sub[0]]
	if c.Rules.LogScale && !kc.createdZero && !allSame(sub, func(i int) int64 { return keys[i].createdNs }) {
		if !anyRepeated(sub, func(i int) int64 { return keys[i].createdNs }) {
			return settleByUID(c, active, keys, sub, lo+sLo, sm, in, round, groupBase, placed, CreationTime)
		}
		return simulate(c, active, keys, sub, lo+sLo, d, in, round, groupBase, placed, CreationTime,
			"creation times in the same log2 bucket: pods created in the same second are tied while the others are ordered by UID, so the comparator is not transitive here and the outcome depends on the input order")
	}
	return tieGroup(active, sub, lo+sLo, sm, round, groupBase, placed, Tie,
		"full tie: every rule is equal (same phase, readiness, cost, rank, ready and creation second, restarts); Go's unstable sort.Sort over the informer's random order decides")
}

// settleByUID handles a bucket whose times all differ: UID order, with
// pods of equal UID (only possible in hand-written files) tied.
func settleByUID(c *Comparator, active []*Pod, keys []key, members []int, from, m int, in Input, round, groupBase int, placed []Placed, rule Rule) []Contenders {
	slices.SortStableFunc(members, func(a, b int) int { return cmp.Compare(keys[a].uid, keys[b].uid) })
	for i, k := range members {
		placed[from+i].Pod = active[k]
	}
	if keys[members[m-1]].uid != keys[members[m]].uid {
		return nil
	}
	u := keys[members[m]].uid
	lo, hi := m-1, m+1
	for lo > 0 && keys[members[lo-1]].uid == u {
		lo--
	}
	for hi < len(members) && keys[members[hi]].uid == u {
		hi++
	}
	return tieGroup(active, members[lo:hi], from+lo, m-lo, round, groupBase, placed, rule,
		fmt.Sprintf("same log2 age bucket and the same UID %q: the UID tie-break cannot separate them", u))
}

// tieGroup: k mutually tied pods of which m go. The sort cannot tell them
// apart, so under a uniformly random input order each goes with m/k.
func tieGroup(active []*Pod, members []int, from, m, round, groupBase int, placed []Placed, rule Rule, reason string) []Contenders {
	slices.SortStableFunc(members, func(a, b int) int { return cmp.Compare(active[a].Name, active[b].Name) })
	g := Contenders{Delete: m, Rule: rule, Reason: reason, Exact: true, Round: round}
	p := float64(m) / float64(len(members))
	pods := make([]*Pod, 0, len(members))
	for i, k := range members {
		pl := &placed[from+i]
		pl.Pod, pl.Certain, pl.Probability, pl.Group = active[k], false, p, groupBase
		g.Pods = append(g.Pods, active[k].Name)
		pods = append(pods, active[k])
	}
	g.joint = &joint{members: pods, m: m, uniform: true}
	return []Contenders{g}
}

// simulateFullLimit is the largest round simulated whole; past it only the
// group is shuffled.
const simulateFullLimit = 600

// composeTrials caps the sort trials of a round followed by compose.
const composeTrials = 200

// simulate estimates fates in an intransitive group by running the
// controller's own algorithm, Go's sort.Sort with the same comparator, over
// random input orders of the whole round (or, for large rounds, of the
// group alone, which is documented as an approximation).
func simulate(c *Comparator, active []*Pod, keys []key, members []int, from, d int, in Input, round, groupBase int, placed []Placed, rule Rule, reason string) []Contenders {
	universe, cut := sortUniverse(active, members, from, d)
	trials := trialsFor(in, len(universe))
	enumSteps := 0 // a failed enumeration's cost
	if !in.FatesOnly {
		layer, steps, ok := enumLayer(c, keys, universe)
		if ok {
			counts, total := cutCounts(layer, len(universe), cut)
			gs := enumerated(active, members, universe, counts, total, from, d, round, groupBase, placed, rule, reason)
			if in.Joint {
				gs[0].joint = enumeratedJoint(active, members, universe, cutSets(layer, len(universe), cut), total, d-from)
				gs[0].joint.cost = steps
			}
			return gs
		}
		enumSteps = steps
	}
	rng := rand.New(rand.NewPCG(in.Seed, uint64(round)))
	var sets *sampledSets
	if in.Joint && trials > 0 {
		sets = newSampledSets(active, d-from)
		sets.cost = enumSteps
	}
	// Counted per position in universe in a slice: maps cost more than
	// the sorts.
	var hits []int
	var inGroup []bool
	if trials > 0 {
		hits, inGroup = make([]int, len(universe)), make([]bool, len(universe))
		member := make(map[int]bool, len(members))
		for _, k := range members {
			member[k] = true
		}
		for pos, k := range universe {
			inGroup[pos] = member[k]
		}
	}
	sortTrials(c, keys, universe, cut, trials, rng, func(pos int) {
		if inGroup[pos] {
			hits[pos]++
			sets.add(universe[pos])
		}
	}, sets.end)
	g := Contenders{Delete: d - from, Rule: rule, Reason: reason, Round: round, Trials: trials}
	if sets != nil {
		g.joint = sets.joint(members, trials)
	}
	hitsOf := make(map[int]int, len(members))
	for pos, h := range hits {
		if inGroup[pos] {
			hitsOf[universe[pos]] = h
		}
	}
	return placeOpen(active, members, from, d, groupBase, placed, g, func(k int) float64 {
		if trials == 0 {
			return float64(d-from) / float64(len(members))
		}
		return float64(hitsOf[k]) / float64(trials)
	})
}

// sortUniverse is what the trials shuffle, in name order so that the
// estimates do not depend on the order pods were listed in: the whole
// round when it is small enough, else the group alone; cut is how many of
// it the round deletes.
func sortUniverse(active []*Pod, members []int, from, d int) (universe []int, cut int) {
	universe, cut = slices.Clone(members), d-from
	if len(active) <= simulateFullLimit {
		universe, cut = make([]int, len(active)), d
		for i := range universe {
			universe[i] = i
		}
	}
	slices.SortStableFunc(universe, func(a, b int) int { return cmp.Compare(active[a].Name, active[b].Name) })
	return universe, cut
}

// trialsFor is how many random orders to sort: fewer for a large
// universe, fewer still when composing rounds, none for fates only.
func trialsFor(in Input, universe int) int {
	trials := in.Trials
	if trials <= 0 {
		trials = min(2000, max(200, 200000/universe))
	}
	if in.composing {
		// Followed once per outcome of an earlier round: fewer trials.
		trials = min(trials, composeTrials)
	}
	if in.FatesOnly {
		trials = 0
	}
	return trials
}

// sortTrials runs sort.Sort with the controller's comparator over trials
// random input orders of universe (each shuffled from universe's order),
// calling took with the position in universe of each of the first cut of
// every result, then end. The trials sort positions in universe, which
// stand for its keys one for one: the same shuffles, comparisons and
// moves. They sort with slices.SortFunc, which is sort.Sort's algorithm
// (the standard library generates both from one template) asking
// cmp(a, b) < 0 where sort.Sort asks Less(a, b): the same moves, without
// interface calls (TestSortFuncMovesLikeSortSort).
func sortTrials(c *Comparator, keys []key, universe []int, cut, trials int, rng *rand.Rand, took func(pos int), end func()) {
	if trials <= 0 {
		return
	}
	n := len(universe)
	uk := rankedKeys(keys, universe)
	cmpf := func(a, b int) int { return lessCmp(c.less(&uk[a], &uk[b])) }
	var table *bitTable
	if n <= maxTable {
		// Every trial asks the same few comparisons again: answer them
		// from a table, read inline by sortTable (slices.SortFunc's moves).
		table = &bitTable{bits: lessTable(c, uk), n: n}
	}
	work := make([]int, n)
	for t := 0; t < trials; t++ {
		for i := range work {
			work[i] = i
		}
		// rng.Shuffle's Fisher-Yates, without a call per swap.
		for i := n - 1; i > 0; i-- {
			j := int(rng.Uint64N(uint64(i + 1)))
			work[i], work[j] = work[j], work[i]
		}
		if table != nil {
			sortTable(work, table)
		} else {
			slices.SortFunc(work, cmpf)
		}
		for _, pos := range work[:cut] {
			took(pos)
		}
		end()
	}
}

// lessCmp turns Less into a comparison for slices.SortFunc, which only
// asks whether it is negative.
func lessCmp(less bool) int {
	if less {
		return -1
	}
	return 1
}

// enumerated places an intransitive group whose every input order was
// followed (see enumerate): exact probabilities, no sampling.
func enumerated(active []*Pod, members, universe []int, counts []int64, total int64, from, d, round, groupBase int, placed []Placed, rule Rule, reason string) []Contenders {
	count := make(map[int]int64, len(members))
	for i, k := range universe {
		count[k] = counts[i]
	}
	g := Contenders{Delete: d - from, Rule: rule, Reason: reason, Round: round, Enumerated: true}
	return placeOpen(active, members, from, d, groupBase, placed, g, func(k int) float64 {
		return float64(count[k]) / float64(total)
	})
}

// placeOpen writes an open group into placed[from:], most likely to go
// first (the name keeps equal chances reproducible).
func placeOpen(active []*Pod, members []int, from, d, groupBase int, placed []Placed, g Contenders, prob func(k int) float64) []Contenders {
	slices.SortStableFunc(members, func(a, b int) int {
		if r := cmp.Compare(prob(b), prob(a)); r != 0 {
			return r
		}
		return cmp.Compare(active[a].Name, active[b].Name)
	})
	for i, k := range members {
		pl := &placed[from+i]
		pl.Pod, pl.Group = active[k], groupBase
		pl.Probability = prob(k)
		pl.Certain = false
		pl.Delete = from+i < d
		g.Pods = append(g.Pods, active[k].Name)
	}
	return []Contenders{g}
}

func allSame(members []int, f func(int) int64) bool {
	for _, k := range members[1:] {
		if f(k) != f(members[0]) {
			return false
		}
	}
	return true
}

func anyRepeated(members []int, f func(int) int64) bool {
	seen := make(map[int64]bool, len(members))
	for _, k := range members {
		v := f(k)
		if seen[v] {
			return true
		}
		seen[v] = true
	}
	return false
}
