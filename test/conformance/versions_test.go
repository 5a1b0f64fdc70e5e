package conformance

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

// The recorded oracles in testdata/oracles/v1.NN.json.gz hold the real
// controller.ActivePodsWithRanks.Less of Kubernetes 1.21, 1.25, 1.29 and
// 1.33, for every ordered pair of seeded random pod sets, under every gate
// combination that matters in that version. The per-version modules in
// test/versions/v1_NN write them (`make oracles`; `make oracles-check`
// regenerates them into a temporary directory and compares), each pinning
// that release's k8s.io/kubernetes: too heavy to compile on every run,
// while the answers are small and never change.

// recordedFile is the stored form (test/versions/oraclegen.File): the sets
// once, and per gate combination only the answers.
type recordedFile struct {
	Minor      int                      `json:"minor"`
	Kubernetes string                   `json:"kubernetes"`
	Seed       uint64                   `json:"seed"`
	Features   map[string]oracleFeature `json:"features"`
	Sets       []struct {
		Now   string            `json:"now"`
		Pods  []json.RawMessage `json:"pods"`
		Ranks []int             `json:"ranks"`
	} `json:"sets"`
	Combos []struct {
		Gates     map[string]bool `json:"gates"`
		Effective map[string]bool `json:"effective"`
		Less      []string        `json:"less"` // per set: n*n of '0'/'1', row-major
	} `json:"combos"`
}

// oracleFile is a recorded file expanded into one case per set and gate
// combination.
type oracleFile struct {
	Minor      int
	Kubernetes string
	Features   map[string]oracleFeature
	Cases      []oracleCase
}

type oracleFeature struct {
	Default    bool   `json:"default"`
	Locked     bool   `json:"locked"`
	PreRelease string `json:"preRelease"`
}

type oracleCase struct {
	Gates     map[string]bool
	Effective map[string]bool
	Now       string
	Pods      []json.RawMessage
	Ranks     []int
	Less      [][]bool
}

// oracleDir is $ORACLE_DIR (a directory `make oracles` wrote), else the
// recorded files.
func oracleDir() string {
	if d := os.Getenv("ORACLE_DIR"); d != "" {
		return d
	}
	return filepath.Join("testdata", "oracles")
}

// oracleVersions are the releases recorded; each must be there.
var oracleVersions = []string{"v1.21", "v1.25", "v1.29", "v1.33"}

func TestVersionOracles(t *testing.T) {
	dir := oracleDir()
	for _, v := range oracleVersions {
		t.Run(v, func(t *testing.T) {
			f, err := loadOracle(filepath.Join(dir, v+".json.gz"))
			if err != nil {
				t.Fatalf("%v (`make oracles` writes it from test/versions)", err)
			}
			if len(f.Cases) == 0 {
				t.Fatalf("%s has no cases", v)
			}
			checkGateTable(t, f)
			checkOracle(t, f)
		})
	}
}

func loadOracle(path string) (*oracleFile, error) {
	var rec recordedFile
	if err := readRecorded(path, &rec, false); err != nil {
		return nil, err
	}
	f := &oracleFile{Minor: rec.Minor, Kubernetes: rec.Kubernetes, Features: rec.Features}
	for ci, c := range rec.Combos {
		if len(c.Less) != len(rec.Sets) {
			return nil, fmt.Errorf("%s: combination %d has %d answers for %d sets", path, ci, len(c.Less), len(rec.Sets))
		}
		for si, set := range rec.Sets {
			n := len(set.Pods)
			if len(c.Less[si]) != n*n {
				return nil, fmt.Errorf("%s: combination %d set %d: %d answers for %d pods", path, ci, si, len(c.Less[si]), n)
			}
			less := make([][]bool, n)
			for i := range less {
				less[i] = make([]bool, n)
				for j := range less[i] {
					switch c.Less[si][i*n+j] {
					case '1':
						less[i][j] = true
					case '0':
					default:
						return nil, fmt.Errorf("%s: combination %d set %d: answer %q", path, ci, si, c.Less[si][i*n+j])
					}
				}
			}
			f.Cases = append(f.Cases, oracleCase{
				Gates: c.Gates, Effective: c.Effective, Now: set.Now,
				Pods: set.Pods, Ranks: set.Ranks, Less: less,
			})
		}
	}
	return f, nil
}

