package workload

import (
	"fmt"
	"math"
	"slices"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// Branch is one interleaving of the controllers the Deployment model
// explored, with its weight (the weights of all branches sum to 1).
type Branch struct {
	Label   string
	Weight  float64
	Victims []string
}

// branch is a Branch with its full prediction.
type branch struct {
	Branch
	pred *prediction.Prediction
	// realized: pods whose tie or intransitive group became a choice of
	// the simulation, with the group's reason.
	realized map[string]string
	// flips: variants of small weight (a share of Weight) in which a
	// ReplicaSet saw its siblings' deletions partly (partialViews).
	flips []partialFlip
	// at: the interleaving's weight under other timing weights (before
	// normalizing), nil where it does not depend on them.
	at func(t *timing) float64
}

// weightAt is the branch's weight under timing t, before normalizing.
func (b branch) weightAt(t *timing) float64 {
	if b.at == nil {
		return b.Weight
	}
	return b.at(t)
}

// explored says where an exploration stopped short: past the cap on
// interleavings (and the weight left out), or with an open group whose
// outcomes were not all followed. Either way unexplored choices may
// change a fate.
type explored struct {
	truncated  bool
	unexplored float64
	partial    bool
	// unchecked: some ReplicaSet ranks on too many nodes for every partial
	// view of its siblings' deletions to be tried.
	unchecked bool
}

func (e explored) complete() bool { return !e.truncated && !e.partial && !e.unchecked }

// DeploymentBranches lists the interleavings the model explores for a
// Deployment scale and the victims of each: for tests that compare them
// with the real controllers.
func DeploymentBranches(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, o Options) ([]Branch, error) {
	bs, _, err := exploreDeployment(s, ref, replicas, o)
	if err != nil {
		return nil, err
	}
	var out []Branch
	for _, b := range bs {
		main := b.Branch
		for _, f := range b.flips {
			// As victims: the pods that gain most replace those that lose.
			var in, lose []string
			for n, d := range f.delta {
				if d > 0.5 {
					in = append(in, n)
				} else if d < -0.5 {
					lose = append(lose, n)
				}
			}
			slices.Sort(in)
			v := slices.DeleteFunc(slices.Clone(b.Victims), func(n string) bool { return slices.Contains(lose, n) })
			out = append(out, Branch{Label: b.Label + ", siblings' deletions partly visible", Weight: b.Weight * f.weight, Victims: append(v, in...)})
			main.Weight -= b.Weight * f.weight
		}
		out = append(out, main)
	}
	return out, nil
}

// predictDeployment simulates the scale and the rollout syncs after it
// under every interleaving of the controllers that can change the outcome.
// A pod's fate is certain only if every interleaving gives it the same
// fate; otherwise its chance is the weighted mix.
func predictDeployment(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, o Options) (*prediction.Prediction, error) {
	bs, ex, err := exploreDeployment(s, ref, replicas, o)
	if err != nil {
		return nil, err
	}
	return weighBranches(bs, ex), nil
}

// weighBranches merges the explored interleavings into one prediction.
func weighBranches(bs []branch, ex explored) *prediction.Prediction {
	ends := timingEnds(bs)
	pred := mergeBranches(bs)
	normalizeGroups(pred)
	chanceRanges(pred, ends)
	if !ex.complete() {
		// Unexplored interleavings may differ: no pod of a ReplicaSet that
		// changed size is certain.
		msg := fmt.Sprintf("more than %d interleavings of the controllers: the %d likeliest were weighed (the others weigh %.1f%% together), and no fate in a resized ReplicaSet is called certain", maxBranches, maxBranches, 100*ex.unexplored)
		switch {
		case ex.truncated:
		case ex.partial:
			msg = "a tie or an unordered group decides which pods an earlier step takes, and not all of its outcomes were followed into the later steps: no fate in a resized ReplicaSet is called certain"
		default:
			msg = fmt.Sprintf("ReplicaSets shrink together and rank pods on more than %d nodes, or need more than %d partial views of each other's deletions, too many to try: no fate in a resized ReplicaSet is called certain", maxPartialNodes, maxPartialViews)
		}
		pred.Warnings = append(pred.Warnings, msg)
		resized := map[string]bool{}
		for _, r := range pred.ReplicaSets {
			resized[r.Name] = r.Before != r.AfterScale || r.AfterScale != r.Final
		}
		for i := range pred.Pods {
			if p := &pred.Pods[i]; resized[p.ReplicaSet] && (p.Fate == prediction.FateDelete || p.Fate == prediction.FateKeep) {
				p.Certain = false
				pred.Certain = false
			}
		}
		pred.Message = summary(pred, false)
	}
	uniquePods(pred)
	return pred
}

// exploreDeployment runs the simulation once per interleaving, without
// the stableUntil search, then the most likely one again in full.
func exploreDeployment(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, o Options) ([]branch, explored, error) {
	fast := o
	fast.branchOnly = true
	var memo *runMemo
	if !o.reference {
		memo = newRunMemo(s.Pods)
	}
	// A first run under the default choices is the lookahead for shrinks
	// that race the next sync's.
	first, err := newDepSim(s, ref, replicas, fast, &schedule{weight: 1}, memo)
	if err != nil {
		return nil, explored{}, err
	}
	first.run()
	fut := lookaheads(s, ref, replicas, fast, memo)
	out, picks, ex := explorePass(s, ref, replicas, fast, memo, first.trace, fut)
	return finishExploration(s, ref, replicas, o, memo, first.trace, fut, out, picks), ex, nil
}

// lookaheads are the futures a shrink's next resize is read from: how the
// rollout goes on under each way the deployment controller can read the
// statuses (a stale status lets it go further), every other choice at its
// default. The heaviest maxLookaheads of them.
func lookaheads(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, fast Options, memo *runMemo) futures {
	var fut futures
	queue := []pending{{mass: 1}}
	for len(queue) > 0 && len(fut) < maxLookaheads {
		var next pending
		next, queue = popHeaviest(queue)
		sc := &schedule{picks: next.picks, weight: 1, statusOnly: true}
		sim, _ := newDepSim(s, ref, replicas, fast, sc, memo)
		sim.run()
		if k := slices.IndexFunc(fut, func(f future) bool { return sameResizes(f.trace, sim.trace) }); k >= 0 {
			fut[k].weight += sc.weight
		} else {
			fut = append(fut, future{sim.trace, sc.weight})
		}
		queue = append(queue, sc.alternatives(len(next.picks))...)
	}
	return fut
}

// maxLookaheads bounds the futures followed for the next resizes.
const maxLookaheads = 16

// explorePass runs every interleaving, heaviest first, up to the cap.
func explorePass(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, fast Options, memo *runMemo, plan []syncTrace, fut futures) ([]branch, [][]int, explored) {
	var out []branch
	var picks [][]int
	total := 0.0
	var ex explored
	// Heaviest first: past the cap, what is left weighs least.
	queue := []pending{{mass: 1}}
	for len(queue) > 0 {
		if len(out) == maxBranches {
			ex.truncated = true
			break
		}
		var next pending
		next, queue = popHeaviest(queue)
		sc := &schedule{picks: next.picks, weight: 1}
		sim, _ := newDepSim(s, ref, replicas, fast, sc, memo)
		sim.plan, sim.futures = plan, fut
		p := sim.run()
		normalizeGroups(p)
		out = append(out, branch{Branch{Label: labelOf(sc.labels), Weight: sc.weight, Victims: slices.Clone(p.Victims)}, p, sim.realized, flipsOf(p, sim.partly), sc.weightAt})
		ex.partial = ex.partial || sim.partial
		ex.unchecked = ex.unchecked || sim.unchecked
		picks = append(picks, slices.Clone(sc.picks[:sc.pos]))
		total += sc.weight
		queue = append(queue, sc.alternatives(len(next.picks))...)
	}
	for i := range out {
		out[i].Weight /= total
	}
	for _, q := range queue {
		ex.unexplored += q.mass
	}
	return out, picks, ex
}

// finishExploration runs the most likely interleaving again in full.
func finishExploration(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, o Options, memo *runMemo, plan []syncTrace, fut futures, out []branch, picks [][]int) []branch {
	best := 0
	for i := range out {
		if out[i].Weight > out[best].Weight {
			best = i
		}
	}
	sim, _ := newDepSim(s, ref, replicas, o, &schedule{picks: picks[best], weight: 1}, memo)
	sim.plan, sim.futures = plan, fut
	p := sim.run()
	normalizeGroups(p)
	out[best].pred = p
	return out
}

// mergeBranches starts from the most likely interleaving and gives every
// pod its chance over all of them; pods whose fate differs between
// interleavings become one open group.
func mergeBranches(bs []branch) *prediction.Prediction {
	base := bs[0]
	for _, b := range bs[1:] {
		if b.Weight > base.Weight {
			base = b
		}
	}
	pred := base.pred
	if len(bs) == 1 {
		return pred
	}
	mixes, realized := mixBranches(bs)
	openBy, expected := map[string][]string{}, map[string]float64{}
	var rsOrder []string
	for i := range pred.Pods {
		p := &pred.Pods[i]
		if !openByTiming(p, mixes[p.Name], realized[p.Name]) {
			continue
		}
		if openBy[p.ReplicaSet] == nil {
			rsOrder = append(rsOrder, p.ReplicaSet)
		}
		openBy[p.ReplicaSet] = append(openBy[p.ReplicaSet], p.Name)
		expected[p.ReplicaSet] += p.DeleteProbability
	}
	if len(openBy) == 0 {
		return pred
	}
	pred.Warnings = append(pred.Warnings, fmt.Sprintf("%d interleavings of the controllers weighed; the most likely (%.0f%%): %s", len(bs), 100*base.Weight, base.Label))
	pred.Certain = false
	// One open group per ReplicaSet: each one's count of victims is its
	// own, so the likeliest pods are chosen within each.
	for _, rs := range rsOrder {
		open := openBy[rs]
		g := len(pred.Contenders)
		for i := range pred.Pods {
			if slices.Contains(open, pred.Pods[i].Name) {
				pred.Pods[i].ContenderGroup = &g
			}
		}
		k := int(expected[rs] + 0.5)
		pred.Contenders = append(pred.Contenders, prediction.ContenderGroup{ReplicaSet: rs, Pods: open, Delete: k, Rule: prediction.RuleRace,
			Reason: "the controllers run concurrently and their timing decides these pods (weighted by measured frequencies)"})
		mostLikely(pred, open, k)
	}
	pred.Message = summary(pred, false)
	return pred
}

// mix is one pod over every interleaving.
type mix struct {
	p     float64 // its chance of deletion, weighted
	fates map[string]bool
	probs map[float64]bool
	steps map[string]bool
	// moved: a partial view moves its chance.
	moved bool
}

// mixBranches weighs each pod over the interleavings, and gathers the
// pods whose open group some interleaving made a choice, with the
// group's reason (the first interleaving's, as listed).
func mixBranches(bs []branch) (map[string]*mix, map[string]string) {
	mixes, realized := map[string]*mix{}, map[string]string{}
	for _, b := range bs {
		for n, why := range b.realized {
			if realized[n] == "" {
				realized[n] = why
			}
		}
		for _, p := range b.pred.Pods {
			m := mixes[p.Name]
			if m == nil {
				m = &mix{fates: map[string]bool{}, probs: map[float64]bool{}, steps: map[string]bool{}}
				mixes[p.Name] = m
			}
			m.p += b.Weight * p.DeleteProbability
			m.fates[p.Fate] = true
			m.probs[p.DeleteProbability] = true
			m.steps[p.Step] = true
		}
		for _, f := range b.flips {
			// In that variant these pods' chances move.
			for n, d := range f.delta {
				m := mixes[n]
				if m == nil {
					continue
				}
				m.p += b.Weight * f.weight * d
				m.moved = true
				if d > 0 {
					m.fates[prediction.FateDelete] = true
				} else {
					m.fates[prediction.FateKeep] = true
				}
			}
		}
	}
	return mixes, realized
}

// openByTiming gives p its chance over the interleavings and says whether
// the controllers' timing leaves its fate open; a pod whose fate is the
// same in all of them may still be taken at either step.
func openByTiming(p *prediction.Pod, m *mix, realizedWhy string) bool {
	if len(m.fates) == 1 && len(m.probs) == 1 && !m.moved {
		if len(m.steps) > 1 && p.Fate == prediction.FateDelete && realizedWhy != "" {
			p.Step = prediction.StepEither // which step takes it is open
		}
		return false
	}
	if p.Fate != prediction.FateDelete && p.Fate != prediction.FateKeep {
		return false
	}
	p.Certain = false
	p.DeleteProbability = math.Round(m.p*1e6) / 1e6
	p.Reason = "the controllers' timing decides: whether a sibling ReplicaSet's victims are already gone when this ReplicaSet ranks its pods, or whether the rollout reads a ReplicaSet status from before its deletions"
	if realizedWhy != "" {
		p.Reason = realizedWhy + "; which of them an earlier step took also decides the later steps"
	}
	return true
}

// uniquePods keeps the first entry of each pod, in the table and in the
// victims: a pod is listed once whatever the model's steps did.
func uniquePods(pred *prediction.Prediction) {
	seen := map[string]bool{}
	pods := pred.Pods[:0]
	for _, p := range pred.Pods {
		if !seen[p.Name] {
			seen[p.Name] = true
			pods = append(pods, p)
		}
	}
	pred.Pods = pods
	clear(seen)
	victims := pred.Victims[:0]
	for _, v := range pred.Victims {
		if !seen[v] {
			seen[v] = true
			victims = append(victims, v)
		}
	}
	pred.Victims = victims
}
