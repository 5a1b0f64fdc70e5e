package rules

import (
	"fmt"
	"testing"
)

// FuzzParseMinor: any string is a minor version or an error, and a parsed
// minor reads back from its own "1.N".
func FuzzParseMinor(f *testing.F) {
	for _, s := range []string{"1.29", "v1.29.3", "1.29.0-eks-123", "2.0", "1.", "v", "1.99999999999999999999", "1.-1", " 1.30 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMinor(s)
		if err != nil {
			return
		}
		if m < 0 {
			t.Fatalf("%q parsed as negative minor %d", s, m)
		}
		back, err := ParseMinor(fmt.Sprintf("1.%d", m))
		if err != nil || back != m {
			t.Fatalf("%q -> %d does not read back: %d, %v", s, m, back, err)
		}
		if _, err := For(m, nil); err == nil && (m < Oldest || m > Newest) {
			t.Fatalf("rules for unsupported 1.%d", m)
		}
	})
}

// FuzzParseGates: any string is a gate map or an error; a map is accepted
// or rejected by every version without a panic, and accepted overrides
// show in the rule set.
func FuzzParseGates(f *testing.F) {
	for _, s := range []string{"PodDeletionCost=false", "A=true,B=false", "PodDeletionCost", "=true", ",,", "LogarithmicScaleDown=false,PodDeletionCost=1", "X=maybe"} {
		f.Add(s, 37)
	}
	f.Fuzz(func(t *testing.T, s string, minor int) {
		gates, err := ParseGates(s)
		if err != nil {
			return
		}
		m := Oldest + ((minor%(Newest-Oldest+1))+(Newest-Oldest+1))%(Newest-Oldest+1)
		rs, err := For(m, gates)
		if err != nil {
			return
		}
		if _, ok := gates[""]; ok {
			// kube-controller-manager rejects a gate it does not know;
			// a gate without a name is one.
			t.Fatalf("%q: a gate without a name accepted for 1.%d", s, m)
		}
		for name, v := range gates {
			if got, ok := rs.Gates[name]; ok && got != v {
				t.Fatalf("1.%d %q: gate %s is %v, want %v", m, s, name, got, v)
			}
		}
	})
}
