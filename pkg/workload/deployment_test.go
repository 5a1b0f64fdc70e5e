package workload

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// scale() in pkg/controller/deployment/sync.go branch 1 (one active RS): the Deployment sets it to D and its
// RS controller picks the victims; ranks count the pods of every RS of the
// Deployment, so two pods sharing n1 go first (R5), then R6 between them.
func TestDeploymentOneActiveReplicaSet(t *testing.T) {
	d := mkDeploy(4, 4, "25%", "25%")
	old := mkDepRS(d, "v0", "web:1", 0, 30*24*time.Hour, 4, 5)
	cur := mkDepRS(d, "v1", "web:2", 4, 7*24*time.Hour, 4, 5)
	s := &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{old, cur}, Pods: podsOf(
		rsPod("v1-a", cur).on("n1").readyFor(5*time.Hour),
		rsPod("v1-b", cur).on("n1").readyFor(24*time.Hour),
		rsPod("v1-c", cur).on("n2").readyFor(time.Hour),
		rsPod("v1-d", cur).on("n3").readyFor(2*time.Hour),
		// A lingering old pod on n2: terminating, so it raises no rank.
		rsPod("v0-x", old).on("n2").readyFor(48*time.Hour).terminating(),
	)}
	p := predictOK(t, s, snapshot.Deployment, "web", 2, rules37(t))
	if p.CurrentReplicas != 4 || p.DesiredReplicas != 2 {
		t.Errorf("current/desired %d/%d", p.CurrentReplicas, p.DesiredReplicas)
	}
	wantVictims(t, p, "v1-a", "v1-b")
	wantRanks(t, p, map[string]int{"v1-a": 2, "v1-b": 2, "v1-c": 1, "v1-d": 1})
	wantDecided(t, p, "v1-b", "R5", "v1-c")
	if dec := findPod(t, p, "v1-a").DecidedBy; dec == nil || dec.Rule != "R6" || dec.Against != "v1-b" {
		t.Errorf("v1-a decidedBy %+v, want R6 against v1-b", dec)
	}
	if got := victimSteps(p); fmt.Sprint(got) != "[scale:web-v1:v1-a scale:web-v1:v1-b]" {
		t.Errorf("victim steps %v", got)
	}
	wantStep(t, p, "web-v0", prediction.ReplicaSetStep{Before: 0, AfterScale: 0, Final: 0})
	wantStep(t, p, "web-v1", prediction.ReplicaSetStep{New: true, Before: 4, AfterScale: 2, Final: 2, Deleted: 2})
	wantFate(t, p, "v0-x", prediction.FateTerminating, "already terminating")
	if p.Creates != 0 || !p.Certain {
		t.Errorf("creates %d certain %v", p.Creates, p.Certain)
	}
	if hasWarning(p, "rollout is in progress") {
		t.Errorf("unexpected rollout warning: %q", p.Warnings)
	}
	// Survivors are listed after the victims, in their predicted order.
	if x, y := findPod(t, p, "v1-c"), findPod(t, p, "v1-d"); x.Position == 0 || y.Position != x.Position+1 {
		t.Errorf("survivor positions %d, %d: want consecutive", x.Position, y.Position)
	}
}

// Positions number the counted pods 1..N in predicted deletion order; an
// uncounted (terminating or ignored) pod has none and must not use one up.
func TestDeploymentPositionsSkipUncountedPods(t *testing.T) {
	d := mkDeploy(4, 4, "25%", "25%")
	old := mkDepRS(d, "v0", "web:1", 0, 30*24*time.Hour, 4, 5)
	cur := mkDepRS(d, "v1", "web:2", 4, 7*24*time.Hour, 4, 5)
	s := &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{old, cur}, Pods: podsOf(
		rsPod("v1-a", cur).on("n1").readyFor(5*time.Hour),
		rsPod("v1-b", cur).on("n1").readyFor(24*time.Hour),
		rsPod("v1-c", cur).on("n2").readyFor(time.Hour),
		rsPod("v1-d", cur).on("n3").readyFor(2*time.Hour),
		rsPod("v0-x", old).on("n2").readyFor(48*time.Hour).terminating(),
	)}
	p := predictOK(t, s, snapshot.Deployment, "web", 2, rules37(t))
	var order []string
	for _, x := range p.Pods {
		order = append(order, fmt.Sprintf("%d:%s", x.Position, x.Name))
	}
	got := strings.Join(order, " ")
	if got != "1:v1-a 2:v1-b 3:v1-c 4:v1-d 0:v0-x" {
		t.Fatalf("BUG: pkg/workload/deployment.go listSurvivors numbers survivors with Position = len(pred.Pods)+1, so a terminating/ignored pod of an earlier-named ReplicaSet (listed first, position 0) uses up a number: got %q (the table's # column reads 1 2 - 4 5); want kept pods numbered 3, 4 and, ideally, uncounted pods after all counted ones", got)
	}
}

