package oraclegen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Gates are the feature gates that change scale-in anywhere from 1.21 on
// (the names of pkg/rules). The oracle records how the version's own
// DefaultFeatureGate knows each of them.
var Gates = []string{
	"PodDeletionCost",
	"LogarithmicScaleDown",
	"StatefulSetMinReadySeconds",
	"StatefulSetAutoDeletePVC",
	"StatefulSetStartOrdinal",
}

// File is the oracle written to $ORACLE_DIR/v1.NN.json.
type File struct {
	Minor int `json:"minor"`
	// Kubernetes is the k8s.io/kubernetes module version the answers came from.
	Kubernetes string `json:"kubernetes"`
	// Features describes the Gates this version registers (absent: unknown
	// to it), from its DefaultMutableFeatureGate.GetAll().
	Features map[string]Feature `json:"features"`
	Cases    []Case             `json:"cases"`
}

// Feature is one gate's registration in that version.
type Feature struct {
	Default    bool   `json:"default"`
	Locked     bool   `json:"locked"`
	PreRelease string `json:"preRelease"`
}

// Case is one pod set compared under one gate combination.
type Case struct {
	// Gates are the overrides set (with featuregatetesting) for this case.
	Gates map[string]bool `json:"gates"`
	// Effective is what DefaultFeatureGate.Enabled answered for every
	// registered gate of Gates while the case ran.
	Effective map[string]bool   `json:"effective"`
	Now       string            `json:"now"` // RFC3339Nano
	Pods      []json.RawMessage `json:"pods"`
	Ranks     []int             `json:"ranks"`
	// Less[i][j] is the real ActivePodsWithRanks{...}.Less(i, j).
	Less [][]bool `json:"less"`
}

// Version is what a version module supplies.
type Version struct {
	Minor      int
	Kubernetes string // e.g. "v1.21.14"
	// Sidecars: this k8s.io/api has initContainers[].restartPolicy (>= 0.28).
	Sidecars bool
	// Combos are the gate combinations that matter in this version.
	Combos []map[string]bool
	// SetGates sets the gates for the rest of the test t (restoring them in
	// t's cleanup).
	SetGates func(t *testing.T, gates map[string]bool)
	// Features returns the registration of each of names the version knows.
	Features func(names []string) map[string]Feature
	// Enabled returns DefaultFeatureGate.Enabled for each of names.
	Enabled func(names []string) map[string]bool
	// Less decodes the pods strictly into the version's corev1.Pod (an
	// unknown field is an error), returns them re-encoded by that version
	// and the real Less(i, j) for every ordered pair.
	Less func(pods []json.RawMessage, ranks []int, now time.Time) ([]json.RawMessage, [][]bool, error)
}

// Dir is $ORACLE_DIR, or ../../.oracle relative to the version module
// (test/.oracle), made absolute.
func Dir() (string, error) {
	d := os.Getenv("ORACLE_DIR")
	if d == "" {
		d = filepath.Join("..", "..", ".oracle")
	}
	return filepath.Abs(d)
}

func envInt(t *testing.T, name string, def uint64) uint64 {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return n
	}
	return def
}

// ComboName renders a combination as "PodDeletionCost=true,LogarithmicScaleDown=false".
func ComboName(g map[string]bool) string {
	var parts []string
	for _, name := range Gates {
		if v, ok := g[name]; ok {
			parts = append(parts, name+"="+strconv.FormatBool(v))
		}
	}
	if len(parts) == 0 {
		return "defaults"
	}
	return strings.Join(parts, ",")
}

// Run computes the oracle for every combination and writes the file.
// Every combination sees the same pod sets (same seed), so that the
// answers differ between combinations only through the gates; Run fails
// if toggling a gate never changes an answer (the gate was not really set).
func Run(t *testing.T, v Version) {
	seed := envInt(t, "ORACLE_SEED", 20261122)
	sets := int(envInt(t, "ORACLE_SETS", 400))
	t.Logf("k8s.io/kubernetes %s: %d sets per combination, seed %d (ORACLE_SETS, ORACLE_SEED)", v.Kubernetes, sets, seed)

	file := File{Minor: v.Minor, Kubernetes: v.Kubernetes, Features: v.Features(Gates)}
	for _, name := range Gates {
		if f, ok := file.Features[name]; ok {
			t.Logf("gate %s: default=%v locked=%v %s", name, f.Default, f.Locked, f.PreRelease)
		} else {
			t.Logf("gate %s: not registered", name)
		}
	}
	var known []string
	for _, name := range Gates {
		if _, ok := file.Features[name]; ok {
			known = append(known, name)
		}
	}

	byCombo := make([][]Case, len(v.Combos))
	for ci, combo := range v.Combos {
		t.Run(ComboName(combo), func(t *testing.T) {
			v.SetGates(t, combo)
			eff := v.Enabled(known)
			for name, want := range combo {
				if eff[name] != want {
					t.Fatalf("gate %s: set to %v, DefaultFeatureGate says %v", name, want, eff[name])
				}
			}
			rng := rand.New(rand.NewPCG(seed, uint64(v.Minor)))
			pairs := 0
			for s := 0; s < sets; s++ {
				set := RandomSet(rng, v.Sidecars)
				typed, less, err := v.Less(set.Pods, set.Ranks, set.Now)
				if err != nil {
					t.Fatalf("set %d: %v", s, err)
				}
				for i := range less {
					for j := range less {
						if i == j {
							continue
						}
						pairs++
						if less[i][j] && less[j][i] {
							t.Fatalf("set %d: Less(%d,%d) and Less(%d,%d) are both true", s, i, j, j, i)
						}
					}
				}
				byCombo[ci] = append(byCombo[ci], Case{
					Gates: combo, Effective: eff, Now: set.Now.Format(time.RFC3339Nano),
					Pods: typed, Ranks: set.Ranks, Less: less,
				})
			}
			t.Logf("%s: %d sets, %d ordered pairs from controller.ActivePodsWithRanks.Less", ComboName(combo), sets, pairs)
		})
	}
	if t.Failed() {
		return
	}

	// Each gate a combination toggles must change at least one answer.
	for _, name := range Gates {
		flips, compared := 0, false
		for a := range v.Combos {
			for b := a + 1; b < len(v.Combos); b++ {
				if !onlyDiffer(v.Combos[a], v.Combos[b], name) {
					continue
				}
				compared = true
				flips += countFlips(byCombo[a], byCombo[b])
			}
		}
		if !compared {
			continue
		}
		t.Logf("toggling %s changes %d answers", name, flips)
		if flips == 0 {
			t.Errorf("toggling %s never changed an answer: the gate was not applied", name)
		}
	}

	for _, cs := range byCombo {
		file.Cases = append(file.Cases, cs...)
	}
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("v1.%d.json", v.Minor))
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d cases, %d bytes)", path, len(file.Cases), len(data))
}

func onlyDiffer(a, b map[string]bool, gate string) bool {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	diff := []string{}
	for k := range keys {
		va, oka := a[k]
		vb, okb := b[k]
		if oka != okb || va != vb {
			diff = append(diff, k)
		}
	}
	sort.Strings(diff)
	return len(diff) == 1 && diff[0] == gate
}

func countFlips(a, b []Case) int {
	n := 0
	for s := range a {
		for i := range a[s].Less {
			for j := range a[s].Less[i] {
				if a[s].Less[i][j] != b[s].Less[i][j] {
					n++
				}
			}
		}
	}
	return n
}
