package workload

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The controllers' timing leaves a few choices open between the scale and
// the end of the rollout's follow-up syncs (docs/deployments.md explains
// each one and where its weight comes from):
//
//   - visibility: ReplicaSets shrunk in the same deployment sync are
//     handled concurrently by the ReplicaSet controller. Each one ranks its
//     pods by counting the related pods on their node; a sibling's victims
//     count only until its deletion reaches the informer. Each one may see,
//     or not, the victims of each sibling written before it.
//   - stale status: after deleting available pods, a ReplicaSet's status
//     still counts them until its controller has seen them go, so the next
//     deployment sync may read the old availability.
//   - merged steps: a ReplicaSet shrunk by two consecutive syncs may be
//     handled by one sync of its controller (one sort for both).
//   - next sync's victims: the next sync may shrink another ReplicaSet
//     before this one ranks, its victims already terminating.
//   - partial visibility: any part of those deletions, and of the
//     previous sync's deletions in other ReplicaSets, may be visible when
//     a ReplicaSet ranks (partial.go).
//
// Weights are relative frequencies measured with the real controllers of
// Kubernetes 1.37 in-process (test/inprocess); see docs/deployments.md.
// The choices are explored whenever they can occur, whatever their weight:
// certainty never depends on a weight.
const (
	// weightSeesPrevious: a ReplicaSet written right after a sibling in
	// the same sync ranks after that sibling's deletions are visible. The
	// deployment controller writes them one API call after the other, and
	// each ReplicaSet controller ranks as soon as it sees its update, so
	// the race is close. Real control plane: 0.2 to 0.5 in three runs of
	// 30 of TestSiblingRaceRepeats (the busier the machine, the more), 0.5
	// in 30 runs of the third ReplicaSet seeing the second's
	// (TestThreeReplicaSetRaceRepeats): 0.375 over the 120. In-process:
	// 0.45 fits best the runs of the nine random scenarios where it
	// mattered without a tie.
	weightSeesPrevious = 0.4
	// weightSeesTwoBefore: the same for the sibling written two calls
	// before, with a call more of head start: 24 of 30 runs on a real
	// control plane (TestThreeReplicaSetRaceRepeats).
	weightSeesTwoBefore = 0.7
	// weightOtherOrder: the deletions land in another order than the
	// writes (the orders share it).
	weightOtherOrder = 0.02
	// statusFreshAtOnce: every shrunk ReplicaSet's status is fresh before
	// the deployment controller syncs again: 32 to 46% of the runs in the
	// five scenarios of seeds 7, 11 and the default seed where it mattered.
	statusFreshAtOnce = 0.35
	// statusOtherOrderNewFirst: the statuses turn fresh in another order
	// than the one the ReplicaSets were written in (the orders share it),
	// when the new ReplicaSet was written first. The old one written after
	// it then often turns fresh first: in 105 of 410 runs of the six
	// scenarios where only that order changed the outcome (seeds 7, 11
	// and 31337), 0.39 of the runs with stale statuses.
	statusOtherOrderNewFirst = 0.4
	// statusOtherOrderOldFirst: the same when an old ReplicaSet was
	// written first; the write order held in every run of the three
	// scenarios of the default seed where it decided a pod (0374, 0809,
	// 0885).
	statusOtherOrderOldFirst = 0.05
	// statusOtherOrderOfThree: of three ReplicaSets shrunk in one sync,
	// the statuses turn fresh in another order than the one they were
	// written in. Each controller writes its fresh status once it has seen
	// its own deletions go, and the three work at the same time: one with
	// a single deletion is done before one written earlier with five, so
	// the write order is only a head start. rollout-three-rs-timing
	// (the new ReplicaSet written second, fresh last in the outcome that
	// differs): 0.16 to 0.32 of in-process runs from 5 ms to 0 API
	// latency, 0.37 in the held-out report: 0.4 of the five other orders'
	// share, so the share is about 0.5 to 0.95 (uniform: 0.83).
	statusOtherOrderOfThree = 0.75
	// statusBatched: of three, the deployment controller reads the first
	// fresh status alone, then the other two at once (it is writing its
	// own status while they land), rather than each one in turn. With
	// overlapping API calls each one in turn was read in 28 of 28 runs of
	// the one scenario where it mattered; with calls one at a time, the
	// other two at once in 45 to 48 of 50 in two: a close race.
	statusBatched = 0.5
	// weightMergedSteps: a ReplicaSet shrunk by two consecutive syncs is
	// handled by one sync of its controller (one sort for both steps):
	// 39 of 993 runs in-process where it mattered.
	weightMergedSteps = 0.05
	// weightSeesNextSync: a ReplicaSet ranks after the next deployment
	// sync's victims in other ReplicaSets are already terminating: 0 of
	// 156 runs in-process where it mattered (default seed), 6 of 50 in the
	// one scenario of seeds 7 and 11 where it did.
	weightSeesNextSync = 0.1
	// weightOvertaken: a ReplicaSet shrunk and then grown back by the
	// rollout syncs right after sees only the final size (6 of 2,337
	// in-process runs where it could happen, at most 1 of 50 in one
	// scenario).
	weightOvertaken = 0.02
	// weightPartlyVisible: a ReplicaSet ranks while only some of its
	// siblings' deletions are visible (1 of 50 runs, twice, in the one
	// scenario of the default seed where it changed a victim).
	weightPartlyVisible = 0.02
)

