package workload

import (
	"math"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// race is one timing race the Deployment model weighs (interleave.go).
// The cluster's load moves each one, and the plugin cannot see the load:
// each has a plausible range, from the measurements in
// docs/deployments.md (idle and loaded real control plane, in-process at
// low and high API latency), besides its central weight.
type race int

const (
	raceSeesPrevious race = iota
	raceSeesTwoBefore
	raceOtherOrder
	raceFreshAtOnce
	raceOtherOrderNewFirst
	raceOtherOrderOldFirst
	raceOtherOrderOfThree
	raceBatched
	raceMerged
	raceSeesNextSync
	raceOvertaken
	racePartly
	nRaces
)

// timing is one weight per race.
type timing [nRaces]float64

var centralTiming = timing{
	raceSeesPrevious:       weightSeesPrevious,
	raceSeesTwoBefore:      weightSeesTwoBefore,
	raceOtherOrder:         weightOtherOrder,
	raceFreshAtOnce:        statusFreshAtOnce,
	raceOtherOrderNewFirst: statusOtherOrderNewFirst,
	raceOtherOrderOldFirst: statusOtherOrderOldFirst,
	raceOtherOrderOfThree:  statusOtherOrderOfThree,
	raceBatched:            statusBatched,
	raceMerged:             weightMergedSteps,
	raceSeesNextSync:       weightSeesNextSync,
	raceOvertaken:          weightOvertaken,
	racePartly:             weightPartlyVisible,
}

// timingRange is each race's plausible range (docs/deployments.md, "The
// races and their ranges", says where each end comes from).
var timingRange = [nRaces][2]float64{
	// Real control plane 0.2 (idle) to 0.5 (loaded); in-process up to 0.64
	// for a sibling's three deletions. With a fast API the deployment
	// controller's writes land back to back, faster than a ReplicaSet
	// controller lists, ranks and issues its deletes: a later one then
	// ranks before any sibling's deletion lands (as the one written two
	// before, below).
	raceSeesPrevious: {0.01, 0.65},
	// 24 of 30 on an idle real control plane; in-process 0.86 to 0.89 at
	// 1.5 to 5 ms API latency, 0.48 at 0.1 ms, 0.16 at 0; 0.01 in the
	// held-out report of rollout-three-rs-rank (idle machine).
	raceSeesTwoBefore: {0.01, 0.9},
	raceOtherOrder:    {0.005, 0.05},
	// All fresh at once: 32 to 46% in-process at 1.5 ms API latency; 9 to
	// 11% at 0 to 0.1 ms (rollout-rare-certain); 2.5% in the held-out
	// report of it; 91% at 5 ms in a late rollout over three ReplicaSets
	// (default seed 0134), 86% in a held-out shape. The shape decides as
	// much as the load.
	raceFreshAtOnce:        {0.02, 0.92},
	raceOtherOrderNewFirst: {0.25, 0.5},
	raceOtherOrderOldFirst: {0, 0.1},
	// Of three shrunk at once: the write order is only a head start
	// (rollout-three-rs-timing: 0.16 to 0.37 for the two orders that leave
	// the new one last).
	raceOtherOrderOfThree: {0.4, 0.95},
	// Of three, each in turn in 28 of 28 runs (overlapping calls), the
	// other two at once in 45 to 48 of 50 (calls one at a time).
	raceBatched: {0.05, 0.95},
	// At an instant API the rollout's next resize can land before the
	// ReplicaSet controller syncs the first: 39 of 100 runs of default
	// seed 0274 at 0 ms (merged steps or partial visibility, the same
	// victims), a pod printed 2-14%.
	raceMerged: {0.01, 0.45},
	// 0 of 156 and 6 of 50 runs at 1.5 ms API latency; at 0.1 ms and 0
	// the next sync comes first in 0.65 and 0.77 of the runs (seed
	// 20261123, scenario 0128), never from 0.3 ms up.
	raceSeesNextSync: {0.01, 0.8},
	// 6 of 2,337 runs; 14 of 400 of rollout-rare-certain at 0 latency.
	// When the API answers at once or the controllers are starved, the
	// grow often lands before the ReplicaSet controller has synced the
	// shrink: 0.21 at 0 latency, 0.33 starved at 0, 0.03 starved at
	// 1.5 ms (default seed, scenario 0060; 0 at 1.5 ms unstarved).
	raceOvertaken: {0.005, 0.35},
	racePartly:    {0.01, 0.05},
}

// rangeShown: a pod's chance is printed as a range only where its ends
// differ by more than this.
const rangeShown = 0.05

// maxRangeRaces bounds the races whose ends are combined exhaustively
// (2^n timings); past it the ones that move the weights least stay
// central.
const maxRangeRaces = 8

// timingEnds gives each pod whose chance differs between interleavings
// its chance at the ends of the races' ranges: the least and the most over
// every combination of the races' ends that matter (a pod's chance is a
// product of one share per choice, so its extremes lie at the ends). It
// reads the branches' own chances: call it before mergeBranches.
func timingEnds(bs []branch) map[string][2]float64 {
	if len(bs) < 2 {
		return nil
	}
	moving := map[string]bool{}
	first := chances(bs[0].pred.Pods)
	for _, b := range bs {
		for _, p := range b.pred.Pods {
			if p.DeleteProbability != first[p.Name] {
				moving[p.Name] = true
			}
		}
		for _, f := range b.flips {
			for n := range f.delta {
				moving[n] = true
			}
		}
	}
	if len(moving) == 0 {
		return nil
	}
	own := make([]map[string]float64, len(bs))
	for i, b := range bs {
		own[i] = map[string]float64{}
		for _, p := range b.pred.Pods {
			if moving[p.Name] {
				own[i][p.Name] += p.DeleteProbability
			}
		}
	}
	active := activeRaces(bs)
	ends := map[string][2]float64{}
	for v := 0; v < 1<<len(active); v++ {
		t := centralTiming
		for k, r := range active {
			t[r] = timingRange[r][v>>k&1]
		}
		for n, x := range chancesAt(bs, own, &t) {
			e, ok := ends[n]
			if !ok {
				e = [2]float64{x, x}
			}
			ends[n] = [2]float64{math.Min(e[0], x), math.Max(e[1], x)}
		}
	}
	return ends
}

// chanceRanges gives the pods the controllers' timing decides their
// range. Ties and intransitive groups are not timing: their pods keep a
// single number.
func chanceRanges(pred *prediction.Prediction, ends map[string][2]float64) {
	for i := range pred.Pods {
		p := &pred.Pods[i]
		g := p.ContenderGroup
		e, ok := ends[p.Name]
		if !ok || p.Certain || g == nil || *g < 0 || *g >= len(pred.Contenders) || pred.Contenders[*g].Rule != prediction.RuleRace {
			continue
		}
		l, h := math.Min(e[0], p.DeleteProbability), math.Max(e[1], p.DeleteProbability)
		if h-l > rangeShown {
			p.DeleteProbabilityRange = []float64{math.Round(l*1e3) / 1e3, math.Round(h*1e3) / 1e3}
		}
	}
}

// activeRaces: the races whose ends move some interleaving's weight, the
// maxRangeRaces that move it most.
func activeRaces(bs []branch) []race {
	type moved struct {
		r race
		d float64
	}
	var ms []moved
	for r := race(0); r < nRaces; r++ {
		d := 0.0
		for _, end := range timingRange[r] {
			t := centralTiming
			t[r] = end
			for _, b := range bs {
				d = math.Max(d, math.Abs(b.weightAt(&t)-b.weightAt(&centralTiming)))
				if r == racePartly && len(b.flips) > 0 {
					d = math.Max(d, b.Weight*math.Abs(end-centralTiming[r]))
				}
			}
		}
		if d > 1e-9 {
			ms = append(ms, moved{r, d})
		}
	}
	for len(ms) > maxRangeRaces {
		least := 0
		for k := range ms {
			if ms[k].d < ms[least].d {
				least = k
			}
		}
		ms = append(ms[:least], ms[least+1:]...)
	}
	out := make([]race, len(ms))
	for k, m := range ms {
		out[k] = m.r
	}
	return out
}

// chancesAt is each pod's chance of deletion under timing t, as
// mergeBranches computes it under the central weights.
func chancesAt(bs []branch, own []map[string]float64, t *timing) map[string]float64 {
	total := 0.0
	ws := make([]float64, len(bs))
	for i, b := range bs {
		ws[i] = b.weightAt(t)
		total += ws[i]
	}
	out := map[string]float64{}
	if total <= 0 {
		return out
	}
	partly := t[racePartly] / centralTiming[racePartly]
	for i, b := range bs {
		w := ws[i] / total
		for n, x := range own[i] {
			out[n] += w * x
		}
		for _, f := range b.flips {
			for n, d := range f.delta {
				out[n] += w * f.weight * partly * d
			}
		}
	}
	return out
}