// exampleA is scale() example A: HPA scales 10 -> 5 mid-rollout,
// maxSurge = maxUnavailable = 25%, v1 (old) 8 and v2 (new) 5, both
// annotated desired 10 / max 13. Every pod is ready, on its own node (all
// ranks 1), ready ages in distinct log2 buckets.
func exampleA(paused bool) *snapshot.Snapshot {
	d := mkDeploy(10, 13, "25%", "25%")
	d.Spec.Paused = paused
	v1 := mkDepRS(d, "v1", "web:1", 8, 10*24*time.Hour, 10, 13)
	v2 := mkDepRS(d, "v2", "web:2", 5, 24*time.Hour, 10, 13)
	return &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{v1, v2},
		Pods: append(readyPods(v1, 8, "a"), readyPods(v2, 5, "b")...)}
}

// The split gives v1 4 and v2 3 (scale step: v1 loses its 4 most recently
// ready pods, v2 its 2). The rollout then continues at D=5: minAvailable 4.
// With fresh statuses maxScaledDown is 7-4-0 = 3 and v1 drops to 1. But v1
// was written first, its status usually turns fresh first, and the sync
// that reads v1 fresh and v2 still stale (5 available of 3) already scales
// v1 down to 0: p8 dies in most interleavings, not all (measured
// in-process, docs/deployments.md). v2 grows back to 5 (created, never
// victims).
func TestDeploymentMidRolloutProportionalSplit(t *testing.T) {
	p := predictOK(t, exampleA(false), snapshot.Deployment, "web", 5, rules37(t))
	wantStep(t, p, "web-v1", prediction.ReplicaSetStep{Before: 8, AfterScale: 4, Final: 0, Deleted: 8})
	wantStep(t, p, "web-v2", prediction.ReplicaSetStep{New: true, Before: 5, AfterScale: 3, Final: 5, Deleted: 2, Created: 2})
	want := []string{
		"scale:web-v1:web-v1-p1", "scale:web-v1:web-v1-p2", "scale:web-v1:web-v1-p3", "scale:web-v1:web-v1-p4",
		"scale:web-v2:web-v2-p1", "scale:web-v2:web-v2-p2",
		"rollout:web-v1:web-v1-p5", "rollout:web-v1:web-v1-p6", "rollout:web-v1:web-v1-p7", "rollout:web-v1:web-v1-p8",
	}
	if got := victimSteps(p); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("victims:\n got %v\nwant %v", got, want)
	}
	for i, v := range p.Victims {
		if x := findPod(t, p, v); x.Position != i+1 {
			t.Errorf("%s: position %d, want %d", v, x.Position, i+1)
		}
	}
	// The scale-step boundaries: R6 buckets within each RS.
	wantDecided(t, p, "web-v1-p4", "R6", "web-v1-p5")
	wantDecided(t, p, "web-v2-p2", "R6", "web-v2-p3")
	if p.Creates != 2 {
		t.Errorf("creates %d, want 2", p.Creates)
	}
	wantKept(t, p, "web-v2-p3", "web-v2-p4", "web-v2-p5")
	noCreatedPods(t, p)
	for _, x := range p.Pods {
		if open := x.Name == "web-v1-p8" || x.Name == "web-v2-p1" || x.Name == "web-v2-p2"; x.Certain == open {
			t.Errorf("%s: certain %v p %v", x.Name, x.Certain, x.DeleteProbability)
		}
	}
	// v2 is shrunk, then grown back: its controller may see only the
	// final size.
	overtakenOnly(t, p, "web-v2-p1", "web-v2-p2")
	if p8 := findPod(t, p, "web-v1-p8"); p8.DeleteProbability < 0.5 || p8.DeleteProbability >= 1 {
		t.Errorf("web-v1-p8: p %v, want most likely but open", p8.DeleteProbability)
	}
	if !hasWarning(p, "rollout is in progress") {
		t.Errorf("no rollout warning: %q", p.Warnings)
	}
}

