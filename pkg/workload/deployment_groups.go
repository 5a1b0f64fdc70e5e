package workload

import (
	"slices"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// normalizeGroups settles open choices over the whole Deployment sequence:
// groups that share pods are merged; a group whose members all die (a tie
// cut by the scale whose rest the rollout takes) is certain, only the step
// being open; an exact tie spread over steps gives each member the share
// of its deaths. Group indices and the overall certainty are recomputed.
func normalizeGroups(pred *prediction.Prediction) {
	if len(pred.Contenders) == 0 {
		return
	}
	groups := mergeOverlapping(pred.Contenders)
	idx := map[string]int{}
	for i, p := range pred.Pods {
		idx[p.Name] = i
		pred.Pods[i].ContenderGroup = nil
	}
	pred.Contenders = nil
	for _, g := range groups {
		deleted := 0
		steps := map[string]bool{}
		for _, n := range g.Pods {
			if p := pred.Pods[idx[n]]; p.Fate == prediction.FateDelete {
				deleted++
				steps[p.Step] = true
			}
		}
		switch {
		// A RACE group is open across interleavings: never settled here.
		case deleted == len(g.Pods) && g.Rule != prediction.RuleRace:
			for _, n := range g.Pods {
				p := &pred.Pods[idx[n]]
				p.Certain, p.DeleteProbability = true, 1
				if len(steps) > 1 {
					p.Step = prediction.StepEither
				}
			}
			continue
		case deleted == 0 && g.Rule != prediction.RuleRace:
			for _, n := range g.Pods {
				p := &pred.Pods[idx[n]]
				p.Certain, p.DeleteProbability = true, 0
			}
			continue
		}
		if g.Exact && g.Rule != prediction.RuleRace {
			for _, n := range g.Pods {
				pred.Pods[idx[n]].DeleteProbability = float64(deleted) / float64(len(g.Pods))
			}
		}
		g.Delete = deleted
		gi := len(pred.Contenders)
		for _, n := range g.Pods {
			p := &pred.Pods[idx[n]]
			p.Certain = false
			p.ContenderGroup = &gi
		}
		pred.Contenders = append(pred.Contenders, g)
	}
	pred.Certain = true
	for _, p := range pred.Pods {
		if !p.Certain {
			pred.Certain = false
		}
	}
	pred.Message = summary(pred, false)
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// mostLikely makes the k most probable pods of an open group the victims
// (ties keep the simulated order's choice), then rebuilds the victims list
// and positions: victims first in their order, then kept pods.
func mostLikely(pred *prediction.Prediction, open []string, k int) {
	idx := map[string]int{}
	for i, p := range pred.Pods {
		idx[p.Name] = i
	}
	ranked := slices.Clone(open)
	slices.SortStableFunc(ranked, func(a, b string) int {
		pa, pb := pred.Pods[idx[a]], pred.Pods[idx[b]]
		if pa.DeleteProbability != pb.DeleteProbability {
			if pa.DeleteProbability > pb.DeleteProbability {
				return -1
			}
			return 1
		}
		if (pa.Fate == prediction.FateDelete) != (pb.Fate == prediction.FateDelete) {
			if pa.Fate == prediction.FateDelete {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for i, n := range ranked {
		p := &pred.Pods[idx[n]]
		p.Fate = prediction.FateKeep
		if i < k {
			p.Fate = prediction.FateDelete
			if p.Step == "" {
				p.Step = prediction.StepScale
			}
		}
	}
	slices.SortStableFunc(pred.Pods, func(a, b prediction.Pod) int {
		rank := func(p prediction.Pod) int {
			switch {
			case p.Fate == prediction.FateDelete:
				return 0
			case p.Position > 0:
				return 1
			}
			return 2
		}
		return rank(a) - rank(b)
	})
	pred.Victims = pred.Victims[:0]
	pos := 0
	for i := range pred.Pods {
		p := &pred.Pods[i]
		if p.Position > 0 || p.Fate == prediction.FateDelete {
			pos++
			p.Position = pos
		}
		switch p.Fate {
		case prediction.FateDelete:
			pred.Victims = append(pred.Victims, p.Name)
		case prediction.FateKeep:
			p.Step = ""
		}
	}
}

// mergeOverlapping merges contender groups that share pods, transitively:
// a group that joins two others (an interleavings' group over two exact
// ties) makes one group of all three.
func mergeOverlapping(contenders []prediction.ContenderGroup) []prediction.ContenderGroup {
	var groups []prediction.ContenderGroup
	for _, g := range contenders {
		into := -1
		for i := 0; i < len(groups); i++ {
			if !overlaps(groups[i].Pods, g.Pods) {
				continue
			}
			if into < 0 {
				into = i
				groups[i] = joinGroups(groups[i], g)
			} else {
				groups[into] = joinGroups(groups[into], groups[i])
				groups = slices.Delete(groups, i, i+1)
				i--
			}
			g = groups[into]
		}
		if into < 0 {
			groups = append(groups, g)
		}
	}
	return groups
}

// joinGroups is one group of a's and b's pods, a's first (a new slice:
// the inputs' pods are left as they are).
func joinGroups(a, b prediction.ContenderGroup) prediction.ContenderGroup {
	a.Pods = slices.Clone(a.Pods)
	for _, n := range b.Pods {
		if !slices.Contains(a.Pods, n) {
			a.Pods = append(a.Pods, n)
		}
	}
	a.Exact = a.Exact && b.Exact
	if b.Rule == prediction.RuleRace {
		a.Rule = prediction.RuleRace
	}
	if !strings.Contains(a.Reason, b.Reason) {
		a.Reason += "; " + b.Reason
	}
	return a
}
