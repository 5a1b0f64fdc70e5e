package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// claimPods and IsPodActive: only active pods are candidates. Succeeded and Failed pods
// are neither counted nor listed; a terminating pod is listed as
// "terminating", not counted and never a victim; Pending pods are active.
func TestReplicaSetCandidatesAreActivePodsOnly(t *testing.T) {
	rs := mkRS("web", 4, "", "app", "web")
	s := &snapshot.Snapshot{ReplicaSets: []*appsv1.ReplicaSet{rs}, Pods: podsOf(
		rsPod("a", rs).on("n1").readyFor(3*time.Hour),
		rsPod("b", rs).on("n2").readyFor(time.Hour),
		rsPod("c-succeeded", rs).on("n3").phase(corev1.PodSucceeded),
		rsPod("d-failed", rs).on("n4").phase(corev1.PodFailed),
		// Would be deleted first (R6, ready 10m) were it counted.
		rsPod("e-terminating", rs).on("n5").readyFor(10*time.Minute).terminating(),
		rsPod("f", rs).on("n6").readyFor(12*time.Hour),
		// Pending and unassigned: active, and R1 puts it first.
		rsPod("g-pending", rs).phase(corev1.PodPending).createdAgo(5*time.Minute),
	)}
	p := predictOK(t, s, snapshot.ReplicaSet, "web", 2, rules37(t))

	if p.CurrentReplicas != 4 {
		t.Errorf("currentReplicas = %d, want 4 (a, b, f, g: terminal and terminating pods are not counted)", p.CurrentReplicas)
	}
	wantVictims(t, p, "g-pending", "b")
	wantDecided(t, p, "g-pending", "R1", "a")
	wantDecided(t, p, "b", "R6", "a")
	wantDecided(t, p, "a", "R6", "b")
	wantFate(t, p, "e-terminating", prediction.FateTerminating, "already terminating")
	for _, n := range []string{"c-succeeded", "d-failed"} {
		if hasPod(p, n) {
			t.Errorf("terminal pod %s is listed: %+v", n, findPod(t, p, n))
		}
	}
	if len(p.Pods) != 5 {
		t.Errorf("%d pods listed, want 5: %v", len(p.Pods), podNames(p))
	}
	if !p.Certain {
		t.Error("prediction not certain")
	}
	if !strings.HasPrefix(p.Message, "2 pod(s) would be deleted: g-pending, b") {
		t.Errorf("message %q", p.Message)
	}
}

// claimPods: a pod matching the selector but controlled by another object
// is ignored: never counted, never deleted.
func TestReplicaSetIgnoresPodsOfAnotherController(t *testing.T) {
	rs := mkRS("web", 2, "", "app", "web")
	s := &snapshot.Snapshot{ReplicaSets: []*appsv1.ReplicaSet{rs}, Pods: podsOf(
		rsPod("a", rs).on("n1").readyFor(3*time.Hour),
		rsPod("b", rs).on("n2").readyFor(time.Hour),
		// Not ready and unassigned: the worst pod, were it this RS's.
		mkPod("x-foreign").labels("app", "web").ownedBy("ReplicaSet", "other", "uid-other").notReady(),
		// Foreign and terminal: not even listed.
		mkPod("y-foreign-done").labels("app", "web").ownedBy("ReplicaSet", "other", "uid-other").phase(corev1.PodSucceeded),
		// Foreign and not matching: not this controller's business.
		mkPod("z-unrelated").labels("app", "db").ownedBy("ReplicaSet", "db", "uid-db"),
	)}
	p := predictOK(t, s, snapshot.ReplicaSet, "web", 1, rules37(t))
	if p.CurrentReplicas != 2 {
		t.Errorf("currentReplicas = %d, want 2", p.CurrentReplicas)
	}
	wantVictims(t, p, "b")
	wantDecided(t, p, "b", "R6", "a")
	wantFate(t, p, "x-foreign", prediction.FateIgnored, "controlled by ReplicaSet/other")
	for _, n := range []string{"y-foreign-done", "z-unrelated"} {
		if hasPod(p, n) {
			t.Errorf("%s is listed", n)
		}
	}
}

