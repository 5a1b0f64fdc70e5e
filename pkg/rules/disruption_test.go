package rules

import "testing"

// unhealthyPodEvictionPolicy: absent before 1.26, opt-in in 1.26, on by
// default from 1.27, locked from 1.31.
func TestDisruptionUnhealthyPolicy(t *testing.T) {
	off := map[string]bool{PDBUnhealthyPodEvictionPolicy: false}
	on := map[string]bool{PDBUnhealthyPodEvictionPolicy: true}
	for _, tc := range []struct {
		minor int
		gates map[string]bool
		want  bool
	}{
		{25, on, false}, {26, nil, false}, {26, on, true}, {27, nil, true}, {27, off, false}, {31, off, true}, {37, off, true},
	} {
		if got := Disruption(tc.minor, tc.gates).UnhealthyPodEvictionPolicy; got != tc.want {
			t.Errorf("1.%d %v: %v, want %v", tc.minor, tc.gates, got, tc.want)
		}
	}
}
