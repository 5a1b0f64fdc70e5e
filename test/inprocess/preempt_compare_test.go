package inprocess

import (
	"slices"
	"strings"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/preemption"
	"github.com/scale-preview/scale-preview/pkg/rules"

	"github.com/scale-preview/scale-preview/test/internal/chance"
)

func preemptPredict(sc *preemptScenario) (*preemption.Result, error) {
	return preemption.Predict(preemption.Input{Nodes: sc.nodes, Pods: sc.pods, PDBs: sc.pdbs,
		Preemptor: sc.preemptor.DeepCopy(), Rules: rules.Scheduler(rules.Newest, nil)})
}

func preemptVictimNames(c preemption.Candidate) []string {
	var out []string
	for _, v := range c.Victims {
		out = append(out, v.Pod.Name)
	}
	slices.Sort(out)
	return out
}

// preemptVictimsUncertain: the prediction said the victims on this node
// depend on the order of pods of equal rank.
func preemptVictimsUncertain(res *preemption.Result, node string) bool {
	for _, u := range res.Uncertain {
		if strings.HasPrefix(u, "on node "+node+" ") {
			return true
		}
	}
	return false
}

// TestPreemptAgainstScheduler predicts preemption on seeded random clusters
// and runs the real kube-scheduler 1.37 Filter and DefaultPreemption on
// each: a certain prediction must match every run (nominated node and
// deleted pods, or the nodes the pod fits on); an uncertain one must give
// each nominated node's frequency within the tolerance.
func TestPreemptAgainstScheduler(t *testing.T) {
	seeds := envInt("PREEMPT_SEEDS", 400)
	certainRuns, uncertainRuns := 3, 60
	if testing.Short() {
		seeds = envInt("PREEMPT_SEEDS", 40)
		certainRuns, uncertainRuns = 2, 30
	}
	base := uint64(envInt("PREEMPT_SEED", 1))
	var certain, uncertain, fitting, noHelp, matched int
	for i := range seeds {
		sc := preemptGenerate(base*100003 + uint64(i))
		pred, err := preemptPredict(sc)
		if err != nil {
			t.Fatalf("seed %d: predict: %v", sc.seed, err)
		}
		runs := certainRuns
		if !pred.Certain {
			runs = uncertainRuns
			uncertain++
		} else {
			certain++
		}
		freq := map[string]int{}
		for run := range runs {
			real, err := preemptRunReal(sc)
			if err != nil {
				t.Fatalf("seed %d (%s): real scheduler: %v", sc.seed, sc.what, err)
			}
			if len(pred.FitsOn) > 0 || len(real.fitsOn) > 0 {
				if !slices.Equal(real.fitsOn, slices.Sorted(slices.Values(pred.FitsOn))) {
					t.Errorf("seed %d (%s) run %d: predicted fits on %v, real %s", sc.seed, sc.what, run, pred.FitsOn, real)
				}
				continue
			}
			freq[real.nominated]++
			var want []string
			found := real.nominated == ""
			for _, o := range pred.Outcomes {
				if o.Node == real.nominated {
					want, found = preemptVictimNames(o.Candidate), true
				}
			}
			switch {
			case pred.Certain && real.nominated != pred.Nominated():
				t.Errorf("seed %d (%s) run %d: predicted nomination %q (%s), real %s", sc.seed, sc.what, run, pred.Nominated(), pred.Reason, real)
			case !found:
				t.Errorf("seed %d (%s) run %d: real %s, not among predicted outcomes %v", sc.seed, sc.what, run, real, preemptOutcomeNames(pred))
			case !slices.Equal(want, real.deleted) && !preemptVictimsUncertain(pred, real.nominated):
				t.Errorf("seed %d (%s) run %d: on %s predicted victims %v, real %v", sc.seed, sc.what, run, real.nominated, want, real.deleted)
			default:
				matched++
			}
		}
		switch {
		case len(pred.FitsOn) > 0:
			fitting++
		case len(pred.Outcomes) == 0:
			noHelp++
		}
		if !pred.Certain && len(pred.FitsOn) == 0 {
			total := 0
			for _, n := range freq {
				total += n
			}
			for _, o := range pred.Outcomes {
				if chance.BeyondNoise(freq[o.Node], total, o.Probability) {
					t.Errorf("seed %d (%s): %s predicted %.2f, measured %d of %d", sc.seed, sc.what, o.Node, o.Probability, freq[o.Node], total)
				}
			}
		}
	}
	t.Logf("%d scenarios: %d certain, %d uncertain (%d fit without preemption, %d where preemption does not help); %d runs matched", seeds, certain, uncertain, fitting, noHelp, matched)
}

func preemptOutcomeNames(r *preemption.Result) []string {
	var out []string
	for _, o := range r.Outcomes {
		out = append(out, o.Node)
	}
	return out
}
