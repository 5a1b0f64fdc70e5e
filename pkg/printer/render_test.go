package printer

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The linear layout gives the table writer's lines, byte for byte, over
// random grids: empty cells, inner, leading and trailing spaces, wide and
// combining characters, symbols the WHY texts use.
func TestPlainLinesMatchTableWriter(t *testing.T) {
	pieces := []string{"", " ", "  ", "a", "web-7d4b9c-x2k9p", "DELETE 100%", "R5 rank: 3 vs 1", "≥", "…", "→", "é", "e\u0301", "日本", "Ｘ", "🙂", "(web-1)", "-", "%", "---- cut ----"}
	rng := rand.New(rand.NewPCG(18, 2))
	for trial := 0; trial < 500; trial++ {
		cols := 1 + rng.IntN(8)
		cell := func() string {
			var b strings.Builder
			for range rng.IntN(4) {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
			return b.String()
		}
		var g grid
		for range cols {
			g.header = append(g.header, strings.ToUpper(cell()+"H"))
		}
		for range rng.IntN(12) {
			r := make([]string, cols)
			for c := range r {
				r[c] = cell()
			}
			g.rows = append(g.rows, r)
		}
		got, ok := plainLines(g)
		if !ok {
			t.Fatalf("trial %d: plainLines declined %q", trial, g)
		}
		want, err := tableLines(g)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: grid %q\ngot  %q\nwant %q", trial, g, got, want)
		}
	}
	if _, ok := plainLines(grid{header: []string{"A"}, rows: [][]string{{"x\ny"}}}); ok {
		t.Error("plainLines took a line break")
	}
}