// syncDeployment step 4: a paused Deployment still scales (the proportional
// split happens) but the rollout does not continue.
func TestDeploymentPausedStillSplits(t *testing.T) {
	p := predictOK(t, exampleA(true), snapshot.Deployment, "web", 5, rules37(t))
	wantStep(t, p, "web-v1", prediction.ReplicaSetStep{Before: 8, AfterScale: 4, Final: 4, Deleted: 4})
	wantStep(t, p, "web-v2", prediction.ReplicaSetStep{New: true, Before: 5, AfterScale: 3, Final: 3, Deleted: 2})
	want := []string{
		"scale:web-v1:web-v1-p1", "scale:web-v1:web-v1-p2", "scale:web-v1:web-v1-p3", "scale:web-v1:web-v1-p4",
		"scale:web-v2:web-v2-p1", "scale:web-v2:web-v2-p2",
	}
	if got := victimSteps(p); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("victims:\n got %v\nwant %v", got, want)
	}
	if p.Creates != 0 {
		t.Errorf("creates %d, want 0", p.Creates)
	}
	if !hasWarning(p, "paused") {
		t.Errorf("no paused warning: %q", p.Warnings)
	}
}

// rolling.go, after the scale, observed on a real v1.37.1 control plane: 10 -> 3 with
// maxSurge 2 maxUnavailable 1, old/new 9/3, old pods ready (available),
// new pods not ready. scale() splits 9/3 into 4/1; the rollout then takes
// old to 2 and grows new back to 3: 9 pods deleted, 2 created.
func TestDeploymentObservedScaleInMidRollout(t *testing.T) {
	d := mkDeploy(10, 12, "2", "1")
	old := mkDepRS(d, "old", "web:1", 9, 10*24*time.Hour, 10, 12)
	nw := mkDepRS(d, "new", "web:2", 3, 10*time.Minute, 10, 12)
	pods := readyPods(old, 9, "a")
	// Not ready: R3 ties, R6 does not apply, so R7 (restarts) orders them.
	for i, r := range []int32{5, 3, 0} {
		pods = append(pods, rsPod(fmt.Sprintf("web-new-p%d", i+1), nw).on(fmt.Sprintf("b%d", i+1)).notReady().restarts(r).createdAgo(5*time.Minute).pod())
	}
	s := &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{old, nw}, Pods: pods}
	p := predictOK(t, s, snapshot.Deployment, "web", 3, rules37(t))

	wantStep(t, p, "web-old", prediction.ReplicaSetStep{Before: 9, AfterScale: 4, Final: 2, Deleted: 7})
	wantStep(t, p, "web-new", prediction.ReplicaSetStep{New: true, Before: 3, AfterScale: 1, Final: 3, Deleted: 2, Created: 2})
	want := []string{
		"scale:web-old:web-old-p1", "scale:web-old:web-old-p2", "scale:web-old:web-old-p3", "scale:web-old:web-old-p4", "scale:web-old:web-old-p5",
		"scale:web-new:web-new-p1", "scale:web-new:web-new-p2",
		"rollout:web-old:web-old-p6", "rollout:web-old:web-old-p7",
	}
	if got := victimSteps(p); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("victims:\n got %v\nwant %v", got, want)
	}
	if len(p.Victims) != 9 || p.Creates != 2 {
		t.Errorf("%d victims and %d creates, want 9 and 2", len(p.Victims), p.Creates)
	}
	wantDecided(t, p, "web-new-p2", "R7", "web-new-p3")
	wantKept(t, p, "web-old-p8", "web-old-p9", "web-new-p3")
	noCreatedPods(t, p)
	overtakenOnly(t, p, "web-new-p1", "web-new-p2")
	for _, x := range p.Pods {
		if x.Name != "web-new-p1" && x.Name != "web-new-p2" && !x.Certain {
			t.Errorf("%s not certain", x.Name)
		}
	}
}

