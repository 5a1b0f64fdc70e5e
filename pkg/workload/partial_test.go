package workload

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// partlyVisibleFixture: the split shrinks old 3 -> 1 and mid 6 -> 2 in one
// sync. mid's victims are its two pending pods, q1 on node-c and o4 on
// node-a. With all of them gone, or none, old's node-a pods outnumber its
// node-c pod's neighbours and f2 and r0 go. With o4 gone but q1 not yet,
// both nodes count three: c3, the most recently ready, goes instead of r0
// (seen in 1 of 50 runs of the real controllers, twice).
func partlyVisibleFixture() *snapshot.Snapshot {
	d := mkDeploy(9, 10, "1", "0")
	d.Spec.Template = template("web:3", "")
	old := mkDepRS(d, "old", "web:1", 3, 40*24*time.Hour, 9, 10)
	mid := mkDepRS(d, "mid", "web:2", 6, 10*24*time.Hour, 9, 10)
	cur := mkDepRS(d, "new", "web:3", 1, time.Hour, 9, 10)
	return &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{old, mid, cur}, Pods: podsOf(
		rsPod("old-c3", old).on("node-c").readyFor(8*time.Hour),
		rsPod("old-f2", old).on("node-a").readyFor(20*time.Hour),
		rsPod("old-l1", old).on("node-a").readyFor(20*time.Hour).terminating(),
		rsPod("old-r0", old).on("node-a").readyFor(37*24*time.Hour),
		rsPod("mid-e3", mid).phase(corev1.PodPending).createdAgo(17*time.Hour),
		rsPod("mid-l5", mid).phase(corev1.PodPending).createdAgo(17*time.Hour),
		rsPod("mid-o2", mid).on("node-c").readyFor(8*time.Hour+20*time.Minute),
		rsPod("mid-o4", mid).on("node-a").readyFor(20*time.Hour),
		rsPod("mid-q1", mid).on("node-c").notReady().createdAgo(50*time.Minute),
		rsPod("mid-t0", mid).on("node-a").readyFor(6*24*time.Hour),
		rsPod("new-x0", cur).phase(corev1.PodPending).createdAgo(10*time.Minute),
	)}
}

// A ReplicaSet that ranks while only some of its sibling's deletions are
// visible can take another pod than with all or none visible: no such pod
// is certain, and the rare view gets a small chance.
func TestSiblingsDeletionsPartlyVisible(t *testing.T) {
	p := predictOK(t, partlyVisibleFixture(), snapshot.Deployment, "web", 3, rules37(t))
	if s := rsStep(t, p, "web-old"); s.AfterScale != 1 {
		t.Fatalf("old after the split: %d, want 1", s.AfterScale)
	}
	f2, r0, c3 := findPod(t, p, "old-f2"), findPod(t, p, "old-r0"), findPod(t, p, "old-c3")
	if !f2.Certain || f2.DeleteProbability != 1 {
		t.Errorf("old-f2: certain %v p %v, want a certain victim (it goes in every view)", f2.Certain, f2.DeleteProbability)
	}
	if r0.Certain || r0.DeleteProbability < 0.9 || r0.DeleteProbability >= 1 {
		t.Errorf("old-r0: certain %v p %v, want an open victim, most likely", r0.Certain, r0.DeleteProbability)
	}
	if c3.Certain || c3.DeleteProbability <= 0 || c3.DeleteProbability > 0.1 {
		t.Errorf("old-c3: certain %v p %v, want open, unlikely", c3.Certain, c3.DeleteProbability)
	}
}

// earlierVictimsFixture: the split shrinks new 6 -> 3 (its pending pod and
// the two most recently ready of its four node-b pods) and old 1 -> 0
// (b1, on node-a). The rollout's next sync shrinks new at once to 2: it
// needs no status. With b1's deletion seen, node-b counts more and u3 goes;
// with it not seen yet, both nodes count two and x1, the most recently
// ready, goes (1 of 50 runs of the real controllers on a concurrent API).
func earlierVictimsFixture() *snapshot.Snapshot {
	d := mkDeploy(6, 7, "1", "0")
	d.Spec.Template = template("web:3", "")
	old := mkDepRS(d, "old", "web:2", 1, 40*24*time.Hour, 6, 7)
	cur := mkDepRS(d, "new", "web:3", 6, 4*24*time.Hour, 6, 7)
	return &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{old, cur}, Pods: podsOf(
		rsPod("old-b1", old).on("node-a").readyFor(40*24*time.Hour),
		rsPod("old-i0", old).on("node-b").readyFor(3*24*time.Hour).terminating(),
		rsPod("new-d7", cur).phase(corev1.PodPending).createdAgo(5*time.Minute),
		rsPod("new-l0", cur).on("node-b").readyFor(time.Hour),
		rsPod("new-u2", cur).on("node-b").readyFor(time.Hour+time.Minute),
		rsPod("new-u3", cur).on("node-b").readyFor(3*24*time.Hour),
		rsPod("new-x1", cur).on("node-a").readyFor(2*time.Hour),
		rsPod("new-y4", cur).on("node-b").readyFor(5*24*time.Hour),
	)}
}

