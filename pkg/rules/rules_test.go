package rules

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// gateTable is each version's registry of the scale-in gates, as read from
// k8s.io/kubernetes pkg/features (kube_features.go, and
// versioned_kube_features.go in 1.32) of v1.21.14, v1.22.17, v1.23.17,
// v1.24.17, v1.25.16, v1.26.15, v1.27.16, v1.28.15, v1.29.15, v1.30.14,
// v1.31.14, v1.32.13, v1.33.13, v1.34.4, v1.35.0, v1.36.3 and v1.37.1:
// name -> default, and which of them are locked to it (GA).
// MaxUnavailableStatefulSet read in v1.34.4, v1.35.4, v1.36.3 and v1.37.1
// (the proxy holds no other 1.35 patch release).
// test/conformance's TestVersionOracles checks 1.21, 1.25, 1.29 and 1.33
// again against the gate registry of the running k8s code.
var gateTable = map[int]struct {
	defaults map[string]bool
	locked   []string
}{
	21: {map[string]bool{PodDeletionCost: false, LogarithmicScaleDown: false}, nil},
	22: {map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: true, StatefulSetMinReadySeconds: false}, nil},
	23: {map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: true, StatefulSetMinReadySeconds: true, StatefulSetAutoDeletePVC: false}, nil},
	24: {map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: true, StatefulSetMinReadySeconds: true, StatefulSetAutoDeletePVC: false, MaxUnavailableStatefulSet: false}, nil},
	25: {map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: true, StatefulSetMinReadySeconds: true, StatefulSetAutoDeletePVC: false, MaxUnavailableStatefulSet: false}, []string{StatefulSetMinReadySeconds}},
	26: {map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: true, StatefulSetMinReadySeconds: true, StatefulSetAutoDeletePVC: false, StatefulSetStartOrdinal: false, MaxUnavailableStatefulSet: false}, []string{StatefulSetMinReadySeconds}},
	27: {map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: true, StatefulSetAutoDeletePVC: true, StatefulSetStartOrdinal: true, MaxUnavailableStatefulSet: false}, nil},
	28: {map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: true, StatefulSetAutoDeletePVC: true, StatefulSetStartOrdinal: true, MaxUnavailableStatefulSet: false}, nil},
	29: {map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: true, StatefulSetAutoDeletePVC: true, StatefulSetStartOrdinal: true, MaxUnavailableStatefulSet: false}, nil},
	30: {map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: true, StatefulSetAutoDeletePVC: true, StatefulSetStartOrdinal: true, MaxUnavailableStatefulSet: false}, nil},
	31: {map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: true, StatefulSetAutoDeletePVC: true, StatefulSetStartOrdinal: true, MaxUnavailableStatefulSet: false}, []string{LogarithmicScaleDown, StatefulSetStartOrdinal}},
	32: {map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: true, StatefulSetAutoDeletePVC: true, StatefulSetStartOrdinal: true, MaxUnavailableStatefulSet: false}, []string{LogarithmicScaleDown, StatefulSetAutoDeletePVC, StatefulSetStartOrdinal}},
	33: {map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: true, StatefulSetAutoDeletePVC: true, StatefulSetStartOrdinal: true, HPAConfigurableTolerance: false, MaxUnavailableStatefulSet: false}, []string{LogarithmicScaleDown, StatefulSetAutoDeletePVC, StatefulSetStartOrdinal}},
	34: {map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: true, StatefulSetAutoDeletePVC: true, HPAConfigurableTolerance: false, MaxUnavailableStatefulSet: false}, []string{LogarithmicScaleDown, StatefulSetAutoDeletePVC}},
	35: {map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: true, HPAConfigurableTolerance: true, MaxUnavailableStatefulSet: false}, []string{LogarithmicScaleDown}},
	36: {map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: true, HPAConfigurableTolerance: true, MaxUnavailableStatefulSet: false}, []string{LogarithmicScaleDown}},
	37: {map[string]bool{PodDeletionCost: true, StatefulSetRecreateStrategy: false, HPAConfigurableTolerance: true, MaxUnavailableStatefulSet: true}, []string{HPAConfigurableTolerance}},
}

