package rules

import "testing"

// MaxUnavailableStatefulSet, read in kube_features.go: alpha (off) from
// 1.24, beta off in 1.35 and 1.36, beta on in 1.37. The two-phase Parallel
// deletion is in 1.37's updateStatefulSetAfterInvariantEstablished only.
func TestStatefulSetMaxUnavailableByVersion(t *testing.T) {
	for _, c := range []struct {
		minor                    int
		gate                     map[string]bool
		maxUnavailable, parFirst bool
	}{
		{23, nil, false, false},
		{34, nil, false, false},
		{34, map[string]bool{MaxUnavailableStatefulSet: true}, true, false},
		{35, nil, false, false},
		{36, nil, false, false},
		{36, map[string]bool{MaxUnavailableStatefulSet: true}, true, false},
		{37, nil, true, true},
		{37, map[string]bool{MaxUnavailableStatefulSet: false}, false, true},
	} {
		rs, err := For(c.minor, c.gate)
		if err != nil {
			t.Fatalf("For(%d, %v): %v", c.minor, c.gate, err)
		}
		if rs.StatefulSet.MaxUnavailable != c.maxUnavailable || rs.StatefulSet.ParallelUnavailableFirst != c.parFirst {
			t.Errorf("1.%d %v: MaxUnavailable=%v ParallelUnavailableFirst=%v, want %v %v", c.minor, c.gate,
				rs.StatefulSet.MaxUnavailable, rs.StatefulSet.ParallelUnavailableFirst, c.maxUnavailable, c.parFirst)
		}
	}
	if _, err := For(23, map[string]bool{MaxUnavailableStatefulSet: true}); err == nil {
		t.Error("1.23 has no MaxUnavailableStatefulSet gate: want an error")
	}
}
