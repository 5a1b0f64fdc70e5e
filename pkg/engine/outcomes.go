package engine

import (
	"cmp"
	"slices"
	"strings"
)

// Outcome is one way an open group can go: the members deleted (sorted by
// name) and how likely that is. A Deployment's later steps depend on which
// members an earlier step took, not only on each member's chance.
type Outcome struct {
	Delete      []string
	Probability float64
}

// Outcomes lists the ways the group can go, at most limit of them, from
// its joint outcome (recorded for a full tie, and for other groups when
// Input.Joint or the rounds ask for it). partial: some are left out, or
// the list is estimated from sort trials. A full tie with more subsets
// than limit is stood for by its cyclic windows in name order: each member
// is in m of the k windows, so its chance stays m/k.
func (g Contenders) Outcomes(limit int) (outcomes []Outcome, partial bool) {
	j := g.joint
	if j == nil {
		return nil, true
	}
	names := func(pods []*Pod) []string {
		out := make([]string, len(pods))
		for i, p := range pods {
			out[i] = p.Name
		}
		slices.Sort(out)
		return out
	}
	if j.uniform {
		members := names(j.members)
		k := len(members)
		if n, ok := choose(k, j.m, limit); ok {
			forSubsets(k, j.m, func(idx []int) {
				del := make([]string, len(idx))
				for i, x := range idx {
					del[i] = members[x]
				}
				outcomes = append(outcomes, Outcome{Delete: del, Probability: 1 / float64(n)})
			})
			return outcomes, false
		}
		for i := 0; i < k; i++ {
			del := make([]string, 0, j.m)
			for x := 0; x < j.m; x++ {
				del = append(del, members[(i+x)%k])
			}
			slices.Sort(del)
			outcomes = append(outcomes, Outcome{Delete: del, Probability: 1 / float64(k)})
		}
		return outcomes, true
	}
	for _, s := range j.sets {
		outcomes = append(outcomes, Outcome{Delete: names(s.pods), Probability: s.w})
	}
	slices.SortFunc(outcomes, func(a, b Outcome) int {
		if r := cmp.Compare(b.Probability, a.Probability); r != 0 {
			return r
		}
		return strings.Compare(strings.Join(a.Delete, ","), strings.Join(b.Delete, ","))
	})
	partial = j.sampled
	if len(outcomes) > limit {
		outcomes, partial = outcomes[:limit], true
	}
	return outcomes, partial
}