// The previous sync's deletions in a sibling are not necessarily seen
// when a ReplicaSet ranks again: the pods they can turn are not certain.
func TestEarlierSiblingDeletionsMayBeUnseen(t *testing.T) {
	p := predictOK(t, earlierVictimsFixture(), snapshot.Deployment, "web", 2, rules37(t))
	if s := rsStep(t, p, "web-new"); s.AfterScale != 3 {
		t.Fatalf("new after the split: %d, want 3", s.AfterScale)
	}
	u3, x1, y4 := findPod(t, p, "new-u3"), findPod(t, p, "new-x1"), findPod(t, p, "new-y4")
	if u3.Certain || u3.DeleteProbability < 0.9 || u3.DeleteProbability >= 1 {
		t.Errorf("new-u3: certain %v p %v, want an open victim, most likely", u3.Certain, u3.DeleteProbability)
	}
	if x1.Certain || x1.DeleteProbability <= 0 || x1.DeleteProbability > 0.1 {
		t.Errorf("new-x1: certain %v p %v, want open, unlikely", x1.Certain, x1.DeleteProbability)
	}
	if !y4.Certain || y4.DeleteProbability != 0 {
		t.Errorf("new-y4: certain %v p %v, want certainly kept", y4.Certain, y4.DeleteProbability)
	}
}

// tieAtPartialCountFixture: the split shrinks old 6 -> 3, its victims the
// three on node-a, and new 5 -> 3. With none of old's victims seen,
// node-a counts 6 and new deletes l0 (node-a, lower UID than n2); with all
// seen, node-a counts 3 against node-b's 4 and new deletes b1. With two of
// the three seen, both nodes count 4: the ready-time rule then decides
// among all four, b1 and u3 exactly tied, the others by UID within one
// age bucket, an order that does not hold across the four, so n2 can go
// (2% of runs of the real controllers on a concurrent API).
func tieAtPartialCountFixture() *snapshot.Snapshot {
	d := mkDeploy(10, 11, "1", "0")
	d.Spec.Template = template("web:3", "")
	old := mkDepRS(d, "old", "web:1", 6, 60*24*time.Hour, 10, 11)
	mid := mkDepRS(d, "mid", "web:2", 0, 50*24*time.Hour, 10, 11)
	cur := mkDepRS(d, "new", "web:3", 5, 45*24*time.Hour, 10, 11)
	at := func(d, h, m, s int) time.Duration {
		return time.Duration(d)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(s)*time.Second
	}
	return &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{old, mid, cur}, Pods: podsOf(
		rsPod("old-c6", old).on("node-a").readyFor(at(3, 0, 30, 0)).terminating(),
		rsPod("old-k0", old).on("node-b").readyFor(at(39, 23, 56, 46)),
		rsPod("old-l4", old).on("node-a").readyFor(at(2, 23, 56, 38)),
		rsPod("old-o1", old).on("node-b").readyFor(at(3, 0, 5, 35)),
		rsPod("old-p5", old).on("node-a").readyFor(at(2, 23, 56, 38)),
		rsPod("old-x3", old).on("node-a").readyFor(at(40, 0, 6, 6)),
		rsPod("old-z2", old).on("node-a").readyFor(at(40, 0, 7, 34)),
		rsPod("new-b1", cur).on("node-b").readyFor(at(39, 23, 56, 46)),
		rsPod("new-c8", cur).phase(corev1.PodPending).createdAgo(20*time.Second),
		rsPod("new-l0", cur).on("node-a").readyFor(at(40, 0, 3, 48)),
		rsPod("new-n2", cur).on("node-a").readyFor(at(39, 23, 51, 52)),
		rsPod("new-u3", cur).on("node-b").readyFor(at(39, 23, 56, 46)),
	)}
}

// A partial view whose node count ties another node's hands the decision
// to the later rules, which may pick a pod neither extreme picks.
func TestPartialViewAtATiedCount(t *testing.T) {
	p := predictOK(t, tieAtPartialCountFixture(), snapshot.Deployment, "web", 5, rules37(t))
	if s := rsStep(t, p, "web-new"); s.AfterScale != 3 {
		t.Fatalf("new after the split: %d, want 3", s.AfterScale)
	}
	if n2 := findPod(t, p, "new-n2"); n2.Certain || n2.DeleteProbability <= 0 || n2.DeleteProbability > 0.1 {
		t.Errorf("new-n2: certain %v p %v, want open, unlikely", n2.Certain, n2.DeleteProbability)
	}
}