func TestGateTableCoversEveryVersion(t *testing.T) {
	for m := Oldest; m <= Newest; m++ {
		if _, ok := gateTable[m]; !ok {
			t.Errorf("no expectation for 1.%d", m)
		}
	}
	if len(gateTable) != Newest-Oldest+1 {
		t.Errorf("gateTable has %d versions, want %d", len(gateTable), Newest-Oldest+1)
	}
}

func TestGatesForMatchesSource(t *testing.T) {
	for m, want := range gateTable {
		if got := withoutJobGates(GatesFor(m)); !maps.Equal(got, want.defaults) {
			t.Errorf("GatesFor(%d) = %v, want %v", m, got, want.defaults)
		}
	}
}

// A gate can be set away from its default exactly when the version has not
// locked it; setting a locked gate to its own value is accepted, as the
// components accept it.
func TestLockedGates(t *testing.T) {
	for m, want := range gateTable {
		for name, def := range want.defaults {
			locked := slices.Contains(want.locked, name)
			_, err := For(m, map[string]bool{name: !def})
			if locked && err == nil {
				t.Errorf("1.%d: %s=%v accepted, but the gate is locked to %v", m, name, !def, def)
			}
			if locked && err != nil && !strings.Contains(err.Error(), "locked") {
				t.Errorf("1.%d: %s=%v: error %q does not say the gate is locked", m, name, !def, err)
			}
			if !locked && err != nil {
				t.Errorf("1.%d: %s=%v refused: %v", m, name, !def, err)
			}
			if _, err := For(m, map[string]bool{name: def}); err != nil {
				t.Errorf("1.%d: %s=%v (its default) refused: %v", m, name, def, err)
			}
		}
	}
}

// A scale-in gate the version does not (or no longer) have is an error,
// like kube-controller-manager's "unrecognized feature gate".
func TestGateThatDoesNotExist(t *testing.T) {
	for _, c := range []struct {
		minor int
		gate  string
	}{
		{37, LogarithmicScaleDown}, // removed in 1.37
		{37, StatefulSetAutoDeletePVC},
		{21, StatefulSetMinReadySeconds}, // added in 1.22
		{27, StatefulSetMinReadySeconds}, // removed in 1.27
		{25, StatefulSetStartOrdinal},    // added in 1.26
		{34, StatefulSetStartOrdinal},    // removed in 1.34
		{35, StatefulSetAutoDeletePVC},   // removed in 1.35
	} {
		for _, v := range []bool{true, false} {
			_, err := For(c.minor, map[string]bool{c.gate: v})
			if err == nil || !strings.Contains(err.Error(), "does not exist") {
				t.Errorf("For(%d, %s=%v) = %v, want a does-not-exist error", c.minor, c.gate, v, err)
			}
		}
	}
}

// Like kube-controller-manager, an unknown or misspelt gate is an error; it
// names the gates that are known, so the user can correct it.
func TestUnknownGatesRejected(t *testing.T) {
	for _, name := range []string{"NoSuchGate", "PodDeletionCosts", "poddeletioncost", "SidecarContainers"} {
		_, err := For(29, map[string]bool{name: true, PodDeletionCost: false})
		if err == nil || !strings.Contains(err.Error(), "unknown feature gate "+name) ||
			!strings.Contains(err.Error(), "LogarithmicScaleDown, MaxUnavailableStatefulSet, PodDeletionCost, StatefulSetAutoDeletePVC, StatefulSetStartOrdinal") {
			t.Errorf("For(29, %s=true) error = %v, want an unknown-gate error listing the known gates", name, err)
		}
	}
	r, err := For(29, map[string]bool{PodDeletionCost: false})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Overridden, []string{PodDeletionCost}) || r.DeletionCost {
		t.Errorf("Overridden = %v, DeletionCost = %v", r.Overridden, r.DeletionCost)
	}
}

func TestOverriddenIsSorted(t *testing.T) {
	r, err := For(30, map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: false, StatefulSetAutoDeletePVC: true})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{LogarithmicScaleDown, PodDeletionCost, StatefulSetAutoDeletePVC}; !slices.Equal(r.Overridden, want) {
		t.Errorf("Overridden = %v, want %v", r.Overridden, want)
	}
	if d, _ := For(30, nil); len(d.Overridden) != 0 {
		t.Errorf("defaults report overrides %v", d.Overridden)
	}
}

