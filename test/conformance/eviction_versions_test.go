package conformance

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/test/internal/evictjudge"
	"github.com/scale-preview/scale-preview/test/versions/oraclegen/evictgen"
)

// The recorded eviction oracles in testdata/oracles/eviction-v1.NN.json.gz
// hold what the real eviction manager of each release did on seeded random
// nodes (test/versions/oraclegen/evictgen), in several runs with the
// kubelet's pod list in seeded orders, under each gate combination that
// matters in that release. The version modules in test/versions/v1_NN
// write them (`make oracles`); 1.37 is driven live by test/inprocess.
var evictionVersions = []int{21, 29, 30, 31, 32, 34}

func TestEvictionVersionOracles(t *testing.T) {
	dir := oracleDir()
	for _, minor := range evictionVersions {
		t.Run(fmt.Sprintf("v1.%d", minor), func(t *testing.T) {
			f, err := loadEvictionOracle(filepath.Join(dir, evictgen.FileName(minor)))
			if err != nil {
				t.Fatalf("%v (`make oracles` writes it from test/versions)", err)
			}
			if f.Minor != minor || len(f.Scenarios) == 0 || len(f.Combos) == 0 {
				t.Fatalf("minor %d, %d scenarios, %d combinations", f.Minor, len(f.Scenarios), len(f.Combos))
			}
			checkEvictionOracle(t, f)
		})
	}
}

func loadEvictionOracle(path string) (*evictgen.File, error) {
	var f evictgen.File
	if err := readRecorded(path, &f, true); err != nil {
		return nil, err
	}
	return &f, nil
}

func checkEvictionOracle(t *testing.T, f *evictgen.File) {
	var tally evictjudge.Tally
	kills, failures := 0, 0
	errorf := func(format string, args ...any) {
		failures++
		if failures <= 20 {
			t.Errorf(format, args...)
		}
	}
	for _, c := range f.Combos {
		r, err := rules.For(f.Minor, c.Gates)
		if err != nil {
			t.Fatalf("rules.For(%d, %v): %v", f.Minor, c.Gates, err)
		}
		for name, on := range c.Effective {
			if r.Gates[name] != on {
				t.Errorf("k8s %s with %v: %s is %v, pkg/rules says %v", f.Kubernetes, c.Gates, name, on, r.Gates[name])
			}
		}
		if len(c.Outcomes) != len(f.Scenarios) {
			t.Fatalf("%v: %d outcomes for %d scenarios", c.Gates, len(c.Outcomes), len(f.Scenarios))
		}
		for si, sc := range f.Scenarios {
			what := fmt.Sprintf("k8s %s, gates %v, seed %d (%+v)", f.Kubernetes, c.Gates, sc.Seed, sc.Config)
			pred, err := evictjudge.Predict(r, sc.Config, sc.Pods, sc.Summary)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			var outcomes []evictjudge.Outcome
			for _, o := range c.Outcomes[si] {
				k, err := evictgen.DecodeKills(o.Kills)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				kills += len(k) * o.Runs
				outcomes = append(outcomes, evictjudge.Outcome{Kills: k, Runs: o.Runs})
			}
			tally.Add(evictjudge.Judge(pred, outcomes, what, false, errorf))
		}
	}
	if failures > 20 {
		t.Errorf("... %d disagreements in all", failures)
	}
	t.Logf("k8s %s: %d scenarios x %d combinations x %d runs, %d kills: %d determined fates compared, %d probabilities judged, %d off beyond chance",
		f.Kubernetes, len(f.Scenarios), len(f.Combos), f.Runs, kills, tally.Determined, tally.Judged, tally.Off)
	if tally.Determined == 0 || kills == 0 {
		t.Errorf("k8s %s: nothing was compared", f.Kubernetes)
	}
}
