package deployment

import (
	"strings"
	"testing"
)

// Observed on a real v1.37.1 control plane: RollingUpdate
// maxSurge 2 maxUnavailable 1, old/new 9/3 mid-rollout, scaled 10 -> 3;
// final state 2/3 with 9 pods deleted and 2 created.
//
// Availability reproducing it: the 9 old pods are available, the 3 new pods
// are not (which is why the rollout stood at 9/3), and nothing becomes
// available during the follow-up syncs.
func TestObservedScaleInMidRollout(t *testing.T) {
	d := newDeployment(10, num(2), num(1))
	old := annotate(rs("old", 9, oldTimestamp), d, 10)
	old.Available = 9
	nw := annotate(newRS("new", 3, newTimestamp), d, 10)
	nw.Available = 0
	d.Replicas = 3
	d.StatusReplicas = 12

	final, log := settle(t, d, []ReplicaSet{old, nw}, Latest)
	want := []string{
		// scale(): allowed 3+2=5, total 12, toAdd -7; old 9*5/12=3.75 -> 4, new 3*5/12=1.25 -> 1.
		"scale old 9->4; scale new 3->1; ",
		// reconcileNewReplicaSet: 5 pods = 3+2, no room. reconcileOldReplicaSets:
		// maxScaledDown 5-2-(1-0) = 2; no unhealthy old pods; available 4 > minAvailable 2.
		"rollout old 4->2; ",
		// reconcileNewReplicaSet: 3 pods, room for 2, capped at spec.replicas 3.
		"rollout new 1->3; ",
		// Then maxScaledDown = 5-2-(3-0) = 0: nothing until new pods become available.
	}
	if strings.Join(log, "|") != strings.Join(want, "|") {
		t.Errorf("syncs:\n got %q\nwant %q", log, want)
	}
	checkSizes(t, final, map[string]int32{"old": 2, "new": 3})
	deleted, created := podFlow(log)
	if deleted != 9 || created != 2 {
		t.Errorf("deleted %d created %d, want 9 and 2", deleted, created)
	}

	// Contrast: had the 3 new pods been available, the old RS would end at 1.
	nw.Available = 3
	final, _ = settle(t, d, []ReplicaSet{old, nw}, Latest)
	checkSizes(t, final, map[string]int32{"old": 1, "new": 3})
}

// Observed: 3 -> 1 with maxSurge 0 maxUnavailable 1, old/new 2/1: final
// 0/1, all 3 existing pods deleted and 1 created. Old pods available; the
// new pod's availability does not matter (the scale removes it).
func TestObservedScaleInSurgeZero(t *testing.T) {
	for _, newAvailable := range []int32{0, 1} {
		d := newDeployment(3, num(0), num(1))
		old := annotate(rs("old", 2, oldTimestamp), d, 3)
		old.Available = 2
		nw := annotate(newRS("new", 1, newTimestamp), d, 3)
		nw.Available = newAvailable
		d.Replicas = 1
		d.StatusReplicas = 3

		final, log := settle(t, d, []ReplicaSet{old, nw}, Latest)
		want := []string{
			// allowed 1+0, total 3, toAdd -2; old 2*1/3 -> 1, new 1*1/3 -> 0.
			"scale old 2->1; scale new 1->0; ",
			// no room for the new RS (1 pod = 1+0); maxScaledDown 1-0-0 = 1; available 1 > 0.
			"rollout old 1->0; ",
			"rollout new 0->1; ",
		}
		if strings.Join(log, "|") != strings.Join(want, "|") {
			t.Errorf("syncs:\n got %q\nwant %q", log, want)
		}
		checkSizes(t, final, map[string]int32{"old": 0, "new": 1})
		if deleted, created := podFlow(log); deleted != 3 || created != 1 {
			t.Errorf("deleted %d created %d, want 3 and 1", deleted, created)
		}
	}
}

func podFlow(log []string) (deleted, created int32) {
	for _, l := range log {
		for _, part := range strings.Split(strings.TrimSuffix(l, "; "), "; ") {
			var step, name string
			var from, to int32
			if _, err := sscanChange(part, &step, &name, &from, &to); err != nil {
				panic(err)
			}
			if to < from {
				deleted += from - to
			} else {
				created += to - from
			}
		}
	}
	return deleted, created
}