// claimPods: an active orphan matching the selector is adopted in the same
// sync, so it is counted and can be a victim. Orphans that do not match,
// and terminating orphans, are not adopted.
func TestReplicaSetAdoptsMatchingOrphan(t *testing.T) {
	rs := mkRS("web", 2, "", "app", "web")
	s := &snapshot.Snapshot{ReplicaSets: []*appsv1.ReplicaSet{rs}, Pods: podsOf(
		rsPod("a", rs).on("n1").readyFor(3*time.Hour),
		rsPod("b", rs).on("n2").readyFor(2*time.Hour),
		mkPod("orphan").labels("app", "web").on("n3").readyFor(time.Hour),
		mkPod("orphan-other-labels").labels("app", "db").on("n3").notReady(),
		mkPod("orphan-terminating").labels("app", "web").on("n3").notReady().terminating(),
	)}
	p := predictOK(t, s, snapshot.ReplicaSet, "web", 2, rules37(t))
	if p.CurrentReplicas != 3 {
		t.Errorf("currentReplicas = %d, want 3 (the orphan is adopted and counted)", p.CurrentReplicas)
	}
	wantVictims(t, p, "orphan")
	wantDecided(t, p, "orphan", "R6", "b")
	if r := findPod(t, p, "orphan").Reason; !strings.Contains(r, "adopted") {
		t.Errorf("orphan reason %q, want it to say it is adopted", r)
	}
	for _, n := range []string{"orphan-other-labels", "orphan-terminating"} {
		if hasPod(p, n) {
			t.Errorf("%s is listed: %+v", n, findPod(t, p, n))
		}
	}
}

// claimPods: a pod controlled by the RS whose labels no longer match is
// released: ignored and not counted.
func TestReplicaSetReleasesPodWhoseLabelsChanged(t *testing.T) {
	rs := mkRS("web", 2, "", "app", "web")
	s := &snapshot.Snapshot{ReplicaSets: []*appsv1.ReplicaSet{rs}, Pods: podsOf(
		rsPod("a", rs).on("n1").readyFor(3*time.Hour),
		rsPod("b", rs).on("n2").readyFor(2*time.Hour),
		rsPod("debug", rs).labels("app", "web-debug").on("n3").notReady(),
	)}
	p := predictOK(t, s, snapshot.ReplicaSet, "web", 1, rules37(t))
	if p.CurrentReplicas != 2 {
		t.Errorf("currentReplicas = %d, want 2", p.CurrentReplicas)
	}
	wantVictims(t, p, "b")
	wantFate(t, p, "debug", prediction.FateIgnored, "no longer match")
}

// rankFixture: ReplicaSet v1 of a Deployment (owner uid dep-1) with three
// pods; its sibling v2 (same owner) has active pods on n1, a terminating
// pod on n2 and a succeeded one on n3; a pod controlled by an unrelated
// object but matching v2's selector sits on n3; a ReplicaSet of another
// Deployment has pods on n2.
//
//	v1-a n1 ready 24h   rank = a + v2-s1 + v2-s2          = 3
//	v1-b n2 ready 1h    rank = b (v2-s3 terminating, other-Deployment pods) = 1
//	v1-c n3 ready 12h   rank = c + stray (v2-s4 succeeded) = 2
func rankFixture(owner string) *snapshot.Snapshot {
	v1 := mkRS("v1", 3, owner, "app", "web", "hash", "v1")
	v2 := mkRS("v2", 2, "dep-1", "app", "web", "hash", "v2")
	other := mkRS("z", 2, "dep-2", "app", "web", "hash", "z")
	return &snapshot.Snapshot{ReplicaSets: []*appsv1.ReplicaSet{v1, v2, other}, Pods: podsOf(
		rsPod("v1-a", v1).on("n1").readyFor(24*time.Hour),
		rsPod("v1-b", v1).on("n2").readyFor(time.Hour),
		rsPod("v1-c", v1).on("n3").readyFor(12*time.Hour),
		rsPod("v2-s1", v2).on("n1").readyFor(time.Hour),
		rsPod("v2-s2", v2).on("n1").readyFor(time.Hour),
		rsPod("v2-s3", v2).on("n2").readyFor(time.Hour).terminating(),
		rsPod("v2-s4", v2).on("n3").phase(corev1.PodSucceeded),
		mkPod("stray").labels("app", "web", "hash", "v2").ownedBy("StatefulSet", "intruder", "uid-intruder").on("n3").readyFor(time.Hour),
		rsPod("z-1", other).on("n2").readyFor(time.Hour),
		rsPod("z-2", other).on("n2").readyFor(time.Hour),
	)}
}

