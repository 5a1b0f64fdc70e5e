package rules

import "testing"

// Read in kube_features.go and pkg/controller/daemon/update.go of
// v1.21.14, v1.22.17, v1.25.16, v1.26.15, v1.27.16, v1.28.15 and v1.37.1.
func TestDaemonSetRulesMatchSource(t *testing.T) {
	for m := Oldest; m <= Newest; m++ {
		r, err := For(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, exists := r.Gates[DaemonSetUpdateSurge]
		if want := m <= 26; exists != want {
			t.Errorf("1.%d: gate exists %v, want %v", m, exists, want)
		}
		if want := m >= 22; r.DaemonSet.Surge != want {
			t.Errorf("1.%d: Surge %v, want %v", m, r.DaemonSet.Surge, want)
		}
		if want := m >= 28; r.DaemonSet.UnavailableOldCount != want {
			t.Errorf("1.%d: UnavailableOldCount %v, want %v", m, r.DaemonSet.UnavailableOldCount, want)
		}
	}
	if r, err := For(21, map[string]bool{DaemonSetUpdateSurge: true}); err != nil || !r.DaemonSet.Surge {
		t.Errorf("1.21 with the alpha gate on: Surge %v, err %v", r.DaemonSet.Surge, err)
	}
	if _, err := For(25, map[string]bool{DaemonSetUpdateSurge: false}); err == nil {
		t.Error("1.25: the GA gate turned off was accepted (it is locked)")
	}
}
