package deployment

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
)

func scaledDown(changes []Change) int32 {
	var n int32
	for _, c := range changes {
		if c.Error == "" {
			n += c.From - c.To
		}
	}
	return n
}

// Port of rolling_test.go TestDeploymentController_reconcileNewReplicaSet
// (maxUnavailable 0).
func TestReconcileNewReplicaSet(t *testing.T) {
	tests := []struct {
		deploymentReplicas  int32
		maxSurge            intstr.IntOrString
		oldReplicas         int32
		newReplicas         int32
		scaleExpected       bool
		expectedNewReplicas int32
	}{
		{10, intstr.FromInt32(0), 10, 0, false, 0},
		{10, intstr.FromInt32(2), 10, 0, true, 2},
		{10, intstr.FromInt32(2), 5, 0, true, 7},
		{10, intstr.FromInt32(2), 10, 2, false, 0},
		{10, intstr.FromInt32(2), 2, 11, true, 10},
	}
	for i, tc := range tests {
		d := newDeployment(tc.deploymentReplicas, &tc.maxSurge, num(0))
		s := newSyncer(d, []ReplicaSet{newRS("foo-v2", tc.newReplicas, noTimestamp), rs("foo-v1", tc.oldReplicas, noTimestamp)}, Latest, StepRollout)
		scaled, ok := s.reconcileNewReplicaSet(append(slices.Clone(s.oldRSs), s.newRS))
		if !ok {
			t.Errorf("%d: unexpected error %+v", i, s.changes)
			continue
		}
		if scaled != tc.scaleExpected || len(s.changes) != map[bool]int{true: 1}[tc.scaleExpected] {
			t.Errorf("%d: scaled %v, changes %+v", i, scaled, s.changes)
			continue
		}
		if tc.scaleExpected && s.newRS.Replicas != tc.expectedNewReplicas {
			t.Errorf("%d: new RS %d, want %d", i, s.newRS.Replicas, tc.expectedNewReplicas)
		}
	}
}

// Port of TestDeploymentController_reconcileOldReplicaSets (maxSurge 0),
// checking the resulting size as well.
func TestReconcileOldReplicaSets(t *testing.T) {
	tests := []struct {
		deploymentReplicas  int32
		maxUnavailable      intstr.IntOrString
		oldReplicas         int32
		newReplicas         int32
		readyPodsFromOldRS  int32
		readyPodsFromNewRS  int32
		scaleExpected       bool
		expectedOldReplicas int32
	}{
		{10, intstr.FromInt32(0), 10, 0, 10, 0, true, 9},
		{10, intstr.FromInt32(2), 10, 0, 10, 0, true, 8},
		{10, intstr.FromInt32(2), 10, 0, 8, 0, true, 8}, // unhealthy cleaned up
		{10, intstr.FromInt32(2), 10, 0, 9, 0, true, 8}, // 1 unhealthy + 1 ready
		{10, intstr.FromInt32(2), 8, 2, 8, 0, false, 8}, // new RS unavailable blocks
	}
	for i, tc := range tests {
		n := newRS("foo-new", tc.newReplicas, noTimestamp)
		n.Available = tc.readyPodsFromNewRS
		o := rs("foo-old", tc.oldReplicas, noTimestamp)
		o.Available = tc.readyPodsFromOldRS
		d := newDeployment(tc.deploymentReplicas, num(0), &tc.maxUnavailable)
		s := newSyncer(d, []ReplicaSet{o, n}, Latest, StepRollout)
		s.reconcileOldReplicaSets(append(slices.Clone(s.oldRSs), s.newRS), filterActive(s.oldRSs))
		if got := len(s.changes) > 0; got != tc.scaleExpected {
			t.Errorf("%d: scaled %v, want %v (%+v)", i, got, tc.scaleExpected, s.changes)
		}
		if s.oldRSs[0].Replicas != tc.expectedOldReplicas {
			t.Errorf("%d: old RS %d, want %d", i, s.oldRSs[0].Replicas, tc.expectedOldReplicas)
		}
	}
}

