package source

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"

	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
)

// sameAsYAMLLib fails if the fast conversion accepts item but its JSON is
// not the value sigs.k8s.io/yaml gives (or the library rejects item).
func sameAsYAMLLib(t *testing.T, item []byte) bool {
	t.Helper()
	fast, ok := yamlItemToJSON(item)
	if !ok {
		return false
	}
	lib, err := yaml.YAMLToJSON(item)
	if err != nil {
		t.Fatalf("fast conversion accepted what yaml.v2 rejects (%v):\n%s", err, item)
	}
	var a, b any
	for _, x := range []struct {
		in  []byte
		out *any
	}{{fast, &a}, {lib, &b}} {
		d := json.NewDecoder(bytes.NewReader(x.in))
		d.UseNumber()
		if err := d.Decode(x.out); err != nil {
			t.Fatalf("invalid JSON %q from:\n%s", x.in, item)
		}
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("item:\n%s\nfast: %s\nlib:  %s", item, fast, lib)
	}
	return true
}

// yamlItems cuts a generated kubectl-style YAML List into its items, as
// the streaming reader does (the dash becomes a space).
func yamlItems(t testing.TB, n int) [][]byte {
	var ys bytes.Buffer
	if err := sourcetest.WriteYAML(&ys, n); err != nil {
		t.Fatal(err)
	}
	var items [][]byte
	for _, part := range strings.Split(ys.String(), "\n- ")[1:] {
		part = strings.SplitN(part, "\nkind: ", 2)[0]
		items = append(items, []byte("  "+part+"\n"))
	}
	return items
}

// Every item kubectl's shape produces is converted by the fast path, to
// the library's value.
func TestYAMLFastGenerated(t *testing.T) {
	items := yamlItems(t, 50)
	if len(items) < 50 {
		t.Fatalf("%d items", len(items))
	}
	for _, it := range items {
		if !sameAsYAMLLib(t, it) {
			t.Fatalf("declined a generated item:\n%s", it)
		}
	}
}

// The same objects read from kubectl's YAML and from its JSON give the
// same snapshot: the YAML path (lines cut into items, converted without
// the YAML library) decodes into the same compact records as the JSON one.
func TestYAMLSnapshotMatchesJSON(t *testing.T) {
	var js, ys bytes.Buffer
	if err := sourcetest.WriteJSON(&js, 500); err != nil {
		t.Fatal(err)
	}
	if err := sourcetest.WriteYAML(&ys, 500); err != nil {
		t.Fatal(err)
	}
	fromJSON, err := streamRead(&js, "dflt")
	if err != nil {
		t.Fatal(err)
	}
	fromYAML, err := streamRead(&ys, "dflt")
	if err != nil {
		t.Fatal(err)
	}
	if len(fromYAML.Pods) != 500 || !equality.Semantic.DeepEqual(fromJSON, fromYAML) {
		t.Fatalf("YAML and JSON snapshots differ: %s", firstDiff(fromJSON, fromYAML))
	}
}

// Scalars yaml.v2 resolves in surprising ways, as values and keys, plain
// and quoted: the fast path gives the library's value or declines.
func TestYAMLFastScalars(t *testing.T) {
	scalars := []string{"", "a", "yes", "No", "ON", "off", "y", "n", "true", "True", "tRue", "FALSE", "null", "Null", "~", "NULL",
		"0", "7", "-7", "+7", "-0", "007", "0777", "0x1F", "0o17", "0b101", "-0b101", "1_000", "9223372036854775807", "9223372036854775808",
		"18446744073709551616", "1e3", "1E-3", "1.5", ".5", "5.", "-.5", ".inf", "-.Inf", ".nan", ".", "..", "1.2.3", "10.0.0.1", "100m", "2Gi",
		"2006-01-02", "2006-01-02T15:04:05Z", "2006-1-2", "1:20", "12:30:45", "<<", "=", "a:b", "http://x/y", "a b", "a #b", "a#b", "-a", "--flag=a,b",
		"[a]", "{a: b}", "&x", "*x", "!x", "|", ">", "%x", "@x", "`x", "? x", ": x", "- x", "a: b", "a:", "'q'", `"q"`, `"a\"b"`, `"a\\b"`,
		`"a\nb"`, `"a\tb"`, `"\x41"`, `"\u0041"`, `"a\ b"`, "'it''s'", "'a\"b'", `"#"`, "'#'", "Infinity", "NaN", "nan", "0.0.0.0:80"}
	n := 0
	for _, s := range scalars {
		for _, doc := range []string{
			"  k: " + s + "\n",
			"  " + s + ": v\n",
			"  k:\n  - " + s + "\n  - x\n",
			"  k:\n    - " + s + "\n  z: 1\n",
			"  - " + s + "\n",
			"  a:\n    b: " + s + "\n    c: [] \n  d: {}\n",
		} {
			if sameAsYAMLLib(t, []byte(doc)) {
				n++
			}
		}
	}
	if n < 200 {
		t.Errorf("only %d of the scalar documents took the fast path", n)
	}
}