// overtakenOnly: the pods of a ReplicaSet that the scale shrinks and the
// rollout grows back right after go unless its controller is overtaken by
// the grow, the one choice left open.
func overtakenOnly(t *testing.T, p *prediction.Prediction, names ...string) {
	t.Helper()
	for _, n := range names {
		if x := findPod(t, p, n); x.Fate != prediction.FateDelete || x.Certain || x.DeleteProbability < 0.9 || x.DeleteProbability >= 1 {
			t.Errorf("%s: fate %s certain %v p %v, want deleted unless overtaken", n, x.Fate, x.Certain, x.DeleteProbability)
		}
	}
}

// rolling.go, after the scale second observed case: 3 -> 1, surge 0 unavailable 1, old/new
// 2/1: final 0/1, all 3 existing pods deleted (the new one by the scale),
// 1 created.
func TestDeploymentObservedSurgeZero(t *testing.T) {
	d := mkDeploy(3, 3, "0", "1")
	old := mkDepRS(d, "old", "web:1", 2, 10*24*time.Hour, 3, 3)
	nw := mkDepRS(d, "new", "web:2", 1, 10*time.Minute, 3, 3)
	s := &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{old, nw},
		Pods: append(readyPods(old, 2, "a"), readyPods(nw, 1, "b")...)}
	p := predictOK(t, s, snapshot.Deployment, "web", 1, rules37(t))
	wantStep(t, p, "web-old", prediction.ReplicaSetStep{Before: 2, AfterScale: 1, Final: 0, Deleted: 2})
	wantStep(t, p, "web-new", prediction.ReplicaSetStep{New: true, Before: 1, AfterScale: 0, Final: 1, Deleted: 1, Created: 1})
	want := []string{"scale:web-old:web-old-p1", "scale:web-new:web-new-p1", "rollout:web-old:web-old-p2"}
	if got := victimSteps(p); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("victims:\n got %v\nwant %v", got, want)
	}
	if p.Creates != 1 {
		t.Errorf("creates %d, want 1", p.Creates)
	}
	noCreatedPods(t, p)
}

func TestDeploymentScaleUpAndNoChange(t *testing.T) {
	d := mkDeploy(3, 3, "25%", "25%")
	cur := mkDepRS(d, "v1", "web:2", 3, 24*time.Hour, 3, 4)
	s := &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{cur}, Pods: readyPods(cur, 3, "n")}

	p := predictOK(t, s, snapshot.Deployment, "web", 5, rules37(t))
	wantVictims(t, p)
	if p.Message != "scale-up (3 -> 5): no pod would be deleted" {
		t.Errorf("scale-up message %q", p.Message)
	}
	if p.Creates != 2 {
		t.Errorf("scale-up creates %d, want 2", p.Creates)
	}
	wantStep(t, p, "web-v1", prediction.ReplicaSetStep{New: true, Before: 3, AfterScale: 5, Final: 5, Created: 2})
	wantKept(t, p, "web-v1-p1", "web-v1-p2", "web-v1-p3")
	noCreatedPods(t, p)

	p = predictOK(t, s, snapshot.Deployment, "web", 3, rules37(t))
	wantVictims(t, p)
	if !strings.HasPrefix(p.Message, "no change (3 replicas): no pod would be deleted") {
		t.Errorf("no-change message %q", p.Message)
	}
	wantKept(t, p, "web-v1-p1", "web-v1-p2", "web-v1-p3")
	if string(mustJSON(t, p.Victims)) != "[]" {
		t.Errorf("victims JSON %s, want []", mustJSON(t, p.Victims))
	}
}