// Port of TestDeploymentController_cleanupUnhealthyReplicas (surge 2,
// unavailable 2, 10 replicas).
func TestCleanupUnhealthyReplicas(t *testing.T) {
	tests := []struct {
		oldReplicas, readyPods, maxCleanupCount, cleanupCountExpected int32
	}{
		{10, 8, 1, 1},
		{10, 8, 3, 2},
		{10, 8, 0, 0},
		{10, 10, 3, 0},
	}
	for i, tc := range tests {
		o := rs("foo-v2", tc.oldReplicas, noTimestamp)
		o.Available = tc.readyPods
		s := newSyncer(newDeployment(10, num(2), num(2)), []ReplicaSet{o}, Latest, StepRollout)
		if !s.cleanupUnhealthyReplicas(filterActive(s.oldRSs), tc.maxCleanupCount) {
			t.Errorf("%d: unexpected error %+v", i, s.changes)
		}
		if got := scaledDown(s.changes); got != tc.cleanupCountExpected {
			t.Errorf("%d: cleaned %d, want %d", i, got, tc.cleanupCountExpected)
		}
	}
}

// Port of TestDeploymentController_scaleDownOldReplicaSetsForRollingUpdate
// (maxSurge 0; allRSs holds only the old RS).
func TestScaleDownOldReplicaSetsForRollingUpdate(t *testing.T) {
	tests := []struct {
		deploymentReplicas  int32
		maxUnavailable      intstr.IntOrString
		readyPods           int32
		oldReplicas         int32
		scaleExpected       bool
		expectedOldReplicas int32
	}{
		{10, intstr.FromInt32(0), 10, 10, true, 9},
		{10, intstr.FromInt32(2), 10, 10, true, 8},
		{10, intstr.FromInt32(2), 8, 10, false, 10},
		{10, intstr.FromInt32(2), 10, 0, false, 0},
		{10, intstr.FromInt32(2), 1, 10, false, 10},
	}
	for i, tc := range tests {
		o := rs("foo-v2", tc.oldReplicas, noTimestamp)
		o.Available = tc.readyPods
		s := newSyncer(newDeployment(tc.deploymentReplicas, num(0), &tc.maxUnavailable), []ReplicaSet{o}, Latest, StepRollout)
		s.scaleDownOldReplicaSetsForRollingUpdate(s.oldRSs, s.oldRSs)
		if got := len(s.changes) == 1; got != tc.scaleExpected {
			t.Errorf("%d: scaled %v, want %v (%+v)", i, got, tc.scaleExpected, s.changes)
		}
		if s.oldRSs[0].Replicas != tc.expectedOldReplicas {
			t.Errorf("%d: old RS %d, want %d", i, s.oldRSs[0].Replicas, tc.expectedOldReplicas)
		}
	}
}

// One rolling sync returns after reconcileNewReplicaSet scaled.
func TestRolloutRollingReturnsAfterNewScaled(t *testing.T) {
	d := newDeployment(10, num(2), num(2))
	o := annotate(rs("v1", 8, oldTimestamp), d, 10)
	o.Available = 8
	n := annotate(newRS("v2", 2, newTimestamp), d, 10)
	n.Available = 2
	next, changes := Rollout(d, []ReplicaSet{o, n}, Latest)
	if changeLog(changes) != "rollout v2 2->4; " {
		t.Fatalf("changes %q", changeLog(changes))
	}
	// Next sync: new RS at the surge limit, old scaled by available-minAvailable.
	_, changes = Rollout(d, next, Latest)
	if changeLog(changes) != "rollout v1 8->6; " {
		t.Errorf("changes %q", changeLog(changes))
	}
}