// getIndirectlyRelatedPods: a Deployment-owned RS ranks by the active pods of every RS
// with the same controller owner on the same node, whoever owns the pods;
// the higher rank (R5) goes before the more recently ready pod (R6).
func TestReplicaSetRanksCountSiblingPodsOnTheNode(t *testing.T) {
	p := predictOK(t, rankFixture("dep-1"), snapshot.ReplicaSet, "v1", 1, rules37(t))
	wantRanks(t, p, map[string]int{"v1-a": 3, "v1-b": 1, "v1-c": 2})
	wantVictims(t, p, "v1-a", "v1-c")
	wantDecided(t, p, "v1-a", "R5", "v1-b")
	wantDecided(t, p, "v1-c", "R5", "v1-b")
	if !hasWarning(p, "scaling it by hand is reverted by its owner") {
		t.Errorf("no warning that the RS is controlled: %q", p.Warnings)
	}
}

// getIndirectlyRelatedPods: a standalone RS has no related pods: every rank is 0, so R5
// never fires and R6 picks the most recently ready pods.
func TestStandaloneReplicaSetRanksAreZero(t *testing.T) {
	p := predictOK(t, rankFixture(""), snapshot.ReplicaSet, "v1", 1, rules37(t))
	wantRanks(t, p, map[string]int{"v1-a": 0, "v1-b": 0, "v1-c": 0})
	wantVictims(t, p, "v1-b", "v1-c")
	wantDecided(t, p, "v1-c", "R6", "v1-a")
}

// getIndirectlyRelatedPods RC special case: from 1.24 the controllerUID indexer knows
// only ReplicaSets, so an RC ranks 0 even with a controller owner; before
// (1.21-1.23) its sibling RCs' pods raise the ranks.
func TestReplicationControllerRanksByVersion(t *testing.T) {
	rc1 := mkRC("rc1", 2, "uid-dc", map[string]string{"app": "web", "deployment": "rc1"})
	rc2 := mkRC("rc2", 2, "uid-dc", map[string]string{"app": "web", "deployment": "rc2"})
	pod := func(name string, rc *corev1.ReplicationController) podFix {
		return mkPod(name).labels("app", "web", "deployment", rc.Spec.Selector["deployment"]).ownedBy("ReplicationController", rc.Name, string(rc.UID))
	}
	s := &snapshot.Snapshot{ReplicationControllers: []*corev1.ReplicationController{rc1, rc2}, Pods: podsOf(
		pod("rc1-a", rc1).on("n1").readyFor(24*time.Hour),
		pod("rc1-b", rc1).on("n2").readyFor(time.Hour),
		pod("rc2-a", rc2).on("n1").readyFor(time.Hour),
		pod("rc2-b", rc2).on("n1").readyFor(time.Hour),
	)}

	p := predictOK(t, s, snapshot.ReplicationController, "rc1", 1, rules37(t))
	wantRanks(t, p, map[string]int{"rc1-a": 0, "rc1-b": 0})
	wantVictims(t, p, "rc1-b")
	wantDecided(t, p, "rc1-b", "R6", "rc1-a")

	p = predictOK(t, s, snapshot.ReplicationController, "rc1", 1, ruleSetFor(t, 23))
	wantRanks(t, p, map[string]int{"rc1-a": 3, "rc1-b": 1})
	wantVictims(t, p, "rc1-a")
	wantDecided(t, p, "rc1-a", "R5", "rc1-b")
	if p.Rules.KubernetesVersion != "1.23" {
		t.Errorf("rules version %q", p.Rules.KubernetesVersion)
	}

	// A standalone RC ranks 0 in 1.23 too.
	rc1.OwnerReferences = nil
	p = predictOK(t, s, snapshot.ReplicationController, "rc1", 1, ruleSetFor(t, 23))
	wantRanks(t, p, map[string]int{"rc1-a": 0, "rc1-b": 0})
	wantVictims(t, p, "rc1-b")
}