// syncDeployment step 3: a Deployment being deleted only updates its status; it
// does not scale its ReplicaSets.
func TestDeploymentBeingDeletedDeletesNothing(t *testing.T) {
	d := mkDeploy(3, 3, "25%", "25%")
	ts := metav1.NewTime(testNow.Add(-time.Second))
	d.DeletionTimestamp = &ts
	cur := mkDepRS(d, "v1", "web:2", 3, 24*time.Hour, 3, 4)
	s := &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{cur}, Pods: readyPods(cur, 3, "n")}
	p := predictOK(t, s, snapshot.Deployment, "web", 1, rules37(t))
	if !strings.Contains(p.Message, "being deleted") {
		t.Errorf("message %q", p.Message)
	}
	if len(p.Victims) != 0 {
		t.Fatalf("BUG: pkg/workload/deployment.go predictDeployment ignores d.DeletionTimestamp: it still simulates the scale and lists victims %v (fates delete) while the message says %q; syncDeployment step 3: a Deployment being deleted does not scale", p.Victims, p.Message)
	}
}

func TestDeploymentNotFound(t *testing.T) {
	s := &snapshot.Snapshot{Deployments: []*appsv1.Deployment{mkDeploy(3, 3, "1", "0")}}
	_, err := Predict(s, snapshot.Ref{Kind: snapshot.Deployment, Namespace: testNS, Name: "api"}, 1, Options{Rules: rules37(t), Now: testNow})
	if _, ok := err.(*NotFoundError); !ok {
		t.Fatalf("err %v, want *NotFoundError", err)
	}
}

func wantKept(t *testing.T, p *prediction.Prediction, names ...string) {
	t.Helper()
	for _, n := range names {
		x := findPod(t, p, n)
		if x.Fate != prediction.FateKeep || !x.Certain || x.Position == 0 {
			t.Errorf("%s: fate %s certain %v position %d, want a certain keep", n, x.Fate, x.Certain, x.Position)
		}
	}
}