// maxBranches bounds the interleavings explored; beyond it the prediction
// warns and only the explored ones count.
const maxBranches = 256

// option is one way a choice can go and its relative weight; at gives
// the weight under other timing weights (nil: it does not depend on them).
type option struct {
	label  string
	weight float64
	at     func(t *timing) float64
}

// timed is an option whose weight depends on the timing weights.
func timed(label string, at func(t *timing) float64) option {
	return option{label, at(&centralTiming), at}
}

// shareAt is option i's share of its choice under timing t.
func shareAt(opts []option, i int) func(t *timing) float64 {
	fixed := true
	for _, o := range opts {
		fixed = fixed && o.at == nil
	}
	if fixed {
		total := 0.0
		for _, o := range opts {
			total += o.weight
		}
		share := opts[i].weight / total
		return func(*timing) float64 { return share }
	}
	opts = slices.Clone(opts)
	return func(t *timing) float64 {
		total, mine := 0.0, 0.0
		for k, o := range opts {
			w := o.weight
			if o.at != nil {
				w = o.at(t)
			}
			total += w
			if k == i {
				mine = w
			}
		}
		if total <= 0 {
			return 0
		}
		return mine / total
	}
}

// schedule replays a prefix of choices and records the choices met after
// it (taking the first option), so that every interleaving can be
// enumerated by re-running the simulation.
type schedule struct {
	picks  []int
	pos    int
	weight float64
	labels []string
	// shares: each option's share of its choice, per choice met.
	shares [][]float64
	// statusOnly: only the deployment controller's reading of statuses is
	// a choice (chooseStatus); every other one takes its default.
	statusOnly bool
	// at: each choice met, the picked option's share under other timing
	// weights.
	at []func(t *timing) float64
}

// weightAt is the interleaving's weight under timing t.
func (s *schedule) weightAt(t *timing) float64 {
	w := 1.0
	for _, f := range s.at[:s.pos] {
		w *= f(t)
	}
	return w
}

func (s *schedule) choose(opts []option) int {
	if s.statusOnly {
		return 0
	}
	return s.chooseStatus(opts)
}

// chooseStatus is choose for the views of stale statuses.
func (s *schedule) chooseStatus(opts []option) int {
	if len(opts) == 1 {
		return 0
	}
	if s.pos >= len(s.picks) {
		s.picks = append(s.picks, 0)
	}
	i := s.picks[s.pos]
	s.pos++
	total := 0.0
	for _, o := range opts {
		total += o.weight
	}
	shares := make([]float64, len(opts))
	for k, o := range opts {
		shares[k] = o.weight / total
	}
	s.shares = append(s.shares[:s.pos-1], shares)
	s.at = append(s.at[:s.pos-1], shareAt(opts, i))
	s.weight *= shares[i]
	s.labels = append(s.labels, opts[i].label)
	return i
}

