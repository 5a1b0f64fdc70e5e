package workload

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// TestChanceRangesOnlyForTiming: over random fleets, a range is printed
// only for an uncertain pod of a timing race (never a tie or an
// intransitive group), holds the central estimate, and is wider than
// rangeShown; and some fleet has one.
func TestChanceRangesOnlyForTiming(t *testing.T) {
	n := 120
	if testing.Short() {
		n = 40
	}
	ref := snapshot.Ref{Kind: snapshot.Deployment, Namespace: testNS, Name: "web"}
	ranged := 0
	for i := 0; i < n; i++ {
		f := randomFleet(rand.New(rand.NewPCG(uint64(i), 29)), i)
		p, err := Predict(f.snap, ref, f.target, Options{Rules: ruleSetFor(t, f.minor), Now: testNow})
		if err != nil {
			continue
		}
		for _, pp := range p.Pods {
			r := pp.DeleteProbabilityRange
			if r == nil {
				continue
			}
			ranged++
			g := pp.ContenderGroup
			if pp.Certain || g == nil || p.Contenders[*g].Rule != prediction.RuleRace {
				t.Errorf("%s: %s has a range %v but is not an open timing race", f.name, pp.Name, r)
			}
			if len(r) != 2 || r[0] > pp.DeleteProbability+1e-3 || r[1] < pp.DeleteProbability-1e-3 || r[1]-r[0] <= rangeShown {
				t.Errorf("%s: %s range %v around %.3f", f.name, pp.Name, r, pp.DeleteProbability)
			}
		}
	}
	if ranged == 0 {
		t.Error("no fleet printed a range")
	}
}

// TestOvertakenCaseRange: the reported case's pod whose fate turns on the
// stale-status race gets a range spanning the frequencies measured
// in-process at 0 to 5 ms API latency (0.64 to 0.91) and the held-out
// report's 0.975; the pod that only the overtaking keeps spans what an
// instant API or starved controllers give (overtaken in 0.21 to 0.33 of
// the runs of such a scenario) and the rare overtaking of a calm one; the
// two exactly tied pods get the same chance and range.
func TestOvertakenCaseRange(t *testing.T) {
	p := predictOK(t, overtakenFixture(), snapshot.Deployment, "web", 6, rules37(t))
	for _, pp := range p.Pods {
		t.Logf("%s %s %.3f %v certain=%v", pp.Name, pp.Fate, pp.DeleteProbability, pp.DeleteProbabilityRange, pp.Certain)
	}
	r := findPod(t, p, "v1-unready").DeleteProbabilityRange
	if len(r) != 2 || r[0] > 0.64 || r[1] < 0.95 {
		t.Errorf("v1-unready range %v, want it to hold 0.64 to 0.95", r)
	}
	if r := findPod(t, p, "v2-pending").DeleteProbabilityRange; len(r) != 2 || r[0] > 0.79 || r[1] < 0.97 {
		t.Errorf("v2-pending range %v, want it to hold 0.79 to 0.97", r)
	}
	b, c := findPod(t, p, "v2-b"), findPod(t, p, "v2-c")
	if b.DeleteProbability != c.DeleteProbability || !slices.Equal(b.DeleteProbabilityRange, c.DeleteProbabilityRange) {
		t.Errorf("tied v2-b %.3f %v and v2-c %.3f %v differ", b.DeleteProbability, b.DeleteProbabilityRange, c.DeleteProbability, c.DeleteProbabilityRange)
	}
}
