package job

import "testing"

// parseIndexes reads status.completedIndexes, which any client with status
// access can write: it must not panic and must stay below completions.
func FuzzParseIndexes(f *testing.F) {
	for _, s := range []string{"", "0", "1,3-5", "0-2,4,6-9", "9-3", "-1", "1-", ",,", "3-2147483647", "a-b"} {
		f.Add(s, 8)
	}
	f.Fuzz(func(t *testing.T, s string, completions int) {
		if completions < 0 || completions > 1<<16 {
			return
		}
		for _, ix := range parseIndexes(s, completions) {
			if ix < 0 || ix >= completions {
				t.Fatalf("parseIndexes(%q, %d) gave %d", s, completions, ix)
			}
		}
	})
}