func wantRanks(t *testing.T, p *prediction.Prediction, want map[string]int) {
	t.Helper()
	for n, r := range want {
		if got := findPod(t, p, n).Rank; got != r {
			t.Errorf("%s: rank %d, want %d", n, got, r)
		}
	}
}

// manageReplicas: diff <= 0 deletes nothing.
func TestReplicaSetScaleUpAndNoChange(t *testing.T) {
	rs := mkRS("web", 3, "", "app", "web")
	s := &snapshot.Snapshot{ReplicaSets: []*appsv1.ReplicaSet{rs}, Pods: podsOf(
		rsPod("a", rs).on("n1").readyFor(3*time.Hour),
		rsPod("b", rs).on("n2").notReady(),
		rsPod("c", rs).readyFor(time.Hour),
	)}
	for _, tc := range []struct {
		replicas int32
		msg      string
	}{
		{5, "scale-up (3 -> 5): no pod would be deleted"},
		{3, "no change (3 replicas): no pod would be deleted"},
	} {
		p := predictOK(t, s, snapshot.ReplicaSet, "web", tc.replicas, rules37(t))
		wantVictims(t, p)
		if p.Message != tc.msg {
			t.Errorf("replicas %d: message %q, want %q", tc.replicas, p.Message, tc.msg)
		}
		if len(p.Pods) != 3 {
			t.Errorf("replicas %d: %d pods listed, want 3", tc.replicas, len(p.Pods))
		}
		for _, x := range p.Pods {
			if x.Fate != prediction.FateKeep || !x.Certain || x.DeleteProbability != 0 {
				t.Errorf("replicas %d: %s fate %s certain %v p %v", tc.replicas, x.Name, x.Fate, x.Certain, x.DeleteProbability)
			}
		}
		if p.StableUntil != nil {
			t.Errorf("replicas %d: stableUntil %v, want nil", tc.replicas, p.StableUntil)
		}
		if !p.Certain {
			t.Errorf("replicas %d: not certain", tc.replicas)
		}
	}
}

// syncReplicaSet: a ReplicaSet being deleted never runs manageReplicas.
func TestReplicaSetBeingDeletedDeletesNothing(t *testing.T) {
	rs := mkRS("web", 3, "", "app", "web")
	ts := metav1.NewTime(testNow.Add(-time.Second))
	rs.DeletionTimestamp = &ts
	s := &snapshot.Snapshot{ReplicaSets: []*appsv1.ReplicaSet{rs}, Pods: podsOf(
		rsPod("a", rs).on("n1").readyFor(3*time.Hour),
		rsPod("b", rs).on("n2").notReady(),
		rsPod("c", rs).readyFor(time.Hour),
	)}
	p := predictOK(t, s, snapshot.ReplicaSet, "web", 1, rules37(t))
	wantVictims(t, p)
	if !strings.Contains(p.Message, "being deleted") || !strings.Contains(p.Message, "no pod would be deleted") {
		t.Errorf("message %q", p.Message)
	}
	if !hasWarning(p, "being deleted") {
		t.Errorf("warnings %q", p.Warnings)
	}
}

