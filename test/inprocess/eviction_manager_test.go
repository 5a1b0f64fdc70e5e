package inprocess

// The kubelet's real eviction manager (k8s.io/kubernetes
// pkg/kubelet/eviction, 1.37) on seeded random nodes
// (test/versions/oraclegen/evictgen, the generator the recorded older
// releases use too), judged against the plugin's pkg/eviction prediction
// made beforehand by test/internal/evictjudge. The manager runs live under
// -tags kubelet and is replayed from its recording otherwise
// (eviction_record_test.go).

import (
	"testing"

	"github.com/scale-preview/scale-preview/pkg/eviction"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/test/internal/evictjudge"
	"github.com/scale-preview/scale-preview/test/versions/oraclegen/evictgen"
)

// evictPredict is the plugin's answer for 1.37 from the API's view of the
// node and its summary before the first eviction.
func evictPredict(t *testing.T, s *evictgen.Scenario) *eviction.Result {
	t.Helper()
	r, err := rules.For(37, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := evictjudge.Predict(r, s.Config(), s.APIPods(), s.Summary(s.AllRunning(), evictgen.Start))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return res
}

func TestEvictionAgainstKubelet(t *testing.T) {
	t.Parallel()
	scenarios, maxPods, runs := 300, 24, 60
	if testing.Short() {
		scenarios, maxPods, runs = 30, 8, 24
	}
	var tally evictjudge.Tally
	classes := map[string]int{}
	for i := range scenarios {
		s := evictgen.GenerateWith(uint64(i+1), maxPods, 37, evictgen.AllDraws)
		for _, c := range evictgen.DrawnClasses(s) {
			classes[c]++
		}
		pred := evictPredict(t, s)
		evictjudge.JudgeFreshSummary(pred, s.String(), t.Errorf)
		n := 1 // a certain prediction: one run shows it
		if !pred.Certain {
			n = runs
		}
		a, ok := evictKubeletScenario(t, s, n)
		if !ok {
			continue
		}
		evictCompareThresholds(t, s.String(), a.InForce, pred)
		tally.Add(evictjudge.Judge(pred, evictOutcomes(t, a), s.String(), true, t.Errorf))
	}
	t.Logf("%d scenarios (of which %v): %d determined fates compared, %d probabilities judged, %d off beyond chance; %s",
		scenarios, classes, tally.Determined, tally.Judged, tally.Off, kubeletDone(t, sectionScenarios))
}
