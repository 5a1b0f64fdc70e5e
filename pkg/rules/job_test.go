package rules

import (
	"maps"
	"testing"
)

// jobGateTable is the Job gates' defaults and locks per version, read from
// pkg/features/kube_features.go (versioned_kube_features.go from 1.32) of
// every release 1.21-1.37.
var jobGateTable = map[int]struct {
	defaults map[string]bool
	locked   []string
}{
	21: {map[string]bool{}, nil},
	22: {map[string]bool{JobTrackingWithFinalizers: false}, nil},
	23: {map[string]bool{JobTrackingWithFinalizers: false}, nil}, // beta, but off (kubernetes#109485)
	24: {map[string]bool{JobTrackingWithFinalizers: false}, nil},
	25: {map[string]bool{JobTrackingWithFinalizers: true}, nil},
	26: {map[string]bool{JobTrackingWithFinalizers: true}, []string{JobTrackingWithFinalizers}},
	27: {map[string]bool{JobTrackingWithFinalizers: true, ElasticIndexedJob: true}, []string{JobTrackingWithFinalizers}},
	28: {map[string]bool{JobTrackingWithFinalizers: true, ElasticIndexedJob: true}, []string{JobTrackingWithFinalizers}},
	29: {map[string]bool{ElasticIndexedJob: true}, nil},
	30: {map[string]bool{ElasticIndexedJob: true}, nil},
	31: {map[string]bool{ElasticIndexedJob: true}, []string{ElasticIndexedJob}},
	32: {map[string]bool{ElasticIndexedJob: true}, []string{ElasticIndexedJob}},
	33: {map[string]bool{ElasticIndexedJob: true}, []string{ElasticIndexedJob}},
	34: {map[string]bool{}, nil},
	35: {map[string]bool{}, nil},
	36: {map[string]bool{}, nil},
	37: {map[string]bool{}, nil},
}

func withoutJobGates(g map[string]bool) map[string]bool {
	out := maps.Clone(g)
	delete(out, ElasticIndexedJob)
	delete(out, JobTrackingWithFinalizers)
	delete(out, DaemonSetUpdateSurge) // daemonset_test.go
	return out
}

func TestJobGatesMatchSource(t *testing.T) {
	for m := Oldest; m <= Newest; m++ {
		want, ok := jobGateTable[m]
		if !ok {
			t.Fatalf("no Job gate expectation for 1.%d", m)
		}
		got := GatesFor(m)
		for name := range got {
			if name != ElasticIndexedJob && name != JobTrackingWithFinalizers {
				delete(got, name)
			}
		}
		if !maps.Equal(got, want.defaults) {
			t.Errorf("1.%d: Job gates %v, want %v", m, got, want.defaults)
		}
		for _, name := range want.locked {
			if _, err := For(m, map[string]bool{name: !want.defaults[name]}); err == nil {
				t.Errorf("1.%d: %s accepted away from its default, but it is locked", m, name)
			}
		}
	}
}

// The Job switches per version, as read from pkg/controller/job of each
// release (docs/jobs.md).
func TestJobSwitchesByVersion(t *testing.T) {
	cases := []struct {
		minor int
		gates map[string]bool
		want  JobRules
	}{
		{21, nil, JobRules{}},
		{22, nil, JobRules{WantRemaining: true, OutOfRange: true, DeleteCap: true}},
		{22, map[string]bool{JobTrackingWithFinalizers: true}, JobRules{WantRemaining: true, OutOfRange: true, DeleteCap: true, TrackingFinalizers: true}},
		{23, nil, JobRules{WantRemaining: true, OutOfRange: true, DeleteCap: true}},
		{25, nil, JobRules{WantRemaining: true, OutOfRange: true, DeleteCap: true, TrackingFinalizers: true}},
		{26, nil, JobRules{WantRemaining: true, OutOfRange: true, DeleteCap: true, TrackingFinalizers: true, TrackingAll: true}},
		{27, map[string]bool{ElasticIndexedJob: false}, JobRules{WantRemaining: true, OutOfRange: true, DeleteCap: true, TrackingFinalizers: true, TrackingAll: true}},
		{30, nil, JobRules{WantRemaining: true, OutOfRange: true, DeleteCap: true, TrackingFinalizers: true, TrackingAll: true, ElasticIndexed: true}},
		{37, nil, JobRules{WantRemaining: true, OutOfRange: true, DeleteCap: true, TrackingFinalizers: true, TrackingAll: true, ElasticIndexed: true}},
	}
	for _, tc := range cases {
		r, err := For(tc.minor, tc.gates)
		if err != nil {
			t.Fatal(err)
		}
		if r.Job != tc.want {
			t.Errorf("1.%d %v: %+v, want %+v", tc.minor, tc.gates, r.Job, tc.want)
		}
	}
}