// pending is a set of interleavings not yet run: those that start with
// picks, and their total weight.
type pending struct {
	picks []int
	mass  float64
}

// alternatives are the interleavings a run of s leaves to explore: after
// the prefix it was given, each choice it met could have gone another way.
func (s *schedule) alternatives(given int) []pending {
	var out []pending
	w := 1.0
	for j := 0; j < s.pos; j++ {
		if j >= given {
			for a := range s.shares[j] {
				if a != s.picks[j] {
					out = append(out, pending{append(slices.Clone(s.picks[:j]), a), w * s.shares[j][a]})
				}
			}
		}
		w *= s.shares[j][s.picks[j]]
	}
	return out
}

// popHeaviest takes the pending set of the largest weight, so that a
// bounded exploration covers as much of the weight as it can.
func popHeaviest(q []pending) (pending, []pending) {
	best := 0
	for i := range q {
		if q[i].mass > q[best].mass {
			best = i
		}
	}
	p := q[best]
	q[best] = q[len(q)-1]
	return p, q[:len(q)-1]
}

// chooseVisibility returns, for k concurrent shrinks in write order,
// sees[a][b]: shrink a ranks with shrink b's victims already gone; and an
// order to compute them in. Mostly each one sees, or not, each sibling
// written before it, the more likely the earlier that sibling was written;
// rarely the deletions land in another order. Past three shrinks only
// "none" and "all written before" are told apart.
func (sim *depSim) chooseVisibility(k int) (sees [][]bool, order []int) {
	sees = make([][]bool, k)
	for i := range sees {
		sees[i] = make([]bool, k)
	}
	order = make([]int, k)
	for i := range order {
		order[i] = i
	}
	if k < 2 {
		return sees, order
	}
	orders := permutations(k)
	if k > 3 {
		rev := slices.Clone(order)
		slices.Reverse(rev)
		orders = [][]int{order, rev}
	}
	// The usual case goes unlabelled: its pairs below say what was seen.
	opts := []option{timed("", func(t *timing) float64 { return 1 - t[raceOtherOrder] })}
	others := float64(len(orders) - 1)
	for _, o := range orders[1:] {
		opts = append(opts, timed(fmt.Sprintf("deletions seen in order %v", o), func(t *timing) float64 { return t[raceOtherOrder] / others }))
	}
	if c := sim.sched.choose(opts); c > 0 {
		order = orders[c]
		seeAllBefore(sees, order)
		return sees, order
	}
	if k > 3 {
		if sim.sched.choose(yesNo(raceSeesPrevious, "no ReplicaSet sees a sibling's deletions", "each ReplicaSet sees the deletions of those written before it")) == 1 {
			seeAllBefore(sees, order)
		}
		return sees, order
	}
	for a := 1; a < k; a++ {
		for b := 0; b < a; b++ {
			r := raceSeesPrevious
			if a-b > 1 {
				r = raceSeesTwoBefore
			}
			sees[a][b] = sim.sched.choose(yesNo(r,
				fmt.Sprintf("ReplicaSet written %s does not see the %s's deletions", ordinal(a+1), ordinal(b+1)),
				fmt.Sprintf("ReplicaSet written %s sees the %s's deletions", ordinal(a+1), ordinal(b+1)))) == 1
		}
	}
	return sees, order
}

// yesNo is a choice that goes the second way with race r's weight.
func yesNo(r race, no, yes string) []option {
	return []option{timed(no, func(t *timing) float64 { return 1 - t[r] }), timed(yes, func(t *timing) float64 { return t[r] })}
}

