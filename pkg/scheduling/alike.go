package scheduling

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Alike places alike pods (one owner's replacements: the same spec and
// labels but for name and priority) one after another in a View as it
// changes. Per key it keeps each node's verdict and score and runs the
// filters again only on the nodes whose pods changed since, instead of on
// every node for each pod (a zone's thousands of replacements over
// thousands of nodes). A pod whose verdict on one node depends on the pods
// of others (topology spread, inter-pod affinity or anti-affinity of its
// own) gets a full pass, as PlaceTemplate gives it.
type Alike struct {
	v     *View
	byKey map[string]*alikeState
}

// alikeState is one key's verdicts, valid while the view's anti-affinity
// pods and nominations are those recorded (they reach every node) and,
// per node, while its generation is the one recorded.
type alikeState struct {
	priority  int32
	anti      []*PodInfo
	nominated []*corev1.Pod
	statics   []string // View.statics[key]
	gens      []uint64
	verdicts  []Verdict
	scores    []int64
	fits      []int    // the feasible nodes' indices, in node order
	feasible  []string // their names: shared with the placements returned
	listed    bool     // fits and feasible are set
}

// NewAlike places pods in v; v's nodes never change, its pods may.
func NewAlike(v *View) *Alike { return &Alike{v: v, byKey: map[string]*alikeState{}} }

// Place is PlaceTemplate for pods given the same key when alike, and the
// node the scheduler most likely picks (Placement.Likeliest). Feasible
// shares its array with other placements: never change it.
// LeastAllocated is not set.
func (a *Alike) Place(pod *corev1.Pod, key string) (Placement, string, error) {
	v := a.v
	c, err := v.cluster(pod)
	if err != nil {
		return Placement{}, "", err
	}
	if key == "" || len(c.spread) > 0 || len(c.affTerms) > 0 || len(c.antiTerms) > 0 {
		v.staticFilters(pod, c, key)
		pl := c.place()
		node := pl.Likeliest()
		pl.LeastAllocated = nil
		return pl, node, nil
	}
	st := a.state(pod, key, c)
	st.collect(v.nodes, st.refresh(c))
	pl := Placement{Unmodelled: append(c.Unmodelled, UnmodelledSpec(pod)...), Feasible: st.feasible}
	if len(st.fits) == 0 {
		pl.FitError = FitError(st.verdicts)
		return pl, "", nil
	}
	best := st.fits[0]
	for _, i := range st.fits {
		if st.scores[i] > st.scores[best] {
			best = i
		}
	}
	return pl, v.nodes[best].Node.Name, nil
}

// state is key's verdicts, cleared when what reaches every node changed.
func (a *Alike) state(pod *corev1.Pod, key string, c *Cluster) *alikeState {
	v := a.v
	st := a.byKey[key]
	if st != nil && st.priority == c.Pre.Priority && slices.Equal(st.anti, v.anti) && slices.Equal(st.nominated, v.nominated) {
		return st
	}
	v.staticFilters(pod, c, key)
	st = &alikeState{priority: c.Pre.Priority, anti: slices.Clone(v.anti), nominated: slices.Clone(v.nominated), statics: v.statics[key],
		gens: make([]uint64, len(v.nodes)), verdicts: make([]Verdict, len(v.nodes)), scores: make([]int64, len(v.nodes))}
	for i, n := range v.nodes {
		st.gens[i] = n.gen - 1 // every node to be filtered
	}
	a.byKey[key] = st
	return st
}

// refresh filters the nodes changed since; it returns those whose
// feasibility changed, in node order.
func (st *alikeState) refresh(c *Cluster) []int {
	var flips []int
	for i, n := range c.Nodes {
		if st.gens[i] == n.gen {
			continue
		}
		was := st.verdicts[i].Code == Fits && st.listed
		n.static = st.statics[i] // the node's static filters for this key
		st.verdicts[i] = c.FilterWithNominated(n)
		st.gens[i] = n.gen // after the filters: nominated pods move through the node
		fits := st.verdicts[i].Code == Fits
		if fits {
			st.scores[i] = c.leastAllocated(n)
		}
		if fits != was {
			flips = append(flips, i)
		}
	}
	return flips
}

// collect lists the feasible nodes again after flips. When nodes only left
// the front of the list (the likeliest filled first), the new list is a
// tail of the old one and shares its array.
func (st *alikeState) collect(nodes []*NodeState, flips []int) {
	switch k := len(flips); {
	case st.listed && k == 0:
		return
	case st.listed && k <= len(st.fits) && slices.Equal(st.fits[:k], flips):
		st.fits, st.feasible = st.fits[k:], st.feasible[k:]
		if len(st.fits) == 0 {
			st.fits, st.feasible = nil, nil // as Placement has none
		}
		return
	}
	st.fits, st.feasible, st.listed = nil, nil, true
	for i, v := range st.verdicts {
		if v.Code == Fits {
			st.fits = append(st.fits, i)
		}
	}
	if len(st.fits) > 0 {
		st.feasible = make([]string, len(st.fits))
		for j, i := range st.fits {
			st.feasible[j] = nodes[i].Node.Name
		}
	}
}
