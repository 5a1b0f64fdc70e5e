package deployment

import (
	"testing"
)

// Port of recreate_test.go TestScaleDownOldReplicaSets.
func TestScaleDownOldReplicaSets(t *testing.T) {
	d := Deployment{Replicas: 3, Strategy: StrategyRecreate}
	in := []ReplicaSet{{Name: "foo-0", Replicas: 3, RunningPods: 3, StatusReplicas: 3}}
	next, changes := Rollout(d, in, Latest)
	if next[0].Replicas != 0 || changeLog(changes) != "rollout foo-0 3->0; " {
		t.Errorf("got %+v %q", next, changeLog(changes))
	}
}

// Port of TestOldPodsRunning: RunningPods counts the pods not in phase
// Succeeded/Failed (Unknown, Pending, Running, terminating included).
func TestOldPodsRunning(t *testing.T) {
	tests := []struct {
		name   string
		newRS  *ReplicaSet
		oldRSs []ReplicaSet
		want   bool
	}{
		{"no old RSs", nil, nil, false},
		{"old RSs with running pods", nil, []ReplicaSet{{Name: "some", RunningPods: 2}, {Name: "other", RunningPods: 2}}, true},
		{"old RSs without pods but with non-zero status replicas", nil, []ReplicaSet{{Name: "rs-1", StatusReplicas: 1}}, true},
		{"old RSs without pods or non-zero status replicas", nil, []ReplicaSet{{Name: "rs-1"}}, false},
		{"old RSs with zero status replicas but pods in terminal state are present", nil, []ReplicaSet{{Name: "rs-1", RunningPods: 0}}, false},
		{"old RSs with zero status replicas but pod in unknown phase present", nil, []ReplicaSet{{Name: "rs-1", RunningPods: 1}}, true},
		{"old RSs with zero status replicas with pending pod present", nil, []ReplicaSet{{Name: "rs-1", RunningPods: 1}}, true},
		{"old RSs with zero status replicas with running pod present", nil, []ReplicaSet{{Name: "rs-1", RunningPods: 1}}, true},
		{"old RSs with zero status replicas but pods in terminal state and pending are present", nil, []ReplicaSet{{Name: "rs-1"}, {Name: "rs-2"}, {Name: "rs-3", RunningPods: 1}}, true},
		{"pods of the new RS are ignored", &ReplicaSet{Name: "new", New: true, RunningPods: 3, StatusReplicas: 3}, []ReplicaSet{{Name: "rs-1"}}, false},
	}
	for _, tc := range tests {
		rss := tc.oldRSs
		if tc.newRS != nil {
			rss = append(rss, *tc.newRS)
		}
		s := newSyncer(Deployment{Strategy: StrategyRecreate}, rss, Latest, StepRollout)
		if got := s.oldPodsRunning(); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A Recreate rollout: old RSes to 0 (sync returns), wait while old pods
// exist, then create the new RS at full size.
func TestRolloutRecreate(t *testing.T) {
	d := Deployment{Replicas: 3, Strategy: StrategyRecreate, NewReplicaSetName: "v3", NewReplicaSetCreated: newTimestamp}
	in := []ReplicaSet{
		{Name: "v1", Replicas: 1, Available: 1, StatusReplicas: 1, RunningPods: 1, Created: olderTimestamp, DesiredAnnotation: "3", MaxAnnotation: "3"},
		{Name: "v2", Replicas: 2, Available: 2, StatusReplicas: 2, RunningPods: 2, Created: oldTimestamp, DesiredAnnotation: "3", MaxAnnotation: "3"},
	}
	next, changes := Sync(d, in, Latest)
	if changeLog(changes) != "rollout v1 1->0; rollout v2 2->0; " {
		t.Fatalf("sync 1: %q", changeLog(changes))
	}
	// Pods still terminating: nothing happens, and no RS is created.
	next, changes = Sync(d, next, Latest)
	if len(changes) != 0 || len(next) != 2 {
		t.Fatalf("sync 2: %+v", changes)
	}
	next[0].RunningPods, next[0].StatusReplicas = 0, 0
	next[1].RunningPods, next[1].StatusReplicas = 1, 0 // a terminating pod still counts
	if _, changes = Sync(d, next, Latest); len(changes) != 0 {
		t.Fatalf("sync 3: %+v", changes)
	}
	next[1].RunningPods = 0
	next, changes = Sync(d, next, Latest)
	if changeLog(changes) != "rollout v3 0->3; " {
		t.Fatalf("sync 4: %q", changeLog(changes))
	}
	if n := byName(next, "v3"); !n.New || n.DesiredAnnotation != "3" || n.MaxAnnotation != "3" {
		t.Errorf("created %+v", n)
	}
	if _, changes = Sync(d, next, Latest); len(changes) != 0 {
		t.Errorf("sync 5: %+v", changes)
	}
}

// An existing new RS is scaled to spec.replicas once old pods are gone, in
// either direction.
func TestRolloutRecreateExistingNew(t *testing.T) {
	d := Deployment{Replicas: 4, Strategy: StrategyRecreate}
	for _, from := range []int32{0, 6} {
		in := []ReplicaSet{{Name: "v1", Created: oldTimestamp}, {Name: "v2", Replicas: from, New: true, Created: newTimestamp}}
		_, changes := Rollout(d, in, Latest)
		if len(changes) != 1 || changes[0].To != 4 {
			t.Errorf("from %d: %+v", from, changes)
		}
	}
}

// Scaling a Recreate Deployment in: one active RS takes the new size.
func TestScaleRecreate(t *testing.T) {
	d := Deployment{Replicas: 2, Strategy: StrategyRecreate}
	in := []ReplicaSet{
		{Name: "v1", Created: oldTimestamp, DesiredAnnotation: "5", MaxAnnotation: "5"},
		{Name: "v2", Replicas: 5, New: true, Created: newTimestamp, DesiredAnnotation: "5", MaxAnnotation: "5"},
	}
	next, changes := Sync(d, in, Latest)
	if changeLog(changes) != "scale v2 5->2; " || next[1].MaxAnnotation != "2" {
		t.Errorf("got %q %+v", changeLog(changes), next)
	}
}
