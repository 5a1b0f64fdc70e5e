package evictgen

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/scale-preview/scale-preview/test/versions/oraclegen"
)

// File is the recorded eviction oracle of one release, written
// gzip-compressed to $ORACLE_DIR/eviction-v1.NN.json.gz. Every gate
// combination sees the same scenarios, stored once.
type File struct {
	Minor      int    `json:"minor"`
	Kubernetes string `json:"kubernetes"`
	// MaxPods and Runs are the generation's settings: the scenarios'
	// largest pod count, and the runs of each (each in its own seeded pod
	// order).
	MaxPods   int        `json:"maxPods"`
	Runs      int        `json:"runs"`
	Scenarios []Recorded `json:"scenarios"`
	Combos    []Combo    `json:"combos"`
}

// Recorded is one scenario as the release's own types encode it.
type Recorded struct {
	Seed   uint64 `json:"seed"`
	Config Config `json:"config"`
	// Pods are the pods as the API server shows them, Summary the node's
	// stats before the first eviction: what the plugin reads.
	Pods    []json.RawMessage `json:"pods"`
	Summary json.RawMessage   `json:"summary"`
}

// Combo is one gate combination and the real outcomes under it.
type Combo struct {
	Gates map[string]bool `json:"gates"`
	// Effective is what DefaultFeatureGate.Enabled answered for each gate
	// of Gates while the combination ran.
	Effective map[string]bool `json:"effective"`
	// Outcomes[s] are scenario s's distinct outcomes and how many runs
	// ended in each, sorted by Kills.
	Outcomes [][]Outcome `json:"outcomes"`
}

// Outcome is one distinct result of a scenario's runs.
type Outcome struct {
	Kills string `json:"kills"` // EncodeKills
	Runs  int    `json:"runs"`
}

// Version is what a version module supplies.
type Version struct {
	Minor      int
	Kubernetes string // e.g. "v1.21.14"
	// Combos are the gate combinations that matter in this release.
	Combos []map[string]bool
	// SetGates sets the gates for the rest of the test t.
	SetGates func(t *testing.T, gates map[string]bool)
	// Enabled returns DefaultFeatureGate.Enabled for each of names.
	Enabled func(names []string) map[string]bool
	// Decode decodes the pods and the summary strictly into the release's
	// types (an unknown field is an error) and re-encodes them.
	Decode func(pods []json.RawMessage, summary json.RawMessage) ([]json.RawMessage, json.RawMessage, error)
	// Run drives the release's real eviction manager through run number
	// run of s and returns what it killed.
	Run func(s *Scenario, run uint64) (map[string]Kill, error)
}

// FileName is the recorded file of release 1.minor.
func FileName(minor int) string { return fmt.Sprintf("eviction-v1.%d.json.gz", minor) }

// Record runs every scenario under every combination and writes the file.
// EVICT_SCENARIOS, EVICT_MAXPODS and EVICT_RUNS override the size.
func Record(t *testing.T, v Version) {
	scenarios := int(oraclegen.EnvInt(t, "EVICT_SCENARIOS", 120))
	maxPods := int(oraclegen.EnvInt(t, "EVICT_MAXPODS", 12))
	runs := int(oraclegen.EnvInt(t, "EVICT_RUNS", 24))
	t.Logf("k8s.io/kubernetes %s: %d scenarios of up to %d pods, %d runs each", v.Kubernetes, scenarios, maxPods, runs)
	file := File{Minor: v.Minor, Kubernetes: v.Kubernetes, MaxPods: maxPods, Runs: runs}
	var all []*Scenario
	for i := range scenarios {
		s := Generate(uint64(i+1), maxPods, v.Minor)
		pods, sum, err := v.Decode(s.APIPods(), s.Summary(s.AllRunning(), Start))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		all = append(all, s)
		file.Scenarios = append(file.Scenarios, Recorded{Seed: s.Seed, Config: s.Config(), Pods: pods, Summary: sum})
	}
	for _, combo := range v.Combos {
		t.Run(oraclegen.ComboName(combo), func(t *testing.T) {
			v.SetGates(t, combo)
			var names []string
			for name := range combo {
				names = append(names, name)
			}
			eff := v.Enabled(names)
			for name, want := range combo {
				if eff[name] != want {
					t.Fatalf("gate %s: set to %v, DefaultFeatureGate says %v", name, want, eff[name])
				}
			}
			start := time.Now()
			out := Combo{Gates: combo, Effective: eff}
			results, err := runAll(v.Run, all, runs)
			if err != nil {
				t.Fatal(err)
			}
			kills := 0
			for si := range all {
				count := map[string]int{}
				for _, k := range results[si] {
					kills += len(k)
					count[EncodeKills(k)]++
				}
				var outs []Outcome
				for k, n := range count {
					outs = append(outs, Outcome{Kills: k, Runs: n})
				}
				sort.Slice(outs, func(i, j int) bool { return outs[i].Kills < outs[j].Kills })
				out.Outcomes = append(out.Outcomes, outs)
			}
			file.Combos = append(file.Combos, out)
			t.Logf("%d scenarios x %d runs: %d kills in %v", len(all), runs, kills, time.Since(start).Round(time.Millisecond))
		})
		if t.Failed() {
			return
		}
	}
	n := oraclegen.WriteFile(t, FileName(v.Minor), &file)
	t.Logf("%d scenarios x %d combinations, %d bytes", len(file.Scenarios), len(file.Combos), n)
}

// runAll runs every scenario runs times, eight runs at a time: a run
// mostly waits on the manager's monitoring interval, and each has its own
// manager and clock. results[s][run] are the kills.
func runAll(run func(*Scenario, uint64) (map[string]Kill, error), all []*Scenario, runs int) ([][]map[string]Kill, error) {
	results := make([][]map[string]Kill, len(all))
	for i := range results {
		results[i] = make([]map[string]Kill, runs)
	}
	type job struct{ s, run int }
	jobs := make(chan job)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				k, err := run(all[j.s], uint64(j.run))
				if err != nil {
					select {
					case errs <- err:
					default:
					}
					continue
				}
				results[j.s][j.run] = k
			}
		}()
	}
	for s := range all {
		for r := range runs {
			jobs <- job{s, r}
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return nil, err
	default:
	}
	return results, nil
}