// Old RSes are cleaned up and scaled down oldest first, across several RSes.
func TestRolloutRollingSeveralOld(t *testing.T) {
	d := newDeployment(10, num(0), num(3))
	in := []ReplicaSet{
		{Name: "v2", Replicas: 4, Available: 4, Created: oldTimestamp},
		{Name: "v1", Replicas: 3, Available: 1, Created: olderTimestamp},
		{Name: "v3", Replicas: 3, Available: 3, Created: newTimestamp, New: true},
	}
	for i := range in {
		in[i] = annotate(in[i], d, 10)
	}
	// maxScaledDown = 10-7-0 = 3: cleanup v1 by 2 (its unavailable pods);
	// then available 8 > 7: scale down 1 more, oldest first (v1 again).
	_, changes := Rollout(d, in, Latest)
	if changeLog(changes) != "rollout v1 3->1; rollout v1 1->0; " {
		t.Errorf("changes %q", changeLog(changes))
	}
	for _, c := range changes {
		t.Log(c.Reason)
	}
}

// Available > Replicas (status not yet caught up with a scale-down) makes
// cleanupUnhealthyReplicas fail; the controller swallows the error and the
// old RSes are not touched in this sync.
func TestRolloutRollingStaleAvailability(t *testing.T) {
	d := newDeployment(3, num(2), num(1))
	o := annotate(rs("old", 4, oldTimestamp), d, 3)
	o.Available = 9
	n := annotate(newRS("new", 1, newTimestamp), d, 3)
	next, changes := Rollout(d, []ReplicaSet{o, n}, Latest)
	if len(changes) != 1 || changes[0].Error == "" || !strings.Contains(changes[0].Error, "invalid request to scale down") {
		t.Fatalf("changes %+v", changes)
	}
	checkSizes(t, next, map[string]int32{"old": 4, "new": 1})
}

// No new RS: rolloutRolling creates it and the same sync goes on to the old RSes.
func TestRolloutRollingCreatesNewRS(t *testing.T) {
	d := newDeployment(10, pct("25%"), pct("25%"))
	d.NewReplicaSetName = "v2"
	d.NewReplicaSetCreated = newTimestamp
	o := annotate(rs("v1", 10, oldTimestamp), d, 10)
	o.Available = 10
	next, changes := Sync(d, []ReplicaSet{o}, Latest)
	if changeLog(changes) != "rollout v2 0->3; rollout v1 10->8; " {
		t.Fatalf("changes %q", changeLog(changes))
	}
	created := byName(next, "v2")
	if !created.New || created.Available != 0 || created.DesiredAnnotation != "10" || created.MaxAnnotation != "13" || !created.Created.Equal(newTimestamp) {
		t.Errorf("created %+v", created)
	}
	final, log := settle(t, d, next, Latest)
	checkSizes(t, final, map[string]int32{"v1": 8, "v2": 5})
	if strings.Join(log, "") != "rollout v2 3->5; " {
		t.Errorf("log %q", log)
	}
	// Scale() never creates it.
	if next, _ := Scale(d, []ReplicaSet{o}, Latest); len(next) != 1 {
		t.Errorf("Scale created a replica set")
	}
}

// nil maxSurge: NewRSNewReplicas fails, the sync stops with an error.
func TestRolloutRollingNilMaxSurge(t *testing.T) {
	d := Deployment{Replicas: 3, Strategy: StrategyRollingUpdate}
	_, changes := Rollout(d, []ReplicaSet{newRS("v2", 1, newTimestamp), rs("v1", 2, oldTimestamp)}, Latest)
	if len(changes) != 1 || changes[0].Error == "" {
		t.Errorf("changes %+v", changes)
	}
}

// The new RS above spec.replicas is set to spec.replicas directly.
func TestRolloutRollingNewAboveSpec(t *testing.T) {
	d := newDeployment(3, num(1), num(1))
	_, changes := Rollout(d, []ReplicaSet{newRS("v2", 5, newTimestamp), rs("v1", 2, oldTimestamp)}, Latest)
	if changeLog(changes) != "rollout v2 5->3; " {
		t.Errorf("changes %q", changeLog(changes))
	}
}