// checkGateTable compares pkg/rules' gate history with the version's own
// feature-gate registry, as recorded by the oracle: which scale-in gates
// exist, their defaults, which are locked, and the effective values under
// every combination the oracle set.
func checkGateTable(t *testing.T, f *oracleFile) {
	// The oracles record the scale-in controllers' gates; the autoscaler's
	// are checked by the in-process autoscaler test (test/hpa).
	defaults := rules.Resolve(f.Minor, nil).GatesOf(rules.KindComparator, rules.KindReplicaSet, rules.KindPods, rules.KindDeployment, rules.KindStatefulSet)
	for name, spec := range f.Features {
		def, ok := defaults[name]
		if !ok {
			t.Errorf("k8s %s registers gate %s (default %v, %s), pkg/rules says it does not exist in 1.%d", f.Kubernetes, name, spec.Default, spec.PreRelease, f.Minor)
			continue
		}
		if def != spec.Default {
			t.Errorf("k8s %s: gate %s defaults to %v, pkg/rules says %v", f.Kubernetes, name, spec.Default, def)
		}
		_, err := rules.For(f.Minor, map[string]bool{name: !spec.Default})
		if spec.Locked && err == nil {
			t.Errorf("k8s %s: gate %s is locked to %v, pkg/rules accepts %s=%v", f.Kubernetes, name, spec.Default, name, !spec.Default)
		}
		if !spec.Locked && err != nil {
			t.Errorf("k8s %s: gate %s can be set to %v, pkg/rules refuses: %v", f.Kubernetes, name, !spec.Default, err)
		}
	}
	for name := range defaults {
		if _, ok := f.Features[name]; !ok {
			t.Errorf("pkg/rules has gate %s in 1.%d, k8s %s does not register it", name, f.Minor, f.Kubernetes)
		}
	}
	seen := map[string]bool{}
	for _, c := range f.Cases {
		key := fmt.Sprint(c.Gates)
		if seen[key] {
			continue
		}
		seen[key] = true
		r, err := rules.For(f.Minor, c.Gates)
		if err != nil {
			t.Errorf("rules.For(%d, %v): %v", f.Minor, c.Gates, err)
			continue
		}
		for name, on := range c.Effective {
			if r.Gates[name] != on {
				t.Errorf("k8s %s with %v: %s is %v, pkg/rules says %v", f.Kubernetes, c.Gates, name, on, r.Gates[name])
			}
		}
	}
}

// flips are the rule-set switches whose effect the oracle must have seen:
// for each, the number of pairs where turning it around changes Less.
var flips = []struct {
	name string
	flip func(*rules.RuleSet)
}{
	{"DeletionCost", func(r *rules.RuleSet) { r.DeletionCost = !r.DeletionCost }},
	{"LogScale", func(r *rules.RuleSet) { r.LogScale = !r.LogScale }},
	{"SidecarRestarts", func(r *rules.RuleSet) { r.SidecarRestarts = !r.SidecarRestarts }},
}