// seeAllBefore: each shrink ranks with the victims of those before it in
// order gone.
func seeAllBefore(sees [][]bool, order []int) {
	for i, a := range order {
		for _, b := range order[:i] {
			sees[a][b] = true
		}
	}
}

func ordinal(n int) string {
	switch n {
	case 1:
		return "1st"
	case 2:
		return "2nd"
	case 3:
		return "3rd"
	}
	return fmt.Sprintf("%dth", n)
}

func permutations(k int) [][]int {
	if k == 1 {
		return [][]int{{0}}
	}
	var out [][]int
	for _, p := range permutations(k - 1) {
		for pos := len(p); pos >= 0; pos-- {
			q := slices.Insert(slices.Clone(p), pos, k-1)
			out = append(out, q)
		}
	}
	// The write order first.
	slices.SortFunc(out, slices.Compare[[]int])
	return out
}

// freshSeq is one way the shrunk ReplicaSets' statuses turn fresh, as the
// deployment controller reads them: steps of indices into the stale ones,
// which are in write order.
type freshSeq struct {
	steps [][]int
	at    func(t *timing) float64
	label string
}

// freshSequences lists the ways k stale statuses can turn fresh after the
// deployment controller read them all stale, with their weights (together
// 1 - the weight of all fresh at once); otherOrder is the race of the
// orders other than the write order.
func freshSequences(k int, otherOrder race) []freshSeq {
	rest := func(t *timing) float64 { return 1 - t[raceFreshAtOnce] }
	if k == 1 {
		return []freshSeq{{[][]int{{0}}, rest, "stale status read first"}}
	}
	perms := permutations(k)
	writeOrder := func(t *timing) float64 { return rest(t) * (1 - t[otherOrder]) }
	n := float64(len(perms) - 1)
	var out []freshSeq
	for pi, p := range perms {
		oneByOne := make([][]int, len(p))
		for i, x := range p {
			oneByOne[i] = []int{x}
		}
		switch {
		case pi > 0:
			out = append(out, freshSeq{oneByOne, func(t *timing) float64 { return rest(t) * t[otherOrder] / n }, fmt.Sprintf("stale statuses turn fresh in order %v", p)})
		case k == 2:
			out = append(out, freshSeq{oneByOne, writeOrder, "stale statuses turn fresh in write order"})
		default:
			out = append(out,
				freshSeq{[][]int{{p[0]}, p[1:]}, func(t *timing) float64 { return writeOrder(t) * t[raceBatched] }, "first written status fresh, then the rest at once"},
				freshSeq{oneByOne, func(t *timing) float64 { return writeOrder(t) * (1 - t[raceBatched]) }, "stale statuses turn fresh one by one in write order"})
		}
	}
	return out
}

func labelOf(labels []string) string {
	named := slices.DeleteFunc(slices.Clone(labels), func(l string) bool { return l == "" })
	if len(named) == 0 {
		return "single interleaving"
	}
	return strings.Join(named, ", ")
}

// future is the syncs of one run (its resizes), with the weight of the
// interleavings that showed it.
type future struct {
	trace  []syncTrace
	weight float64
}

type futures []future

func sameResizes(a, b []syncTrace) bool {
	return slices.EqualFunc(a, b, func(x, y syncTrace) bool { return maps.Equal(x.to, y.to) })
}

// nextSizes: the sizes rs is given again one or two syncs after sync no,
// in each known future, with the share of the futures' weight.
func (fs futures) nextSizes(no int, rs string) (sizes []int32, shares []float64) {
	total := 0.0
	for _, f := range fs {
		total += f.weight
	}
	for _, f := range fs {
		for n := no + 1; n < len(f.trace) && n <= no+2; n++ {
			if b, ok := f.trace[n].to[rs]; ok {
				if k := slices.Index(sizes, b); k >= 0 {
					shares[k] += f.weight / total
				} else {
					sizes, shares = append(sizes, b), append(shares, f.weight/total)
				}
				break
			}
		}
	}
	return sizes, shares
}
