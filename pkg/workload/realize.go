package workload

import (
	"fmt"
	"slices"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// realizeOpen makes an open choice inside one ReplicaSet's ranking (a tie
// or an intransitive group at its cut) a choice of the simulation when a
// later step can depend on it: which members went changes the ranks the
// siblings count and what the same ReplicaSet keeps for its next step.
// Each outcome of the group becomes an option with its own chance, so the
// later steps are computed for each, and certainty and odds come out of
// the joint outcome instead of one member's chance.
func (sim *depSim) realizeOpen(r *depRS, run *rsRun, later bool) {
	if len(run.open) == 0 {
		return
	}
	if !later || sim.partial {
		// Nothing expected after it, or certainty is given up already:
		// the likeliest outcome stands for the rest, at no further cost.
		sim.unrealized = true
		return
	}
	if run.rounds > 1 {
		// Which pods an earlier round took is not followed into the next.
		sim.partial = true
		return
	}
	// The run may be shared with other interleavings (runMemo): change a copy.
	run.pods, run.victims = slices.Clone(run.pods), slices.Clone(run.victims)
	byName := map[string]int{}
	for i, p := range run.pods {
		byName[p.Name] = i
	}
	var kept []prediction.ContenderGroup
	for gi, g := range run.open {
		outcomes, follow := sim.outcomesToFollow(g, run.pods, byName)
		if !follow {
			kept = append(kept, run.contenders[gi])
			continue
		}
		opts := make([]option, len(outcomes))
		for i, o := range outcomes {
			opts[i] = option{fmt.Sprintf("%s takes %s", r.rs.Name, strings.Join(o.Delete, "+")), o.Probability, nil}
		}
		pick := outcomes[sim.sched.choose(opts)]
		for _, n := range g.Pods {
			i, ok := byName[n]
			if !ok {
				continue
			}
			p := &run.pods[i]
			p.Fate, p.DeleteProbability = prediction.FateKeep, 0
			if slices.Contains(pick.Delete, n) {
				p.Fate, p.DeleteProbability = prediction.FateDelete, 1
			}
			p.Certain, p.ContenderGroup = true, nil
			p.Reason = g.Reason
			sim.realized[n] = g.Reason
		}
	}
	run.contenders = kept
	run.open = nil
	run.victims = run.victims[:0]
	run.certain = len(kept) == 0
	for _, p := range run.pods {
		if p.Fate == prediction.FateDelete {
			run.victims = append(run.victims, p.Name)
		}
		if !p.Certain {
			run.certain = false
		}
	}
}

// outcomesToFollow says whether a group's outcomes are followed one by
// one, and which. It is not when its members stay interchangeable; nor when
// its outcomes are unknown or too many to list, and then no certainty is
// claimed after it (the likeliest outcome stands for the rest).
func (sim *depSim) outcomesToFollow(g engine.Contenders, pods []prediction.Pod, byName map[string]int) ([]engine.Outcome, bool) {
	switch {
	case !slices.ContainsFunc(g.Pods, func(n string) bool { return !isCreated(n) }):
		// Only pods this simulation creates.
		return nil, false
	case g.Exact && sameNode(pods, byName, g.Pods):
		// A full tie on one node: same rules and same rank for every later
		// step, and the members' shares follow from the deaths over all
		// steps.
		return nil, false
	}
	outcomes, partial := g.Outcomes(maxOutcomes)
	if len(outcomes) == 0 || partial || slices.ContainsFunc(g.Pods, isCreated) {
		sim.partial = true
		return nil, false
	}
	return outcomes, true
}

// laterSteps reports whether something after shrink k of this sync can
// depend on which pods it takes: a shrink ranked after it that sees its
// victims, or another sync of the plan.
func (sim *depSim) laterSteps(k int, order []int, sees [][]bool) bool {
	if sim.plan == nil {
		return false // the lookahead run itself
	}
	if sim.syncNo+1 < len(sim.plan) {
		return true
	}
	at := slices.Index(order, k)
	for _, j := range order[at+1:] {
		if sees[j][k] {
			return true
		}
	}
	return false
}

// sameNode: every named pod is on the same node (or none is scheduled).
func sameNode(pods []prediction.Pod, byName map[string]int, names []string) bool {
	node := pods[byName[names[0]]].Node
	for _, n := range names[1:] {
		if pods[byName[n]].Node != node {
			return false
		}
	}
	return true
}

// maxOutcomes bounds the outcomes of a group followed one by one.
const maxOutcomes = 64
