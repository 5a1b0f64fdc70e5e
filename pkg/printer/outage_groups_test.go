package printer

import (
	"fmt"
	"slices"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// Warnings alike but for their owner merge into one when more than four
// say the same, an owner named whole (app-1 is not app-10's prefix);
// -o wide keeps each.
func TestMergeWarnings(t *testing.T) {
	o := &prediction.Outage{}
	var warnings []string
	for i := 1; i <= 12; i++ {
		owner := fmt.Sprintf("Deployment/app-%d", i)
		o.Replacements = append(o.Replacements, prediction.OutageReplacement{Owner: owner})
		warnings = append(warnings, "replacements of "+owner+" that fit nowhere might fit")
	}
	warnings = append(warnings, "something else", "replacements of Deployment/app-1: their placement depends on the order")
	got := mergeWarnings(warnings, o, TableOptions{})
	want := []string{"replacements of Deployment/app-1, Deployment/app-2, Deployment/app-3, +9 more (-o wide for all) that fit nowhere might fit",
		"something else", "replacements of Deployment/app-1: their placement depends on the order"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if wide := mergeWarnings(warnings, o, TableOptions{Wide: true}); !slices.Equal(wide, warnings) {
		t.Errorf("-o wide: %q", wide)
	}
	if few := mergeWarnings(warnings[:4], o, TableOptions{}); !slices.Equal(few, warnings[:4]) {
		t.Errorf("four alike: %q", few)
	}
}

// Rows of one shape fold after three when there are five or more; a row
// without a shape never folds.
func TestFoldAlike(t *testing.T) {
	rows := func(n int) []alikeRow {
		var out []alikeRow
		for i := range n {
			name := fmt.Sprint("Deployment/a", i)
			out = append(out, alikeRow{cells: []string{name}, shape: "s", name: name, pods: 2, gist: "deleted"})
		}
		return append(out, alikeRow{cells: []string{"bare"}})
	}
	kept, lines := foldAlike(rows(4), "pod", TableOptions{})
	if len(kept) != 5 || len(lines) != 0 {
		t.Errorf("four alike: %q %q", kept, lines)
	}
	kept, lines = foldAlike(rows(6), "pod", TableOptions{})
	want := "3 more like these (-o wide for all): Deployment/a3, Deployment/a4, Deployment/a5 (6 pods together), each like Deployment/a0's row: deleted"
	if len(kept) != 4 || kept[3][0] != "bare" || !slices.Equal(lines, []string{want}) {
		t.Errorf("six alike: %q %q", kept, lines)
	}
	if kept, lines = foldAlike(rows(6), "pod", TableOptions{Wide: true}); len(kept) != 7 || len(lines) != 0 {
		t.Errorf("wide: %q %q", kept, lines)
	}
}