// The comparator switches per version with default gates: each flips
// exactly at the release whose source changed it.
func TestComparatorSwitchesByVersion(t *testing.T) {
	for m := Oldest; m <= Newest; m++ {
		r, err := For(m, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Minor != m || r.Version() != "1."+strconv.Itoa(m) {
			t.Errorf("For(%d): Minor %d, Version %q", m, r.Minor, r.Version())
		}
		if want := m >= 22; r.DeletionCost != want {
			t.Errorf("1.%d: DeletionCost = %v, want %v (PodDeletionCost beta and on from 1.22)", m, r.DeletionCost, want)
		}
		if want := m >= 22; r.LogScale != want {
			t.Errorf("1.%d: LogScale = %v, want %v (LogarithmicScaleDown on from 1.22, unconditional from 1.37)", m, r.LogScale, want)
		}
		if want := m >= 32; r.SidecarRestarts != want {
			t.Errorf("1.%d: SidecarRestarts = %v, want %v (compareMaxContainerRestarts from 1.32)", m, r.SidecarRestarts, want)
		}
		if want := m <= 23; r.RCRanks != want {
			t.Errorf("1.%d: RCRanks = %v, want %v", m, r.RCRanks, want)
		}
	}
}

func TestGatesDriveTheComparator(t *testing.T) {
	for _, c := range []struct {
		minor         int
		gates         map[string]bool
		cost, logSc   bool
		wantErrSubstr string
	}{
		{21, nil, false, false, ""},
		{21, map[string]bool{PodDeletionCost: true}, true, false, ""},
		{21, map[string]bool{LogarithmicScaleDown: true}, false, true, ""},
		{21, map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: true}, true, true, ""},
		{22, map[string]bool{PodDeletionCost: false}, false, true, ""},
		{25, map[string]bool{PodDeletionCost: false, LogarithmicScaleDown: false}, false, false, ""},
		{30, map[string]bool{LogarithmicScaleDown: false}, true, false, ""},
		{31, map[string]bool{LogarithmicScaleDown: false}, false, false, "locked to true"},
		{36, map[string]bool{LogarithmicScaleDown: false}, false, false, "locked to true"},
		{36, map[string]bool{LogarithmicScaleDown: true}, true, true, ""},
		{37, map[string]bool{LogarithmicScaleDown: false}, false, false, "does not exist"},
		{37, map[string]bool{LogarithmicScaleDown: true}, false, false, "does not exist"},
		{37, map[string]bool{PodDeletionCost: false}, false, true, ""},
	} {
		r, err := For(c.minor, c.gates)
		if c.wantErrSubstr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErrSubstr) {
				t.Errorf("For(%d, %v) error = %v, want %q", c.minor, c.gates, err, c.wantErrSubstr)
			}
			continue
		}
		if err != nil {
			t.Errorf("For(%d, %v): %v", c.minor, c.gates, err)
			continue
		}
		if r.DeletionCost != c.cost || r.LogScale != c.logSc {
			t.Errorf("For(%d, %v): DeletionCost %v LogScale %v, want %v %v", c.minor, c.gates, r.DeletionCost, r.LogScale, c.cost, c.logSc)
		}
	}
}

func TestUnsupportedVersions(t *testing.T) {
	for _, m := range []int{0, 20, 38, 100} {
		if _, err := For(m, nil); err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("For(%d) error = %v", m, err)
		}
	}
	s := Supported()
	if len(s) != 17 || s[0] != "1.21" || s[len(s)-1] != "1.37" {
		t.Errorf("Supported() = %v", s)
	}
	if d := Default(); d.Minor != Newest || len(d.Overridden) != 0 {
		t.Errorf("Default() = 1.%d overridden %v", d.Minor, d.Overridden)
	}
}

