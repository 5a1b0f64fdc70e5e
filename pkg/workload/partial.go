package workload

import (
	"maps"
	"slices"
	"strconv"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// A ReplicaSet controller deletes its victims with one API call each, so a
// sibling shrunk in the same sync may rank its pods while some of those
// deletions are visible and others are not yet. Its rank counts the
// related pods on each pod's node, so a pod's fate turns with how each
// node's count compares with the others'. Trying each node whose count can
// matter at its lowest and highest count, and at the counts between that
// tie another node's, with every other node at its lowest and at its
// highest, finds the views where a node counts least or most and those
// where it ties another (a tie hands the decision to a later rule).
// Those views whose victims differ become variants of small weight of the
// interleaving (partialFlip). The same holds for deletions of other syncs
// whose visibility is open: the next sync's (laterVictims) and the
// previous sync's in other ReplicaSets (earlierVictims).

// maxPartialNodes and maxPartialViews bound the partial views tried for
// one shrink (a run of the ReplicaSet each).
const (
	maxPartialNodes = 32
	maxPartialViews = 160
)

// partialViews returns the chances of the pods of shrink r (to replicas
// to, ranked with base gone) under each partial view that gives other
// victims than run, the run computed with the interleaving's own view.
// others are the deletions it may see in part: its siblings' in this sync
// and those of the previous or next sync not in base; saved is r before
// run.
func (sim *depSim) partialViews(r *depRS, to int32, base map[string]bool, others []string, run rsRun, saved depRS) []map[string]float64 {
	contested := sim.contestedNodes(run)
	if len(contested) == 0 {
		return nil
	}
	byNode := map[string][]string{}
	for _, n := range others {
		if node := sim.nodeOf(n); node != "" && !base[n] {
			byNode[node] = append(byNode[node], n)
		}
	}
	if len(byNode) == 0 {
		return nil
	}
	all := slices.Sorted(maps.Keys(byNode))
	nodes := slices.DeleteFunc(slices.Clone(all), func(n string) bool { return !contested[n] })
	between, size := tyingCounts(relatedCounts(&sim.work, r.like, sim.o, base), byNode, nodes)
	if len(nodes) > maxPartialNodes || size > maxPartialViews {
		// Too many views to try: certainty is given up instead.
		sim.unchecked = true
		return nil
	}
	probe := *sim
	probe.o.branchOnly = true
	outcomes := map[string]bool{fatesKey(run): true}
	var alts []map[string]float64
	for _, v := range partialViewSet(base, all, nodes, byNode, between) {
		rc := saved
		alt := probe.shrinkOne(&rc, to, v)
		if k := fatesKey(alt); !outcomes[k] {
			outcomes[k] = true
			alts = append(alts, chances(alt.pods))
		}
	}
	return alts
}

// contestedNodes: a pod whose fate a node count can turn was decided,
// against the boundary, by the node counts or a later rule; with none,
// every victim sorts before every survivor whatever the counts are. Such
// a pod sits on one of these nodes, or its fate turns with every count at
// once (the first two views of partialViewSet).
func (sim *depSim) contestedNodes(run rsRun) map[string]bool {
	contested := map[string]bool{}
	for _, p := range run.pods {
		if p.VsBoundary != nil && !beforeColocation(p.VsBoundary.Rule) {
			contested[sim.nodeOf(p.Name)] = true
		}
	}
	return contested
}

// tyingCounts: a count between a node's extremes matters where it ties
// another node's count (that node at one of its extremes). It returns
// those counts for each contested node and how many views they make.
func tyingCounts(counts map[string]int, byNode map[string][]string, nodes []string) (map[string][]int, int) {
	var levels []int
	for _, m := range slices.Sorted(maps.Keys(counts)) {
		levels = append(levels, counts[m], counts[m]-len(byNode[m]))
	}
	between := map[string][]int{}
	size := 2
	for _, n := range nodes {
		for _, lv := range levels {
			if c := counts[n] - lv; c > 0 && c < len(byNode[n]) && !slices.Contains(between[n], c) {
				between[n] = append(between[n], c)
			}
		}
		size += 2 * (len(between[n]) + 2)
	}
	return between, size
}

// partialViewSet are the distinct views to try: none and every one of the
// other deletions seen, and each contested node at its extremes and at
// the counts between them that tie another node's, the others at both
// extremes.
func partialViewSet(base map[string]bool, all, nodes []string, byNode map[string][]string, between map[string][]int) []map[string]bool {
	var views []map[string]bool
	seen := map[string]bool{}
	// add makes the view where count(node) of each node's victims are gone.
	add := func(count func(node string) int) {
		v := maps.Clone(base)
		var key []byte
		for _, node := range all {
			c := count(node)
			for _, n := range byNode[node][:c] {
				v[n] = true
			}
			key = strconv.AppendInt(append(key, node...), int64(c), 10)
			key = append(key, 0)
		}
		if k := string(key); !seen[k] {
			seen[k] = true
			views = append(views, v)
		}
	}
	none := func(string) int { return 0 }
	every := func(node string) int { return len(byNode[node]) }
	add(none)
	add(every)
	for _, only := range nodes {
		for _, c := range append([]int{0, len(byNode[only])}, between[only]...) {
			for _, rest := range []func(string) int{none, every} {
				add(func(node string) int {
					if node == only {
						return c
					}
					return rest(node)
				})
			}
		}
	}
	return views
}

// partialFlip is one partial view's effect on one shrink of a simulated
// interleaving: how much each pod's chance moves (delta) with the weight of
// the view. It is weighed as a variant of that interleaving without
// running the later steps again: its weight is small, and any pod it
// moves is no longer certain. A pod the interleaving deletes anyway (in a
// later step) cannot gain, and the losses are scaled to the gains, so the
// expected count stays the same.
type partialFlip struct {
	delta  map[string]float64
	weight float64
}

// partialView is one shrink's chances under the interleaving's view and
// under a partial view of its siblings' deletions, with the partial view's
// share of weightPartlyVisible.
type partialView struct {
	base, alt map[string]float64
	weight    float64
}

// flipsOf turns a simulation's partial views into flips of its final
// chances p.
func flipsOf(p *prediction.Prediction, partly []partialView) []partialFlip {
	if len(partly) == 0 {
		return nil
	}
	final := chances(p.Pods)
	var out []partialFlip
	for _, pv := range partly {
		if f, ok := flipOf(pv.base, pv.alt, final, pv.weight); ok {
			out = append(out, f)
		}
	}
	return out
}

// flipOf is the partialFlip from a shrink's chances base to alt, given
// the interleaving's final chances.
func flipOf(base, alt, final map[string]float64, weight float64) (partialFlip, bool) {
	f := partialFlip{delta: map[string]float64{}, weight: weight}
	gain, loss := 0.0, 0.0
	for _, n := range slices.Sorted(maps.Keys(alt)) {
		d := alt[n] - base[n]
		switch {
		case d > 0:
			d = min(d, 1-final[n])
			gain += d
		case d < 0:
			d = max(d, -final[n])
			loss -= d
		}
		if d != 0 {
			f.delta[n] = d
		}
	}
	if gain < 1e-9 || loss < 1e-9 {
		return partialFlip{}, false
	}
	for n, d := range f.delta {
		if d > 0 && gain > loss {
			f.delta[n] = d * loss / gain
		}
		if d < 0 && loss > gain {
			f.delta[n] = d * gain / loss
		}
	}
	return f, true
}

// chances is each pod's chance of deletion (the first entry of a name).
func chances(pods []prediction.Pod) map[string]float64 {
	out := make(map[string]float64, len(pods))
	for _, p := range pods {
		if _, ok := out[p.Name]; !ok {
			out[p.Name] = p.DeleteProbability
		}
	}
	return out
}

// beforeColocation: the rule is applied before the node counts.
func beforeColocation(rule string) bool {
	i := slices.Index(prediction.RuleIDs[:], rule)
	return i >= 0 && i < slices.Index(prediction.RuleIDs[:], prediction.RuleColocation)
}

// fatesKey names a run's outcome: its victims and its open groups.
func fatesKey(run rsRun) string {
	var b []byte
	for _, v := range run.victims {
		b = append(b, v...)
		b = append(b, 0)
	}
	for _, g := range run.contenders {
		b = append(b, 0xff)
		b = strconv.AppendInt(b, int64(g.Delete), 10)
		for _, n := range g.Pods {
			b = append(b, 0)
			b = append(b, n...)
		}
	}
	return string(b)
}

// nodeOf is the node a pod of the snapshot is bound to ("" if none).
// Built once per exploration when its simulations share a memo.
func (sim *depSim) nodeOf(name string) string {
	nodes := &sim.nodes
	if sim.memo != nil {
		nodes = &sim.memo.nodes
	}
	if *nodes == nil {
		*nodes = make(map[string]string, len(sim.work.Pods))
		for _, p := range sim.work.Pods {
			if p.Namespace == sim.d.Namespace {
				(*nodes)[p.Name] = p.Spec.NodeName
			}
		}
	}
	return (*nodes)[name]
}