// noCreatedPods: pods the controllers create in the simulation are counted
// in Creates, never listed and never victims.
func noCreatedPods(t *testing.T, p *prediction.Prediction) {
	t.Helper()
	for _, x := range p.Pods {
		if strings.Contains(x.Name, "created") {
			t.Errorf("created pod %s listed with fate %s", x.Name, x.Fate)
		}
	}
	for _, v := range p.Victims {
		if strings.Contains(v, "created") {
			t.Errorf("created pod %s is a victim", v)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// raceFixture: two ReplicaSets of 2 pods, 4 -> 2 with surge 0 and
// unavailable 1: the split takes one pod from each. v1-a and v2-c share n1
// (rank 2 while both are active), so each RS's victim depends on whether
// the other RS's victim is already terminating when it ranks (the ReplicaSet controllers race, docs/deployments.md):
// v1 deletes a (R5) or, with c gone, b (R6: ready 1h vs 24h); likewise v2.
func raceFixture(paused bool) *snapshot.Snapshot {
	d := mkDeploy(4, 4, "0", "1")
	d.Spec.Paused = paused
	v1 := mkDepRS(d, "v1", "web:1", 2, 10*24*time.Hour, 4, 4)
	v2 := mkDepRS(d, "v2", "web:2", 2, 24*time.Hour, 4, 4)
	return &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{v1, v2}, Pods: podsOf(
		rsPod("a", v1).on("n1").readyFor(24*time.Hour),
		rsPod("b", v1).on("n2").readyFor(time.Hour),
		rsPod("c", v2).on("n1").readyFor(24*time.Hour),
		rsPod("d", v2).on("n3").readyFor(time.Hour),
	)}
}

func TestDeploymentCrossReplicaSetRankRace(t *testing.T) {
	p := predictOK(t, raceFixture(true), snapshot.Deployment, "web", 2, rules37(t))
	wantStep(t, p, "web-v1", prediction.ReplicaSetStep{Before: 2, AfterScale: 1, Final: 1, Deleted: 1})
	wantStep(t, p, "web-v2", prediction.ReplicaSetStep{New: true, Before: 2, AfterScale: 1, Final: 1, Deleted: 1})
	// Most likely both rank before the other's victim is gone: a and c by
	// rank. Had v2 ranked with a already terminating, c and d would share
	// rank 1 and d would go (R6).
	wantVictims(t, p, "a", "c")
	for _, n := range []string{"a", "b", "c", "d"} {
		if x := findPod(t, p, n); x.Certain || !strings.Contains(x.Reason, "sibling ReplicaSet") {
			t.Errorf("%s: certain %v reason %q, want an open fate explained by the timing", n, x.Certain, x.Reason)
		}
	}
	if p.Certain || !strings.Contains(p.Message, "most likely outcome") {
		t.Errorf("certain %v message %q", p.Certain, p.Message)
	}
}

// A paused Deployment's warnings should not also say the rollout continues.
func TestDeploymentPausedWarningsAgree(t *testing.T) {
	p := predictOK(t, raceFixture(true), snapshot.Deployment, "web", 2, rules37(t))
	if hasWarning(p, "paused") && hasWarning(p, "then the rollout continues") {
		t.Fatalf("BUG: pkg/workload/deployment.go predictDeployment adds both the paused warning and \"a rollout is in progress: ... then the rollout continues at the new size\" for a paused Deployment with two active ReplicaSets; the second contradicts the first: %q", p.Warnings)
	}
}

// Not paused, the rollout continues after the split and takes v1 to 0:
// a and b are deleted whichever way the race goes, so neither fate is open.
func TestDeploymentRaceResolvedByRollout(t *testing.T) {
	p := predictOK(t, raceFixture(false), snapshot.Deployment, "web", 2, rules37(t))
	wantStep(t, p, "web-v1", prediction.ReplicaSetStep{Before: 2, AfterScale: 1, Final: 0, Deleted: 2})
	wantStep(t, p, "web-v2", prediction.ReplicaSetStep{New: true, Before: 2, AfterScale: 1, Final: 2, Deleted: 1, Created: 1})
	if got := victimSteps(p); fmt.Sprint(got) != "[scale:web-v1:a scale:web-v2:c rollout:web-v1:b]" {
		t.Errorf("victims %v", got)
	}
	if a := findPod(t, p, "a"); !a.Certain || a.DeleteProbability != 1 {
		t.Fatalf("BUG: pkg/workload/deployment.go markRace judges the race per step: a is shown \"DELETE? 50%%\" (certain=%v p=%v) although the rollout deletes v1's other pod b right after, so a dies in both orders; only the step that kills it is open", a.Certain, a.DeleteProbability)
	}
}

// The surge-0 case with the old ReplicaSet's two pods fully tied: the
// scale deletes one at random and the rollout the other, so both die for
// certain; only which step kills which is left to chance.
func TestDeploymentTieCutByScaleTakenByRollout(t *testing.T) {
	d := mkDeploy(3, 3, "0", "1")
	old := mkDepRS(d, "old", "web:1", 2, 10*24*time.Hour, 3, 3)
	nw := mkDepRS(d, "new", "web:2", 1, 10*time.Minute, 3, 3)
	pods := podsOf(
		rsPod("web-old-x", old).on("a").readyFor(5*time.Hour).createdAgo(6*time.Hour),
		rsPod("web-old-y", old).on("a").readyFor(5*time.Hour).createdAgo(6*time.Hour),
	)
	s := &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{old, nw},
		Pods: append(pods, readyPods(nw, 1, "b")...)}
	p := predictOK(t, s, snapshot.Deployment, "web", 1, rules37(t))
	for _, n := range []string{"web-old-x", "web-old-y"} {
		pp := findPod(t, p, n)
		if pp.Fate != prediction.FateDelete || !pp.Certain || pp.DeleteProbability != 1 || pp.Step != prediction.StepEither || pp.ContenderGroup != nil {
			t.Errorf("%s: fate %s certain %v p %v step %q group %v", n, pp.Fate, pp.Certain, pp.DeleteProbability, pp.Step, pp.ContenderGroup)
		}
	}
	// The new ReplicaSet shrinks 1 -> 0 and grows back: overtaken or not.
	overtakenOnly(t, p, "web-new-p1")
	if len(p.Contenders) != 1 || len(p.Contenders[0].Pods) != 1 {
		t.Errorf("contenders %+v", p.Contenders)
	}
}

// listSurvivors counts positioned pods once and numbers on from there; the
// reference numbers each kept pod by recounting the pods listed before it
// (the former quadratic code). Random mid-rollout fleets with terminating
// pods, scaled to random sizes, must agree pod for pod.
func TestDeploymentPositionsMatchRecount(t *testing.T) {
	t.Parallel()
	trials := 200
	if testing.Short() {
		trials = 50
	}
	rng := rand.New(rand.NewPCG(18, 1))
	for trial := 0; trial < trials; trial++ {
		n := 1 + rng.IntN(40)
		d := mkDeploy(int32(n), int32(n), "25%", "25%")
		s := &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}}
		for r, h := range []string{"v0", "v1", "v2"}[:1+rng.IntN(3)] {
			image := "web:1"
			if h == "v2" || rng.IntN(3) == 0 {
				image = "web:2"
			}
			size := rng.IntN(n + 1)
			rs := mkDepRS(d, h, image, int32(size), time.Duration(30-10*r)*24*time.Hour, int32(n), int32(n+n/4))
			s.ReplicaSets = append(s.ReplicaSets, rs)
			for i := 0; i < size+rng.IntN(3); i++ {
				p := rsPod(fmt.Sprintf("%s-%d", rs.Name, i), rs).on(fmt.Sprintf("node-%d", rng.IntN(5))).readyFor(readyAges[rng.IntN(len(readyAges))])
				if rng.IntN(6) == 0 {
					p = p.terminating()
				}
				s.Pods = append(s.Pods, p.pod())
			}
		}
		p := predictOK(t, s, snapshot.Deployment, "web", int32(rng.IntN(n+1)), rules37(t))
		for i, pp := range p.Pods {
			if pp.Position == 0 {
				continue
			}
			if want := positioned(p.Pods[:i]) + 1; pp.Position != want {
				t.Fatalf("trial %d: pod %d (%s) has position %d, recount gives %d", trial, i, pp.Name, pp.Position, want)
			}
		}
	}
}