// manageReplicas: at most 500 deletions per sync; the next round re-sorts what
// is left. 500 not-ready pods go in round 1 (sorted: R3 puts them first),
// the 10 ready ones in round 2 (delete-all, unsorted).
func TestReplicaSetMoreThan500DeletionsRunInRounds(t *testing.T) {
	rs := mkRS("big", 0, "", "app", "big")
	var pods []*corev1.Pod
	for i := 0; i < 10; i++ {
		pods = append(pods, rsPod(fmt.Sprintf("ready-%02d", i), rs).on(fmt.Sprintf("n%d", i%3)).readyFor(time.Duration(i+1)*24*time.Hour).pod())
	}
	for i := 0; i < 500; i++ {
		pods = append(pods, rsPod(fmt.Sprintf("unready-%03d", i), rs).on(fmt.Sprintf("n%d", i%3)).notReady().pod())
	}
	s := &snapshot.Snapshot{ReplicaSets: []*appsv1.ReplicaSet{rs}, Pods: pods}
	p := predictOK(t, s, snapshot.ReplicaSet, "big", 0, rules37(t))
	if p.CurrentReplicas != 510 || len(p.Victims) != 510 {
		t.Fatalf("current %d victims %d, want 510/510", p.CurrentReplicas, len(p.Victims))
	}
	for i, v := range p.Victims {
		x := findPod(t, p, v)
		wantRound := 1
		if strings.HasPrefix(v, "ready-") {
			wantRound = 2
		}
		if x.Round != wantRound {
			t.Errorf("%s: round %d, want %d", v, x.Round, wantRound)
		}
		if (i < 500) != (wantRound == 1) {
			t.Errorf("victim %d is %s: round-1 victims must come first", i, v)
		}
	}
	if !hasWarning(p, "2 rounds") {
		t.Errorf("no rounds warning: %q", p.Warnings)
	}
	if !p.Certain {
		t.Error("not certain")
	}

	// 400 pods: one round, no warning.
	s.Pods = pods[:400]
	p = predictOK(t, s, snapshot.ReplicaSet, "big", 0, rules37(t))
	if len(p.Victims) != 400 || hasWarning(p, "rounds") {
		t.Errorf("400 pods: %d victims, warnings %q", len(p.Victims), p.Warnings)
	}
}

func TestReplicaSetNotFound(t *testing.T) {
	s := &snapshot.Snapshot{ReplicaSets: []*appsv1.ReplicaSet{mkRS("web", 1, "", "app", "web")}}
	_, err := Predict(s, snapshot.Ref{Kind: snapshot.ReplicaSet, Namespace: testNS, Name: "nope"}, 0, Options{Rules: rules37(t), Now: testNow})
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("err %v, want *NotFoundError", err)
	}
	// Same name, other namespace: not found either.
	_, err = Predict(s, snapshot.Ref{Kind: snapshot.ReplicaSet, Namespace: "other", Name: "web"}, 0, Options{Rules: rules37(t), Now: testNow})
	if !errors.As(err, &nf) {
		t.Fatalf("other namespace: err %v, want *NotFoundError", err)
	}
	_, err = Predict(s, snapshot.Ref{Kind: "DaemonSet", Namespace: testNS, Name: "web"}, 0, Options{Rules: rules37(t), Now: testNow})
	if !errors.Is(err, ErrUnsupported) {
		t.Fatalf("DaemonSet: err %v, want ErrUnsupported", err)
	}
}

