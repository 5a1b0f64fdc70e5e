package inprocess

import (
	"testing"

	"github.com/scale-preview/scale-preview/pkg/preemption"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/test/internal/preemptjudge"
	"github.com/scale-preview/scale-preview/test/versions/oraclegen/preemptgen"
)

func preemptPredict(sc *preemptScenario) (*preemption.Result, error) {
	return preemptjudge.Predict(&preemptjudge.Cluster{Nodes: sc.nodes, Pods: sc.pods, PDBs: sc.pdbs, Preemptor: sc.preemptor}, rules.Newest)
}

// TestPreemptAgainstScheduler predicts preemption on seeded random clusters
// and runs the real kube-scheduler 1.37 Filter and DefaultPreemption on
// each: a certain prediction must match every run (nominated node and
// deleted pods, or the nodes the pod fits on); an uncertain one must give
// each nominated node's frequency within the tolerance (preemptjudge).
func TestPreemptAgainstScheduler(t *testing.T) {
	t.Parallel()
	seeds := envInt("PREEMPT_SEEDS", 400)
	certainRuns, uncertainRuns := 3, 60
	if testing.Short() {
		seeds = envInt("PREEMPT_SEEDS", 40)
		certainRuns, uncertainRuns = 2, 30
	}
	base := uint64(envInt("PREEMPT_SEED", 1))
	var certain, uncertain, fitting, noHelp, matched int
	for i := range seeds {
		sc, err := preemptGenerate(base*100003 + uint64(i))
		if err != nil {
			t.Fatalf("seed %d: %v", base*100003+uint64(i), err)
		}
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
		var obs []preemptjudge.Observed
		for range runs {
			real, err := preemptRunReal(sc)
			if err != nil {
				t.Fatalf("seed %d (%s): real scheduler: %v", sc.seed, sc.what, err)
			}
			o := preemptjudge.Observed{FitsOn: real.fitsOn, Count: 1}
			if real.nominated != "" {
				o.Tied = []preemptgen.Choice{{Node: real.nominated, Victims: real.deleted}}
			}
			obs = append(obs, o)
		}
		v := preemptjudge.Judge(pred, obs)
		for _, e := range v.Errors {
			t.Errorf("seed %d (%s): %s", sc.seed, sc.what, e)
		}
		matched += v.Matched
		switch {
		case len(pred.FitsOn) > 0:
			fitting++
		case len(pred.Outcomes) == 0:
			noHelp++
		}
	}
	t.Logf("%d scenarios: %d certain, %d uncertain (%d fit without preemption, %d where preemption does not help); %d runs matched", seeds, certain, uncertain, fitting, noHelp, matched)
}
