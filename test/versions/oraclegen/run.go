package oraclegen

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
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

// File is the recorded oracle, written gzip-compressed to
// $ORACLE_DIR/v1.NN.json.gz. Every gate combination sees the same pod sets,
// so the sets are stored once and each combination stores only its answers.
type File struct {
	Minor int `json:"minor"`
	// Kubernetes is the k8s.io/kubernetes module version the answers came from.
	Kubernetes string `json:"kubernetes"`
	// Seed generated the sets (ORACLE_SEED); regenerating with it is exact.
	Seed uint64 `json:"seed"`
	// Features describes the Gates this version registers (absent: unknown
	// to it), from its DefaultMutableFeatureGate.GetAll().
	Features map[string]Feature `json:"features"`
	Sets     []PodSet           `json:"sets"`
	Combos   []Combo            `json:"combos"`
}

// Feature is one gate's registration in that version.
type Feature struct {
	Default    bool   `json:"default"`
	Locked     bool   `json:"locked"`
	PreRelease string `json:"preRelease"`
}

// PodSet is one random pod set as the version's own k8s.io/api encodes it.
type PodSet struct {
	Now   string            `json:"now"` // RFC3339Nano
	Pods  []json.RawMessage `json:"pods"`
	Ranks []int             `json:"ranks"`
}

// Combo is one gate combination and the real answers under it.
type Combo struct {
	// Gates are the overrides set (with featuregatetesting).
	Gates map[string]bool `json:"gates"`
	// Effective is what DefaultFeatureGate.Enabled answered for every
	// registered gate of Gates while the combination ran.
	Effective map[string]bool `json:"effective"`
	// Less[s] is set s's matrix of the real ActivePodsWithRanks{...}.Less(i, j),
	// row-major, one '1' or '0' per ordered pair (n*n characters, the
	// diagonal '0').
	Less []string `json:"less"`
}

// EncodeLess renders a Less matrix in the form of Combo.Less.
func EncodeLess(less [][]bool) string {
	var b strings.Builder
	for _, row := range less {
		for _, v := range row {
			if v {
				b.WriteByte('1')
			} else {
				b.WriteByte('0')
			}
		}
	}
	return b.String()
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

// Dir is $ORACLE_DIR, or ../../conformance/testdata/oracles relative to
// the version module (where test/conformance reads the recorded files),
// made absolute.
func Dir() (string, error) {
	d := os.Getenv("ORACLE_DIR")
	if d == "" {
		d = filepath.Join("..", "..", "conformance", "testdata", "oracles")
	}
	return filepath.Abs(d)
}

// EnvInt reads a non-negative integer setting such as ORACLE_SEED, def
// when unset.
func EnvInt(t *testing.T, name string, def uint64) uint64 {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return n
	}
	return def
}

// ComboName renders a combination as "PodDeletionCost=true,LogarithmicScaleDown=false":
// the scale-in gates in the order of Gates, then any others by name.
func ComboName(g map[string]bool) string {
	var parts []string
	for _, name := range Gates {
		if v, ok := g[name]; ok {
			parts = append(parts, name+"="+strconv.FormatBool(v))
		}
	}
	var others []string
	for name := range g {
		if !slices.Contains(Gates, name) {
			others = append(others, name)
		}
	}
	sort.Strings(others)
	for _, name := range others {
		parts = append(parts, name+"="+strconv.FormatBool(g[name]))
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
	seed := EnvInt(t, "ORACLE_SEED", 20261122)
	sets := int(EnvInt(t, "ORACLE_SETS", 400))
	t.Logf("k8s.io/kubernetes %s: %d sets per combination, seed %d (ORACLE_SETS, ORACLE_SEED)", v.Kubernetes, sets, seed)

	file := File{Minor: v.Minor, Kubernetes: v.Kubernetes, Seed: seed, Features: v.Features(Gates)}
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

	byCombo := make([][][][]bool, len(v.Combos)) // combination -> set -> Less
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
			out := Combo{Gates: combo, Effective: eff}
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
				rec := PodSet{Now: set.Now.Format(time.RFC3339Nano), Pods: typed, Ranks: set.Ranks}
				if ci == 0 {
					file.Sets = append(file.Sets, rec)
				} else if err := sameSet(file.Sets[s], rec); err != nil {
					t.Fatalf("set %d differs from the first combination's (the sets are stored once): %v", s, err)
				}
				byCombo[ci] = append(byCombo[ci], less)
				out.Less = append(out.Less, EncodeLess(less))
			}
			file.Combos = append(file.Combos, out)
			t.Logf("%s: %d sets, %d ordered pairs from controller.ActivePodsWithRanks.Less", ComboName(combo), sets, pairs)
		})
		if t.Failed() {
			return
		}
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
	if t.Failed() {
		return
	}
	n := WriteFile(t, fmt.Sprintf("v1.%d.json.gz", file.Minor), &file)
	t.Logf("%d sets x %d combinations, %d bytes", len(file.Sets), len(file.Combos), n)
}

// WriteFile stores v as JSON, gzip-compressed, as $ORACLE_DIR/name,
// byte-for-byte the same for the same answers (no name or time in the gzip
// header), so that a regeneration can be compared with the committed file.
// It returns the compressed size.
func WriteFile(t *testing.T, name string, v any) int {
	dir, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes, %d uncompressed)", path, buf.Len(), len(data))
	return buf.Len()
}

func sameSet(a, b PodSet) error {
	if a.Now != b.Now || fmt.Sprint(a.Ranks) != fmt.Sprint(b.Ranks) || len(a.Pods) != len(b.Pods) {
		return fmt.Errorf("now %s/%s, ranks %v/%v, %d/%d pods", a.Now, b.Now, a.Ranks, b.Ranks, len(a.Pods), len(b.Pods))
	}
	for i := range a.Pods {
		if !bytes.Equal(a.Pods[i], b.Pods[i]) {
			return fmt.Errorf("pod %d: %s / %s", i, a.Pods[i], b.Pods[i])
		}
	}
	return nil
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

func countFlips(a, b [][][]bool) int {
	n := 0
	for s := range a {
		for i := range a[s] {
			for j := range a[s][i] {
				if a[s][i][j] != b[s][i][j] {
					n++
				}
			}
		}
	}
	return n
}