// Structures: compact and indented sequences, literal blocks, blank
// lines, nested mappings, null values, duplicates.
func TestYAMLFastStructures(t *testing.T) {
	accepted := []string{
		"  a: 1\n  b:\n  c: x\n",
		"  a:\n  - 1\n  - 2\n  b: 3\n",
		"  a:\n    - 1\n    -\n    - c: 1\n      d: 2\n    - e\n",
		"  s: |\n    line 1\n      more  \n\n    line 3\n  t: 1\n",
		"  s: |-\n    x\n    y\n",
		"  - |\n    x\n",
		"  a:\n    b:\n      c:\n        d: e\n",
		"  'k k': \"v v\"\n",
		"  a: {}\n  b: []\n",
		"  a: 1\n  b: x\n   y\n",
		"  a: é – ünïcode ’ 😀\n",
		"  - first\n    second -third\n  - x\n",
		"  m: 'a: b\n    c d''e'\n  z: 2\n",
		"  a:\n  - 'x:\n    y'\n",
	}
	for _, doc := range accepted {
		if !sameAsYAMLLib(t, []byte(doc)) {
			t.Errorf("declined:\n%s", doc)
		}
	}
	declined := []string{
		"  a: 1\n  a: 2\n",
		"  a: x # c\n",
		"  a: x\n    y: z\n",
		"  a: x\n    # c\n",
		"  a: x\n\n    y\n",
		"  a: 'x\n\n    y'\n",
		"  a: 'x'\n    y\n",
		"  a: \u2028\n",
		"  a: \u0085\n",
		"  a: \ufeffx\n",
		"  a: \xff\n",
		"  # c\n  a: 1\n",
		"  a: >\n    x\n",
		"  a: |+\n    x\n",
		"  a: |2\n    x\n",
		"  a: [1, 2]\n",
		"  a: 1\n\n  b: 2\n",
		"  a: \"x\n    y\"\n",
		"  a:\tb\n",
		"  - - x\n",
		"  a:\n    x\n",
		"  a: &x 1\n",
		"  true: 1\n",
		"  1.5: x\n",
		"  ? a\n  : b\n",
	}
	for _, doc := range declined {
		if _, ok := yamlItemToJSON([]byte(doc)); ok {
			t.Errorf("accepted:\n%s", doc)
		}
	}
}

// Random edits of generated items: whatever the fast path accepts, the
// library reads to the same value.
func TestYAMLFastMutations(t *testing.T) {
	items := yamlItems(t, 20)
	bits := []string{" ", "  ", "\n", "\n  ", "\n      ", "- ", ": ", ":", "#", "'", `"`, "|", "|-", "\n\n", "{}", "[]", "yes", "0", "07", "1.5", "-", "x", "\\", "''", "~", "&a", "*a", "2006-01-02",
		"é", "’", "\u2028", "\u0085", "\xc3"}
	rng := rand.New(rand.NewPCG(18, 3))
	accepted := 0
	runs := 20000
	if testing.Short() {
		runs = 3000
	}
	for range runs {
		it := []byte(string(items[rng.IntN(len(items))]))
		for range 1 + rng.IntN(3) {
			pos := rng.IntN(len(it) + 1)
			switch rng.IntN(3) {
			case 0:
				it = append(it[:pos:pos], append([]byte(bits[rng.IntN(len(bits))]), it[pos:]...)...)
			case 1:
				end := min(len(it), pos+1+rng.IntN(8))
				it = append(it[:pos:pos], it[end:]...)
			default:
				if pos < len(it) {
					it[pos] = " -:'\"|#\nx0"[rng.IntN(10)]
				}
			}
		}
		if sameAsYAMLLib(t, it) {
			accepted++
		}
	}
	t.Logf("%d of %d edited items took the fast path", accepted, runs)
}

// FuzzYAMLFastMatchesLibrary: whatever item the fast conversion accepts,
// sigs.k8s.io/yaml reads to the same value.
func FuzzYAMLFastMatchesLibrary(f *testing.F) {
	for _, it := range yamlItems(f, 3) {
		f.Add(it)
	}
	f.Add([]byte("  a: x\n   y\n  b: 'p: q\n    r'\n  c: é\n"))
	f.Fuzz(func(t *testing.T, item []byte) {
		sameAsYAMLLib(t, item)
	})
}

// FuzzStreamMatchesGeneralReader: whatever the streaming reader (with its
// JSON scanner and the fast YAML conversion) takes, the general reader
// reads to the same snapshot.
func FuzzStreamMatchesGeneralReader(f *testing.F) {
	var js, ys bytes.Buffer
	if err := sourcetest.WriteJSON(&js, 2); err != nil {
		f.Fatal(err)
	}
	if err := sourcetest.WriteYAML(&ys, 2); err != nil {
		f.Fatal(err)
	}
	f.Add(js.Bytes())
	f.Add(ys.Bytes())
	f.Add([]byte(`{"kind":"List","apiVersion":"v1","metadata":{},"items":[{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameSnapshot(t, "fuzz", data, false)
	})
}
