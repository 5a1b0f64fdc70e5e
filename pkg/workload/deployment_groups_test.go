package workload

import (
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// twoTiesFixture is a Deployment 6 -> 4 (maxSurge 3, maxUnavailable 2) with
// five pending pods in the new ReplicaSet and four ready old pods in two
// exact ties: a4/o1 on node-b, k2/x0 on node-d, ready earlier.
func twoTiesFixture() *snapshot.Snapshot {
	d := mkDeploy(6, 9, "3", "2")
	d.Spec.Template = template("web:3", "")
	old := mkDepRS(d, "old", "web:1", 4, 30*24*time.Hour, 6, 9)
	mid := mkDepRS(d, "mid", "web:2", 0, 10*24*time.Hour, 6, 9)
	cur := mkDepRS(d, "new", "web:3", 5, time.Hour, 6, 9)
	return &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{old, mid, cur}, Pods: podsOf(
		rsPod("old-a4", old).on("node-b").readyFor(10*time.Minute),
		rsPod("old-o1", old).on("node-b").readyFor(10*time.Minute),
		rsPod("old-k2", old).on("node-d").readyFor(5*24*time.Hour),
		rsPod("old-x0", old).on("node-d").readyFor(5*24*time.Hour),
		rsPod("old-g5", old).on("node-c").readyFor(20*24*time.Hour).terminating(),
		rsPod("old-k6", old).on("node-c").readyFor(20*24*time.Hour).terminating(),
		rsPod("old-z3", old).on("node-c").readyFor(20*24*time.Hour).terminating(),
		rsPod("new-1", cur).phase(corev1.PodPending).createdAgo(time.Minute),
		rsPod("new-2", cur).phase(corev1.PodPending).createdAgo(time.Minute),
		rsPod("new-3", cur).phase(corev1.PodPending).createdAgo(time.Minute),
		rsPod("new-4", cur).phase(corev1.PodPending).createdAgo(time.Minute),
		rsPod("new-5", cur).phase(corev1.PodPending).createdAgo(time.Minute),
	)}
}

// Two exact ties of one ReplicaSet in two steps (a4/o1 by the split, then
// k2/x0 by the rollout, once node-b counts less), and an interleaving where
// one sort takes a4 and o1: the interleavings' open group joins both ties,
// and no pod of either is certain (k2 was called a certain keep and went in
// 25 of 50 runs of the real controllers).
func TestTiesJoinedByInterleavings(t *testing.T) {
	p := predictOK(t, twoTiesFixture(), snapshot.Deployment, "web", 4, rules37(t))
	for _, n := range []string{"old-a4", "old-o1", "old-k2", "old-x0"} {
		x := findPod(t, p, n)
		if x.Certain || x.DeleteProbability < 0.3 || x.DeleteProbability > 0.7 {
			t.Errorf("%s: certain %v p %v, want open, about even", n, x.Certain, x.DeleteProbability)
		}
	}
	groups := 0
	for _, g := range p.Contenders {
		if slices.Contains(g.Pods, "old-a4") || slices.Contains(g.Pods, "old-k2") {
			groups++
			if len(g.Pods) != 4 || g.Delete != 2 {
				t.Errorf("group %v deletes %d, want the four old pods, 2 deleted", g.Pods, g.Delete)
			}
		}
	}
	if groups != 1 {
		t.Errorf("%d groups hold the old pods, want 1", groups)
	}
}