// Chances add up to the expected number of deletions across every
// interleaving: here the old ReplicaSet's tied pods all go (the scale takes
// two, the rollout the third, whichever they are), and the new pod goes
// unless its controller is overtaken by the grow back (weight 0.05).
func TestDeploymentChancesAddUpAcrossInterleavings(t *testing.T) {
	d := mkDeploy(4, 4, "0", "1")
	old := mkDepRS(d, "old", "web:1", 3, 10*24*time.Hour, 4, 4)
	nw := mkDepRS(d, "new", "web:2", 1, 10*time.Minute, 4, 4)
	pods := podsOf(
		rsPod("web-old-x", old).on("a").readyFor(5*time.Hour).createdAgo(6*time.Hour),
		rsPod("web-old-y", old).on("b").readyFor(5*time.Hour).createdAgo(6*time.Hour),
		rsPod("web-old-z", old).on("b").readyFor(5*time.Hour).createdAgo(6*time.Hour),
	)
	s := &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{old, nw},
		Pods: append(pods, readyPods(nw, 1, "c")...)}
	p := predictOK(t, s, snapshot.Deployment, "web", 1, rules37(t))
	sum := 0.0
	for _, x := range p.Pods {
		if x.Fate == prediction.FateDelete || x.Fate == prediction.FateKeep {
			sum += x.DeleteProbability
		}
	}
	if want := float64(len(p.Victims)) - weightOvertaken; math.Abs(sum-want) > 1e-6 {
		t.Errorf("chances add up to %v, want %v (%d victims)", sum, want, len(p.Victims))
	}
	for _, n := range []string{"web-old-x", "web-old-y", "web-old-z"} {
		if x := findPod(t, p, n); x.Fate != prediction.FateDelete || !x.Certain {
			t.Errorf("%s: %s certain %v, want a certain victim", n, x.Fate, x.Certain)
		}
	}
}
