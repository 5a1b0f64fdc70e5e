package conformance

import (
	"path/filepath"
	"testing"

	"github.com/scale-preview/scale-preview/test/internal/preemptjudge"
	"github.com/scale-preview/scale-preview/test/versions/oraclegen/preemptgen"
)

// The recorded preemptions of older schedulers (preemption-v1.NN.json.gz,
// written by test/versions/v1_NN with preemptgen): pkg/preemption under
// that release's rules must agree with them as it agrees with the real
// 1.37 scheduler in test/inprocess (preemptjudge judges both).
var preemptionVersions = []string{"v1.21", "v1.25", "v1.27", "v1.29", "v1.33"}

func TestPreemptionVersionOracles(t *testing.T) {
	dir := oracleDir()
	for _, v := range preemptionVersions {
		t.Run(v, func(t *testing.T) {
			var f preemptgen.File
			if err := readRecorded(filepath.Join(dir, "preemption-"+v+".json.gz"), &f, false); err != nil {
				t.Fatalf("%v (`make oracles` writes it from test/versions)", err)
			}
			if len(f.Cases) == 0 {
				t.Fatal("no cases")
			}
			cases := len(f.Cases)
			if testing.Short() {
				cases = min(cases, 100) // make test: the first 100 of each release
			}
			var judged, skipped, matched int
			for i := range cases {
				c := &f.Cases[i]
				sc := preemptgen.Generate(c.Seed, f.Minor)
				if sc.Hash() != c.Hash {
					t.Fatalf("seed %d: the generator no longer makes the recorded cluster (hash %s, recorded %s): run make oracles", c.Seed, sc.Hash(), c.Hash)
				}
				if c.Skipped != "" {
					skipped++
					continue
				}
				cl, err := preemptjudge.Decode(sc)
				if err != nil {
					t.Fatalf("seed %d: %v", c.Seed, err)
				}
				pred, err := preemptjudge.Predict(cl, f.Minor)
				if err != nil {
					t.Fatalf("seed %d: predict: %v", c.Seed, err)
				}
				verdict := preemptjudge.Judge(pred, preemptjudge.FromRecord(c))
				for _, e := range verdict.Errors {
					t.Errorf("%s seed %d (%s): %s", v, c.Seed, c.What, e)
				}
				judged++
				matched += verdict.Matched
			}
			t.Logf("%s (k8s.io/kubernetes %s): %d scenarios judged, %d skipped; %d recorded outcomes matched", v, f.Kubernetes, judged, skipped, matched)
		})
	}
}