// The JSON contract: "victims" is a list, [] when nothing is deleted
// (newPrediction initialises it so), never null. The Deployment path keeps
// [], but the ReplicaSet/RC path overwrites it with runReplicaSet's nil.
func TestNoVictimsIsAnEmptyListNotNull(t *testing.T) {
	rs := mkRS("web", 3, "", "app", "web")
	ts := metav1.NewTime(testNow.Add(-time.Second))
	deleting := mkRS("gone", 3, "", "app", "gone")
	deleting.DeletionTimestamp = &ts
	s := &snapshot.Snapshot{ReplicaSets: []*appsv1.ReplicaSet{rs, deleting}, Pods: podsOf(
		rsPod("a", rs).on("n1").readyFor(3*time.Hour),
		rsPod("g", deleting).on("n1").readyFor(3*time.Hour),
		rsPod("h", deleting).on("n1").readyFor(3*time.Hour),
	)}
	for _, tc := range []struct {
		name     string
		replicas int32
	}{{"web", 3}, {"web", 5}, {"gone", 1}} {
		p := predictOK(t, s, snapshot.ReplicaSet, tc.name, tc.replicas, rules37(t))
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `"victims":[]`) {
			t.Errorf("%s -> %d: JSON victims is not []: %s", tc.name, tc.replicas, b)
		}
	}
}

// stableUntil is "null when no age-based rule can change" the outcome. Here
// a (ready 3h) goes before b (ready 30h) by R6 bucket; as both age, they
// end up in one bucket and the UID (a < b) keeps a first: it never flips.
func TestStableUntilNilWhenTheOutcomeNeverChanges(t *testing.T) {
	rs := mkRS("web", 2, "", "app", "web")
	s := &snapshot.Snapshot{ReplicaSets: []*appsv1.ReplicaSet{rs}, Pods: podsOf(
		rsPod("a", rs).uid("uid-a").on("n1").readyFor(3*time.Hour),
		rsPod("b", rs).uid("uid-b").on("n1").readyFor(30*time.Hour),
	)}
	p := predictOK(t, s, snapshot.ReplicaSet, "web", 1, rules37(t))
	wantVictims(t, p, "a")
	if p.StableUntil != nil && p.StableUntil.Sub(testNow) > 100*365*24*time.Hour {
		t.Fatalf("BUG: stableUntil is %v (%v from now) for an outcome no age can change. pkg/engine/stable.go StableUntil returns (&last, lowerBound=true) when its crossing heap runs empty (every bucket has reached 62, ~146 years), though lowerBound is documented for stopping at maxStableChecks; an empty heap means nothing can change, i.e. (nil, false). And pkg/workload/replicaset.go runReplicaSet drops lowerBound (`out.stableUntil, _ = engine.StableUntil(in)`), so the table says \"holds until 2171-02-..., 146y.. from now\"; want null", p.StableUntil, p.StableUntil.Sub(testNow))
	}
	if p.StableUntil != nil {
		t.Errorf("stableUntil %v, want nil", p.StableUntil)
	}
}

// getIndirectlyRelatedPods: the siblings include ReplicaSets that are being deleted (and
// ones scaled to 0): their active pods still raise ranks.
func TestReplicaSetRanksCountSiblingsBeingDeleted(t *testing.T) {
	v1 := mkRS("v1", 2, "dep-1", "app", "web", "hash", "v1")
	v0 := mkRS("v0", 0, "dep-1", "app", "web", "hash", "v0")
	ts := metav1.NewTime(testNow.Add(-time.Minute))
	v0.DeletionTimestamp = &ts
	s := &snapshot.Snapshot{ReplicaSets: []*appsv1.ReplicaSet{v1, v0}, Pods: podsOf(
		rsPod("v1-a", v1).on("n1").readyFor(24*time.Hour),
		rsPod("v1-b", v1).on("n2").readyFor(time.Hour),
		rsPod("v0-x", v0).on("n1").readyFor(48*time.Hour),
	)}
	p := predictOK(t, s, snapshot.ReplicaSet, "v1", 1, rules37(t))
	wantRanks(t, p, map[string]int{"v1-a": 2, "v1-b": 1})
	wantVictims(t, p, "v1-a")
	wantDecided(t, p, "v1-a", "R5", "v1-b")
	if hasPod(p, "v0-x") {
		t.Errorf("a sibling's pod is listed as this ReplicaSet's: %+v", findPod(t, p, "v0-x"))
	}
}
