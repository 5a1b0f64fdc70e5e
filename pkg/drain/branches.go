package drain

import (
	"maps"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A race: kubectl evicts a node's pods in parallel, so the order in which
// one round's replacements reach the scheduler is timing. Where that
// order changed what the round's replacements got (checkRace), the round
// is a branch point: every distinct order of its replacements by owner
// (replacements of one owner are alike) is run, each as likely as any
// other, as every order of the parallel evictions is. A branch's chance
// is the product of 1/orders over the branch points on its path.

const (
	// maxOrders bounds the orders enumerated at one branch point; past it
	// only creation order and its reverse are run, and the chances are
	// not weighed (Result.Unweighed).
	maxOrders = 24
	// maxBranches bounds the runs of the enumeration (each is a whole
	// drain); past it the chances are not weighed either. branchPods
	// lowers it on large clusters (branchBudget).
	maxBranches = 16
	branchPods  = 40000
)

// branchBudget is how many runs the enumeration may make: at most
// maxBranches, and about branchPods pods' worth of runs, never fewer than
// two (creation order and one other, as many as the drain made before it
// enumerated).
func branchBudget(pods int) int {
	return max(2, min(maxBranches, branchPods/max(pods, 1)))
}

// script fixes the order of scripted rounds: round number → index into
// roundOrders; rounds not in it run in creation order.
type script map[int]int

// point is a round whose replacements raced, met past the run's frontier.
type point struct {
	round  int
	orders int  // distinct orders of the round
	capped bool // more than maxOrders: only creation order and its reverse
}

// branch is one run of the enumeration and its chance.
type branch struct {
	res  *Result
	seen facts
	p    float64
}

// todo is a run still to make: its script, the last scripted round (points
// at or before it are already branched on) and the chance of its prefix.
type todo struct {
	script   script
	frontier int
	p        float64
}

// enumerate runs the drain once per branch of the races, creation order
// first. exact is false when an order or the runs were capped.
func enumerate(start *state, f *kubectlFilters) (out []branch, exact bool) {
	exact = true
	budget := branchBudget(len(start.pods))
	queue := []todo{{script: script{}, frontier: -1, p: 1}}
	for len(queue) > 0 {
		if len(out) == budget {
			return out, false
		}
		t := queue[0]
		queue = queue[1:]
		s := start.clone(variants[0])
		s.script, s.frontier = t.script, t.frontier
		res, seen := run(s, f)
		p := t.p
		for _, pt := range seen.races {
			exact = exact && !pt.capped
			for c := 1; c < pt.orders; c++ {
				child := maps.Clone(t.script)
				child[pt.round] = c
				queue = append(queue, todo{script: child, frontier: pt.round, p: p / float64(pt.orders)})
			}
			p /= float64(pt.orders)
		}
		out = append(out, branch{res: res, seen: seen, p: p})
	}
	return out, exact
}

// raceClass is what makes replacements alike for the scheduler: the same
// controller (a StatefulSet's pod has an identity of its own).
func raceClass(p *podState) string {
	ref := metav1.GetControllerOfNoCopy(p.pod)
	if ref == nil || ref.Kind == "StatefulSet" || ref.UID == "" {
		return "pod:" + p.key
	}
	return string(ref.UID)
}

// roundOrders are the distinct orders of q by class, creation order
// first, at most limit+1 of them.
func roundOrders(q []*podState, limit int) [][]*podState {
	members := map[string][]*podState{}
	var classes []string
	for _, p := range q {
		c := raceClass(p)
		if _, ok := members[c]; !ok {
			classes = append(classes, c)
		}
		members[c] = append(members[c], p)
	}
	seq := make([]string, len(q))
	for i, p := range q {
		seq[i] = raceClass(p)
	}
	out := [][]*podState{q}
	left := map[string]int{}
	for c, m := range members {
		left[c] = len(m)
	}
	var walk func(prefix []string)
	walk = func(prefix []string) {
		if len(out) > limit {
			return
		}
		if len(prefix) == len(q) {
			if !slices.Equal(prefix, seq) {
				out = append(out, byClass(prefix, members))
			}
			return
		}
		for _, c := range classes {
			if left[c] > 0 {
				left[c]--
				walk(append(prefix, c))
				left[c]++
			}
		}
	}
	walk(make([]string, 0, len(q)))
	return out
}

// byClass is the order seq, each class's members in creation order.
func byClass(seq []string, members map[string][]*podState) []*podState {
	next := map[string]int{}
	out := make([]*podState, 0, len(seq))
	for _, c := range seq {
		out = append(out, members[c][next[c]])
		next[c]++
	}
	return out
}

// orderRound is the order this run places the round q in, and notes a
// branch point once the round turns out to have raced (markRaced).
func (s *state) orderRound(q []*podState) []*podState {
	r := s.rounds
	s.rounds++
	c, ok := s.script[r]
	if !ok || c == 0 {
		return q
	}
	orders := roundOrders(q, maxOrders)
	if len(orders) > maxOrders {
		return reversed(q)
	}
	return orders[c]
}

// markRaced records the round just placed (in creation order) as a
// branch point when it raced and lies past the frontier.
func (s *state) markRaced(q []*podState) {
	r := s.rounds - 1
	if r <= s.frontier {
		return // branched on already (the script covers rounds up to the frontier)
	}
	n := len(roundOrders(q, maxOrders))
	pt := point{round: r, orders: n}
	if n > maxOrders {
		pt.orders, pt.capped = 2, true
	}
	if pt.orders > 1 {
		s.seen.races = append(s.seen.races, pt)
	}
}

func reversed(q []*podState) []*podState {
	out := slices.Clone(q)
	slices.Reverse(out)
	return out
}
