package workload

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// A new ReplicaSet shrinks in the split and again in the next sync, and
// the old one in the split and again in the sync after. The old one's
// controller first waits to see its own split deletions, as the new one
// does, and then still needs the later resize: the new one always ranks
// before the old one's second victim is gone (in-process, 50 of 50 runs
// in two scenarios of this shape), so no interleaving has it rank after.
func TestLateRankerNeverSeesAWaitingSiblingsVictims(t *testing.T) {
	d := mkDeploy(8, 11, "3", "2")
	old := mkDepRS(d, "h0", "web:1", 3, 20*24*time.Hour, 8, 11)
	cur := mkDepRS(d, "h1", "web:2", 8, 10*time.Minute, 8, 11)
	old.Status.AvailableReplicas, cur.Status.AvailableReplicas = 2, 3
	pods := podsOf(
		rsPod("web-h0-d2", old).on("node-c").readyFor(46*time.Minute),
		rsPod("web-h0-l0", old).on("node-c").readyFor(9*24*time.Hour),
		rsPod("web-h0-v3", old).on("node-c").notReady().createdAgo(16*time.Hour),
		rsPod("web-h1-e3", cur).on("node-b").readyFor(9*time.Minute),
		rsPod("web-h1-f2", cur).on("node-c").readyFor(46*time.Minute),
		rsPod("web-h1-i0", cur).on("node-b").readyFor(150*24*time.Hour),
		rsPod("web-h1-i1", cur).on("node-a").notReady().createdAgo(29*time.Minute),
		mkPod("zz-foreign").labels("app", "web").on("node-c").readyFor(9*24*time.Hour).ownedBy("ReplicaSet", "other", "uid-other"),
	)
	pods[1].Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": "1"}
	pods[5].Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": "-3"}
	for i := range 4 { // created by the rollout, not scheduled yet
		p := rsPod(fmt.Sprintf("web-h1-new%d", i), cur).createdAgo(9 * time.Minute).pod()
		p.Status.Phase = corev1.PodPending
		pods = append(pods, p)
	}
	s := &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{old, cur}, Pods: pods}
	ref := snapshot.Ref{Kind: snapshot.Deployment, Namespace: testNS, Name: "web"}
	o := Options{Rules: rules37(t), Now: testNow, Seed: 1}
	bs, err := DeploymentBranches(s, ref, 1, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if strings.Contains(b.Label, "ranked after the next sync's deletions") {
			t.Errorf("interleaving %q: the old ReplicaSet's second victim cannot be gone first", b.Label)
		}
	}
}