func TestParseGates(t *testing.T) {
	for _, c := range []struct {
		in   string
		want map[string]bool
	}{
		{"", map[string]bool{}},
		{"PodDeletionCost=false", map[string]bool{PodDeletionCost: false}},
		{"PodDeletionCost=true,LogarithmicScaleDown=false", map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: false}},
		{" PodDeletionCost = true ,,LogarithmicScaleDown=0,", map[string]bool{PodDeletionCost: true, LogarithmicScaleDown: false}},
		{"PodDeletionCost=1,PodDeletionCost=F", map[string]bool{PodDeletionCost: false}}, // last wins, ParseBool spellings
		{"Other=TRUE", map[string]bool{"Other": true}},
	} {
		got, err := ParseGates(c.in)
		if err != nil {
			t.Errorf("ParseGates(%q): %v", c.in, err)
			continue
		}
		if !maps.Equal(got, c.want) {
			t.Errorf("ParseGates(%q) = %v, want %v", c.in, got, c.want)
		}
	}
	for _, c := range []struct{ in, substr string }{
		{"PodDeletionCost", `"PodDeletionCost": malformed pair`},
		{"PodDeletionCost=true,LogarithmicScaleDown", `"LogarithmicScaleDown": malformed pair`},
		{"PodDeletionCost=yes", `"PodDeletionCost=yes": invalid value of PodDeletionCost: yes`},
		{"PodDeletionCost=", `"PodDeletionCost=": invalid value of PodDeletionCost: ,`},
		{"A=true, ,B=false", `" ": malformed pair`}, // kube-controller-manager rejects a blank item too
	} {
		_, err := ParseGates(c.in)
		if err == nil || !strings.Contains(err.Error(), c.substr) {
			t.Errorf("ParseGates(%q) error = %v, want %q", c.in, err, c.substr)
		}
	}
}

func TestParseMinor(t *testing.T) {
	for in, want := range map[string]int{
		"1.29": 29, "v1.29": 29, "v1.29.3": 29, "1.29.0-eks-123": 29, " v1.21.14 ": 21, //nolint:gocritic // surrounding spaces are the point "1.30+": 30, "v1.37.1-gke.100": 37,
	} {
		if got, err := ParseMinor(in); err != nil || got != want {
			t.Errorf("ParseMinor(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, why := range map[string]string{
		"":       "it is empty",
		"1":      `no minor version after "1."`,
		"v1.":    `no minor version after "1."`,
		"2.0":    `the major version is "2", not 1`,
		"v2.29":  `the major version is "2", not 1`,
		"abc":    `the major version is "abc", not 1`,
		"1.x":    `the minor version "x" does not start with a digit`,
		"1.+":    `the minor version "+" does not start with a digit`,
		"1.2900": `the minor version "2900" is too long`,
	} {
		_, err := ParseMinor(in)
		if err == nil || !strings.Contains(err.Error(), why) || !strings.Contains(err.Error(), strconv.Quote(in)) {
			t.Errorf("ParseMinor(%q) error = %v, want %q", in, err, why)
		}
	}
}

func TestAutoscalerToleranceGate(t *testing.T) {
	for _, c := range []struct {
		minor    int
		override map[string]bool
		want     bool
		exists   bool
		err      bool
	}{
		{32, nil, false, false, false},
		{32, map[string]bool{HPAConfigurableTolerance: true}, false, false, true},
		{33, nil, false, true, false},
		{34, map[string]bool{HPAConfigurableTolerance: true}, true, true, false},
		{35, nil, true, true, false},
		{36, map[string]bool{HPAConfigurableTolerance: false}, false, true, false},
		{37, nil, true, true, false},
		{37, map[string]bool{HPAConfigurableTolerance: false}, false, true, true}, // GA, locked
	} {
		r, err := For(c.minor, c.override)
		if (err != nil) != c.err {
			t.Errorf("1.%d %v: err %v", c.minor, c.override, err)
			continue
		}
		if err != nil {
			continue
		}
		_, exists := r.GatesOf(KindAutoscaler)[HPAConfigurableTolerance]
		if r.Autoscaler.ConfigurableTolerance != c.want || exists != c.exists {
			t.Errorf("1.%d %v: tolerance %v exists %v, want %v %v", c.minor, c.override, r.Autoscaler.ConfigurableTolerance, exists, c.want, c.exists)
		}
		if _, listed := r.GatesOf(KindComparator, KindReplicaSet, KindStatefulSet)[HPAConfigurableTolerance]; listed {
			t.Errorf("1.%d: the autoscaler gate is listed with the scale-in gates", c.minor)
		}
	}
}