func checkOracle(t *testing.T, f *oracleFile) {
	pairs, failures := 0, 0
	decided := map[string]int{}        // "R6/bucket" -> pairs
	flipped := make([]int, len(flips)) // pairs where the switch matters
	sidecars := false
	for ci, c := range f.Cases {
		r, err := rules.For(f.Minor, c.Gates)
		if err != nil {
			t.Fatalf("case %d: rules.For(%d, %v): %v", ci, f.Minor, c.Gates, err)
		}
		now, err := time.Parse(time.RFC3339Nano, c.Now)
		if err != nil {
			t.Fatalf("case %d: now: %v", ci, err)
		}
		if len(c.Ranks) != len(c.Pods) || len(c.Less) != len(c.Pods) {
			t.Fatalf("case %d: %d pods, %d ranks, %d rows", ci, len(c.Pods), len(c.Ranks), len(c.Less))
		}
		pods := make([]*corev1.Pod, len(c.Pods))
		ep := make([]engine.Pod, len(c.Pods))
		for i, raw := range c.Pods {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			pods[i] = &corev1.Pod{}
			if err := dec.Decode(pods[i]); err != nil {
				t.Fatalf("case %d pod %d does not decode into the current k8s.io/api: %v", ci, i, err)
			}
			ep[i] = engine.FromPod(pods[i])
			ep[i].Rank = c.Ranks[i]
			sidecars = sidecars || ep[i].SidecarRestarts > 0
		}
		cmp := engine.Comparator{Rules: r, Now: now}
		alt := make([]engine.Comparator, len(flips))
		for k, fl := range flips {
			alt[k] = cmp
			fl.flip(&alt[k].Rules)
		}
		for i := range pods {
			for j := range pods {
				if i == j {
					continue
				}
				pairs++
				want := c.Less[i][j]
				got := cmp.Less(&ep[i], &ep[j])
				d := cmp.Compare(&ep[i], &ep[j])
				decided[d.Rule.ID()+"/"+d.Rule.Name()+howSuffix(d.How)]++
				for k := range alt {
					if alt[k].Less(&ep[i], &ep[j]) != want {
						flipped[k]++
					}
				}
				if got == want && d.AFirst == want {
					continue
				}
				failures++
				t.Errorf("k8s %s, gates %v, case %d, now %s: engine Less(%s, %s) = %v (Compare: %s %s, %q vs %q, aFirst=%v), the real controller says %v\n  %s rank %d: %s\n  %s rank %d: %s",
					f.Kubernetes, c.Gates, ci, c.Now, pods[i].Name, pods[j].Name, got,
					d.Rule.ID(), d.Rule.Name()+howSuffix(d.How), d.A, d.B, d.AFirst, want,
					pods[i].Name, c.Ranks[i], compact(c.Pods[i]), pods[j].Name, c.Ranks[j], compact(c.Pods[j]))
				if failures >= 10 {
					t.Fatalf("stopping after %d disagreements", failures)
				}
			}
		}
	}
	if failures > 0 {
		return
	}

	var rows []string
	for k, n := range decided {
		rows = append(rows, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(rows)
	t.Logf("k8s %s: %d ordered pairs in %d cases agree with controller.ActivePodsWithRanks.Less; decided by %s", f.Kubernetes, pairs, len(f.Cases), strings.Join(rows, " "))
	for k, fl := range flips {
		t.Logf("k8s %s: flipping RuleSet.%s would break %d of them", f.Kubernetes, fl.name, flipped[k])
	}

	// The pod sets must have exercised what this version compares, so that
	// agreement means something.
	want := []string{"R1/unassigned", "R2/phase", "R3/readiness", "R5/colocation", "R6/ready-time/zero", "R7/restarts/regular", "R8/creation-time/zero", "TIE/tie"}
	someCost, someLog, someLinear := false, false, false
	for _, c := range f.Cases {
		r, _ := rules.For(f.Minor, c.Gates)
		someCost = someCost || r.DeletionCost
		someLog = someLog || r.LogScale
		someLinear = someLinear || !r.LogScale
	}
	if someCost {
		want = append(want, "R4/deletion-cost")
	}
	if someLog {
		want = append(want, "R6/ready-time/bucket", "R6/ready-time/uid", "R8/creation-time/bucket", "R8/creation-time/uid")
	}
	if someLinear {
		want = append(want, "R6/ready-time/linear", "R8/creation-time/linear")
	}
	if r, _ := rules.For(f.Minor, nil); r.SidecarRestarts {
		want = append(want, "R7/restarts/sidecar")
	}
	for _, k := range want {
		if decided[k] == 0 {
			t.Errorf("k8s %s: no pair was decided by %s; the oracle's pod sets do not exercise it", f.Kubernetes, k)
		}
	}
	for k, fl := range flips {
		if fl.name == "SidecarRestarts" && !sidecars {
			continue // this k8s.io/api has no restartable init containers
		}
		if flipped[k] == 0 {
			t.Errorf("k8s %s: no pair depends on RuleSet.%s, so the oracle cannot tell whether 1.%d has that rule", f.Kubernetes, fl.name, f.Minor)
		}
	}
}

func howSuffix(h engine.How) string {
	if h == engine.ByValue {
		return ""
	}
	return "/" + string(h)
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// readRecorded decodes the gzip-compressed JSON file at path into v;
// strict refuses fields v does not have.
func readRecorded(path string, v any, strict bool) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	dec := json.NewDecoder(zr)
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
