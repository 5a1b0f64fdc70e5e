package statefulset

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// 5 → 2: web-4, web-3, web-2 die, highest ordinal first, one per sync.
func TestPlainReverseOrder(t *testing.T) {
	set := newSet("web")
	res := predict(t, Input{Set: set, Pods: pods(set, seq(0, 4), nil), Replicas: 2})
	wantNoStall(t, res)
	wantList(t, "victims", res.Victims, []string{"web-4", "web-3", "web-2"})
	wantList(t, "first sync", res.FirstSync, []string{"web-4"})
	wantFate(t, res, "web-4", FateDelete, "ordinal 4 >= replicas 2: reverse ordinal")
	wantFate(t, res, "web-1", FateKeep, "ordinal 1 in [0, 1]")
	if f := fateOf(t, res, "web-3"); f.Position != 2 || !f.BeforeStall {
		t.Errorf("web-3 position %d beforeStall %v", f.Position, f.BeforeStall)
	}
	if res.Start != 0 || res.End != 1 || res.Policy != "OrderedReady" {
		t.Errorf("range [%d,%d] policy %s", res.Start, res.End, res.Policy)
	}
	// Result.Pods: condemned in deletion order, then kept ascending.
	var order []string
	for _, f := range res.Pods {
		order = append(order, f.Name)
	}
	wantList(t, "pods order", order, []string{"web-4", "web-3", "web-2", "web-0", "web-1"})
}

// Pods are listed in random order by the informer; the result must not care.
func TestInputOrderIrrelevant(t *testing.T) {
	set := newSet("web")
	ps := pods(set, []int{3, 0, 4, 2, 1}, nil)
	res := predict(t, Input{Set: set, Pods: ps, Replicas: 2})
	wantList(t, "victims", res.Victims, []string{"web-4", "web-3", "web-2"})
}

// start 3, replicas 2 keeps web-3 and web-4; web-7, web-6, web-5 go.
func TestStartOrdinal(t *testing.T) {
	set := newSet("web", startAt(3))
	res := predict(t, Input{Set: set, Pods: pods(set, seq(3, 7), nil), Replicas: 2})
	wantNoStall(t, res)
	wantList(t, "victims", res.Victims, []string{"web-7", "web-6", "web-5"})
	wantFate(t, res, "web-5", FateDelete, "ordinal 5 > end 4 (start 3 + replicas 2 - 1)")
	if res.Start != 3 || res.End != 4 {
		t.Errorf("range [%d,%d], want [3,4]", res.Start, res.End)
	}
}

// start raised 0 → 2 with replicas 1: foo-2 stays, foo-1 goes before foo-0
// (pods below start go last, highest first), as verified upstream.
func TestStartRaisedCondemnsLowOrdinals(t *testing.T) {
	for _, pol := range []string{"OrderedReady", "Parallel"} {
		t.Run(pol, func(t *testing.T) {
			set := newSet("foo", startAt(2))
			if pol == "Parallel" {
				parallel(set)
			}
			res := predict(t, Input{Set: set, Pods: pods(set, seq(0, 2), nil), Replicas: 1})
			wantNoStall(t, res)
			wantList(t, "victims", res.Victims, []string{"foo-1", "foo-0"})
			wantFate(t, res, "foo-0", FateDelete, "ordinal 0 below start 2")
			wantFate(t, res, "foo-2", FateKeep, "")
		})
	}
	// Above and below the range: above first, then below, each highest first.
	set := newSet("foo", startAt(2))
	res := predict(t, Input{Set: set, Pods: pods(set, seq(0, 5), nil), Replicas: 2})
	wantList(t, "victims", res.Victims, []string{"foo-5", "foo-4", "foo-1", "foo-0"})
}

// Gaps: only existing condemned pods are deleted; a missing in-range pod
// blocks OrderedReady (it is created first) but not Parallel.
func TestGapsInOrdinals(t *testing.T) {
	set := newSet("web")
	res := predict(t, Input{Set: set, Pods: pods(set, []int{0, 1, 4, 7}, nil), Replicas: 2})
	wantNoStall(t, res)
	wantList(t, "victims", res.Victims, []string{"web-7", "web-4"})

	ps := pods(set, []int{0, 2, 5, 9}, nil)
	res = predict(t, Input{Set: set, Pods: ps, Replicas: 3})
	wantStall(t, res, "web-1", "does not exist: the controller creates it")
	wantList(t, "victims once unblocked", res.Victims, []string{"web-9", "web-5"})
	wantList(t, "deleted before stall", res.DeletedBeforeStall, nil)
	wantList(t, "creates", res.FirstSyncCreates, []string{"web-1"})
	wantFate(t, res, "web-1", FateCreate, "missing")

	pset := newSet("web", parallel)
	res = predict(t, Input{Set: pset, Pods: pods(pset, []int{0, 2, 5, 9}, nil), Replicas: 3})
	wantNoStall(t, res)
	wantList(t, "victims", res.Victims, []string{"web-9", "web-5"})
	wantList(t, "first sync", res.FirstSync, []string{"web-9", "web-5"})
	wantList(t, "creates", res.FirstSyncCreates, []string{"web-1"})
}

// ParentAndOrdinal must agree with upstream's regexp.
func TestParentAndOrdinalMatchesUpstreamRegexp(t *testing.T) {
	re := regexp.MustCompile("(.*)-([0-9]+)$")
	upstream := func(name string) (string, int) {
		m := re.FindStringSubmatch(name)
		if len(m) < 3 {
			return "", -1
		}
		if i, err := strconv.ParseInt(m[2], 10, 32); err == nil {
			return m[1], int(i)
		}
		return m[1], -1
	}
	for _, name := range []string{
		"web-0", "web-007", "web-12", "web", "web-", "-1", "-", "", "web-1-2", "web--3",
		"web-abc", "web-1a", "web-a1", "web-2147483647", "web-2147483648",
		"web-99999999999999999999", "web-+1", "web- 1", "a-b-c-0010", "web-٣",
	} {
		gp, go_ := ParentAndOrdinal(name)
		up, uo := upstream(name)
		if gp != up || go_ != uo {
			t.Errorf("%q: got (%q,%d), upstream (%q,%d)", name, gp, go_, up, uo)
		}
	}
}

// A pod whose name does not parse as web-<ordinal> is released (owned) or
// never adopted (orphan); it is never deleted by the scale-down.
func TestUnparsableName(t *testing.T) {
	set := newSet("web")
	ps := append(pods(set, seq(0, 2), nil),
		newPod(set, "web-abc"),
		newPod(set, "webx-9"),
		newPod(set, "web-canary", orphan),
	)
	res := predict(t, Input{Set: set, Pods: ps, Replicas: 1})
	wantList(t, "victims", res.Victims, []string{"web-2", "web-1"})
	wantFate(t, res, "web-abc", FateIgnored, "name does not parse as web-<ordinal>: released")
	wantFate(t, res, "webx-9", FateIgnored, "name does not parse as web-<ordinal>")
	wantFate(t, res, "web-canary", FateIgnored, "orphan whose name does not parse")
}

// An ordinal beyond int32 gives -1: claimed, but neither kept nor deleted.
func TestOverflowingOrdinalIgnored(t *testing.T) {
	set := newSet("web")
	ps := append(pods(set, seq(0, 2), nil), newPod(set, "web-2147483648"), newPod(set, "web-2147483647"))
	res := predict(t, Input{Set: set, Pods: ps, Replicas: 1})
	wantList(t, "victims", res.Victims, []string{"web-2147483647", "web-2", "web-1"})
	wantFate(t, res, "web-2147483648", FateIgnored, "overflows int32")
	if f := fateOf(t, res, "web-2147483648"); f.Ordinal != -1 {
		t.Errorf("ordinal %d, want -1", f.Ordinal)
	}
}

// Leading zeros parse: web-007 is ordinal 7 and is condemned like web-7.
// Kept under a non-canonical name, the controller's identity update fails
// and every sync errors out before deleting anything.
func TestLeadingZeros(t *testing.T) {
	set := newSet("web")
	ps := append(pods(set, seq(0, 2), nil), newPod(set, "web-007"))
	res := predict(t, Input{Set: set, Pods: ps, Replicas: 2})
	wantNoStall(t, res)
	wantList(t, "victims", res.Victims, []string{"web-007", "web-2"})
	if f := fateOf(t, res, "web-007"); f.Ordinal != 7 {
		t.Errorf("web-007 ordinal %d", f.Ordinal)
	}

	ps = []*corev1.Pod{newPod(set, "web-0"), newPod(set, "web-01"), newPod(set, "web-2")}
	for _, pol := range []string{"OrderedReady", "Parallel"} {
		s := set.DeepCopy()
		if pol == "Parallel" {
			parallel(s)
		}
		res = predict(t, Input{Set: s, Pods: ps, Replicas: 2})
		wantStall(t, res, "web-01", "not the canonical")
		wantList(t, pol+" deleted", res.DeletedBeforeStall, nil)
	}

	// Canonical and non-canonical on one kept ordinal: one is invisible.
	ps = append(pods(set, seq(0, 2), nil), newPod(set, "web-01"))
	res = predict(t, Input{Set: set, Pods: ps, Replicas: 2})
	wantNoStall(t, res)
	wantList(t, "victims", res.Victims, []string{"web-2"})
	wantFate(t, res, "web-01", FateIgnored, "shares ordinal 1 with web-1")
}

// OrderedReady: an unhealthy kept pod blocks every deletion.
func TestOrderedReadyStallOnUnhealthyKeptPod(t *testing.T) {
	set := newSet("web")
	res := predict(t, Input{Set: set, Pods: pods(set, seq(0, 4), map[int][]podOpt{1: {notReady}}), Replicas: 2})
	wantStall(t, res, "web-1", "web-1 (kept) is not Running and Ready")
	wantList(t, "first sync", res.FirstSync, nil)
	wantList(t, "deleted before stall", res.DeletedBeforeStall, nil)
	wantList(t, "victims once unblocked", res.Victims, []string{"web-4", "web-3", "web-2"})
	if f := fateOf(t, res, "web-4"); f.BeforeStall || f.Position != 1 {
		t.Errorf("web-4: %+v", f)
	}
}

// OrderedReady: the next condemned pod is unhealthy but a lower pod is the
// first unhealthy one: stall. Deletions above it still happen first.
func TestStallOnCondemnedNotFirstUnhealthy(t *testing.T) {
	set := newSet("web")
	// web-2 and web-3 not ready, web-4 fine: web-4 goes, then web-3 blocks
	// because web-2 is the first unhealthy pod.
	res := predict(t, Input{Set: set, Pods: pods(set, seq(0, 4), map[int][]podOpt{2: {notReady}, 3: {notReady}}), Replicas: 2})
	wantStall(t, res, "web-3", "not the first unhealthy pod (web-2 is)")
	wantList(t, "deleted before stall", res.DeletedBeforeStall, []string{"web-4"})
	wantList(t, "victims", res.Victims, []string{"web-4", "web-3", "web-2"})
	if !fateOf(t, res, "web-4").BeforeStall || fateOf(t, res, "web-3").BeforeStall {
		t.Error("BeforeStall flags wrong")
	}
}

// OrderedReady: the top condemned pod is the only unhealthy one, so it is
// the first unhealthy pod and may go; the rest follow.
func TestOnlyTopCondemnedUnhealthyIsDeleted(t *testing.T) {
	set := newSet("web")
	res := predict(t, Input{Set: set, Pods: pods(set, seq(0, 4), map[int][]podOpt{4: {notReady}}), Replicas: 2})
	wantNoStall(t, res)
	wantList(t, "victims", res.Victims, []string{"web-4", "web-3", "web-2"})
	wantFate(t, res, "web-4", FateDelete, "first unhealthy pod")
	// An unhealthy lower condemned pod goes when its turn comes.
	res = predict(t, Input{Set: set, Pods: pods(set, seq(0, 4), map[int][]podOpt{2: {notReady}}), Replicas: 2})
	wantNoStall(t, res)
	wantList(t, "victims", res.Victims, []string{"web-4", "web-3", "web-2"})
}

// OrderedReady: a terminating top pod makes the controller wait; once gone,
// it goes on. Nothing is deleted in the first sync.
func TestTerminatingTopPodWaits(t *testing.T) {
	set := newSet("web")
	res := predict(t, Input{Set: set, Pods: pods(set, seq(0, 4), map[int][]podOpt{4: {terminating}}), Replicas: 2})
	wantNoStall(t, res)
	wantList(t, "first sync", res.FirstSync, nil)
	wantList(t, "waits", res.Waits, []string{"web-4"})
	wantList(t, "victims", res.Victims, []string{"web-3", "web-2"})
	wantFate(t, res, "web-4", FateTerminating, "waits for it to disappear")
	// Result.Pods keeps the terminating pod where it falls.
	if res.Pods[0].Name != "web-4" {
		t.Errorf("first pod listed %s", res.Pods[0].Name)
	}
}

// OrderedReady: a lower terminating pod is the first unhealthy pod and so
// blocks an unhealthy pod above it, but only until it has disappeared.
// Found by running the real controller.
func TestLowerTerminatingPodBlocksOnlyUntilGone(t *testing.T) {
	set := newSet("web")
	res := predict(t, Input{Set: set, Replicas: 1, Pods: pods(set, []int{0, 1, 3, 5}, map[int][]podOpt{3: {terminating}, 5: {notReady}})})
	wantNoStall(t, res)
	wantList(t, "first sync", res.FirstSync, nil)
	wantList(t, "waits", res.Waits, []string{"web-3"})
	wantList(t, "victims", res.Victims, []string{"web-5", "web-1"})
	wantFate(t, res, "web-3", FateTerminating, "counts as the first unhealthy pod until it disappears")
}

// Huge replica counts do not make the model walk every ordinal.
func TestHugeReplicas(t *testing.T) {
	for _, opts := range [][]setOpt{nil, {parallel}} {
		set := newSet("web", opts...)
		done := make(chan Result, 1)
		go func() {
			res, _ := Predict(Input{Set: set, Pods: pods(set, seq(0, 1), nil), Replicas: 2_000_000_000, Now: now, Minor: 37})
			done <- res
		}()
		select {
		case res := <-done:
			if len(res.FirstSyncCreates) > maxCreateFates || len(res.Victims) != 0 {
				t.Errorf("%d creates, victims %v", len(res.FirstSyncCreates), res.Victims)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Predict is walking every ordinal")
		}
	}
}

// Parallel: every non-terminating condemned pod goes in one sync, whatever
// anyone's health.
func TestParallel(t *testing.T) {
	set := newSet("web", parallel)
	res := predict(t, Input{Set: set, Replicas: 2, Pods: pods(set, seq(0, 5), map[int][]podOpt{
		1: {notReady}, 3: {terminating}, 4: {pending}, 5: {notReady},
	})})
	wantNoStall(t, res)
	wantList(t, "victims", res.Victims, []string{"web-5", "web-4", "web-2"})
	wantList(t, "first sync", res.FirstSync, []string{"web-5", "web-4", "web-2"})
	wantFate(t, res, "web-3", FateTerminating, "Parallel skips it")
	wantFate(t, res, "web-1", FateKeep, "")
	if res.Policy != "Parallel" {
		t.Errorf("policy %s", res.Policy)
	}
}

// Scale to 0 deletes every pod, highest first.
func TestScaleToZero(t *testing.T) {
	set := newSet("web")
	res := predict(t, Input{Set: set, Pods: pods(set, seq(0, 2), nil), Replicas: 0})
	wantNoStall(t, res)
	wantList(t, "victims", res.Victims, []string{"web-2", "web-1", "web-0"})
	if res.End != -1 {
		t.Errorf("end %d, want -1", res.End)
	}
}

// Scale-up deletes nothing; the missing pods are to be created.
func TestScaleUpNoVictims(t *testing.T) {
	set := newSet("web")
	res := predict(t, Input{Set: set, Pods: pods(set, seq(0, 1), nil), Replicas: 4})
	wantNoStall(t, res)
	wantList(t, "victims", res.Victims, nil)
	wantList(t, "creates", res.FirstSyncCreates, []string{"web-2"})
	wantFate(t, res, "web-2", FateCreate, "")
	pset := newSet("web", parallel)
	res = predict(t, Input{Set: pset, Pods: pods(pset, seq(0, 1), nil), Replicas: 4})
	wantList(t, "victims", res.Victims, nil)
	wantList(t, "creates", res.FirstSyncCreates, []string{"web-2", "web-3"})
}

// Claiming: foreign-owned pods are never touched, orphans are adopted unless
// terminating, owned pods whose labels stopped matching are released.
func TestClaiming(t *testing.T) {
	set := newSet("web")
	ps := append(pods(set, seq(0, 1), nil),
		newPod(set, "web-5", ownedBy("ReplicaSet", "x")),
		newPod(set, "web-4", orphan),
		newPod(set, "web-3", orphan, terminating),
		newPod(set, "web-2", labelled("app", "other")),
		newPod(set, "web-6", func(p *corev1.Pod) { p.Namespace = "elsewhere" }),
		newPod(set, "unrelated-0", orphan, labelled("app", "other")),
	)
	res := predict(t, Input{Set: set, Pods: ps, Replicas: 2})
	wantList(t, "victims", res.Victims, []string{"web-4"})
	wantFate(t, res, "web-5", FateIgnored, "owned by ReplicaSet/x")
	wantFate(t, res, "web-3", FateIgnored, "orphan being deleted: not adopted")
	wantFate(t, res, "web-2", FateIgnored, "do not match the selector: released")
	wantFate(t, res, "web-6", FateIgnored, "namespace elsewhere")
	for _, f := range res.Pods {
		if f.Name == "unrelated-0" {
			t.Error("an unrelated pod is listed")
		}
	}
	if !hasNote(res, "adopts") {
		t.Errorf("no adoption note: %v", res.Notes)
	}
}

// 1.34+ lists pods by a kind/name/UID index: a controller ref with the
// set's UID but another name is not seen; up to 1.33 the UID suffices.
func TestOwnerIndexKey(t *testing.T) {
	set := newSet("web")
	odd := func(p *corev1.Pod) { p.OwnerReferences[0].Name = "renamed" }
	ps := append(pods(set, seq(0, 1), nil), newPod(set, "web-2", odd))
	res := predict(t, Input{Set: set, Pods: ps, Replicas: 2, Minor: 33})
	wantList(t, "1.33 victims", res.Victims, []string{"web-2"})
	res = predict(t, Input{Set: set, Pods: ps, Replicas: 2, Minor: 34})
	wantList(t, "1.34 victims", res.Victims, nil)
	wantFate(t, res, "web-2", FateIgnored, "index does not list it")
}

// Failed in-range pods are deleted for recreation; OrderedReady then waits
// for the new pod. Succeeded pods only from 1.27; before, they just block.
func TestTerminalInRangePods(t *testing.T) {
	set := newSet("web")
	res := predict(t, Input{Set: set, Replicas: 2, Pods: pods(set, seq(0, 3), map[int][]podOpt{0: {phase(corev1.PodFailed)}})})
	wantStall(t, res, "web-0", "web-0 (kept) is Failed: the controller deletes it to create it again")
	wantList(t, "first sync", res.FirstSync, []string{"web-0"})
	wantFate(t, res, "web-0", FateRecreate, "")
	wantList(t, "victims once unblocked", res.Victims, []string{"web-3", "web-2"})

	succ := map[int][]podOpt{1: {phase(corev1.PodSucceeded)}}
	res = predict(t, Input{Set: set, Replicas: 2, Minor: 26, Pods: pods(set, seq(0, 3), succ)})
	wantStall(t, res, "web-1", "not Running and Ready (Succeeded")
	wantFate(t, res, "web-1", FateKeep, "")
	res = predict(t, Input{Set: set, Replicas: 2, Minor: 27, Pods: pods(set, seq(0, 3), succ)})
	wantStall(t, res, "web-1", "is Succeeded: the controller deletes it")
	wantFate(t, res, "web-1", FateRecreate, "")

	pset := newSet("web", parallel)
	res = predict(t, Input{Set: pset, Replicas: 2, Pods: pods(pset, seq(0, 3), map[int][]podOpt{0: {phase(corev1.PodFailed)}})})
	wantNoStall(t, res)
	wantList(t, "parallel first sync", res.FirstSync, []string{"web-0", "web-3", "web-2"})
	wantList(t, "parallel victims", res.Victims, []string{"web-3", "web-2"})
}

// A terminating kept pod blocks OrderedReady.
func TestTerminatingKeptPodBlocks(t *testing.T) {
	set := newSet("web")
	res := predict(t, Input{Set: set, Replicas: 2, Pods: pods(set, seq(0, 3), map[int][]podOpt{1: {terminating}})})
	wantStall(t, res, "web-1", "is terminating")
	wantFate(t, res, "web-1", FateTerminating, "")
}

// A StatefulSet being deleted does nothing but status.
func TestSetBeingDeleted(t *testing.T) {
	set := newSet("web")
	ts := metav1.NewTime(now)
	set.DeletionTimestamp = &ts
	res := predict(t, Input{Set: set, Replicas: 1, Pods: pods(set, seq(0, 2), nil)})
	wantList(t, "victims", res.Victims, nil)
	wantFate(t, res, "web-2", FateKeep, "being deleted")
	if !hasNote(res, "being deleted") {
		t.Errorf("notes %v", res.Notes)
	}
}

// PVCs: whenScaled Delete names the claims of deleted pods from the
// template and the ordinal, found or not; Retain keeps them; unreadable
// claims give expected, unchecked names.
func TestClaimRetention(t *testing.T) {
	claim := func(name string, refs ...metav1.OwnerReference) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, OwnerReferences: refs}}
	}
	pvcs := []*corev1.PersistentVolumeClaim{
		claim("data-web-0"), claim("data-web-1"), claim("data-web-2"), claim("data-web-3"), claim("logs-web-3"),
	}
	del := newSet("web", withClaims(appsv1.DeletePersistentVolumeClaimRetentionPolicyType, "data", "logs"))
	res := predict(t, Input{Set: del, Pods: pods(del, seq(0, 3), nil), Replicas: 2, Claims: pvcs, ClaimsKnown: true})
	if res.ClaimPolicy != "Delete" {
		t.Errorf("policy %s", res.ClaimPolicy)
	}
	wantClaims(t, res, map[string]string{"data-web-3": ClaimDelete, "logs-web-3": ClaimDelete, "data-web-2": ClaimDelete, "logs-web-2": ClaimDelete})
	for _, c := range res.Claims {
		if c.Checked != (c.Name != "logs-web-2") {
			t.Errorf("%s: checked %v: only logs-web-2 is missing from the claims", c.Name, c.Checked)
		}
	}

	ret := newSet("web", withClaims(appsv1.RetainPersistentVolumeClaimRetentionPolicyType, "data"))
	res = predict(t, Input{Set: ret, Pods: pods(ret, seq(0, 3), nil), Replicas: 2, Claims: pvcs, ClaimsKnown: true})
	wantClaims(t, res, map[string]string{"data-web-3": ClaimRetain, "data-web-2": ClaimRetain})

	res = predict(t, Input{Set: del, Pods: pods(del, seq(0, 3), nil), Replicas: 2})
	wantClaims(t, res, map[string]string{"data-web-3": ClaimDelete, "logs-web-3": ClaimDelete, "data-web-2": ClaimDelete, "logs-web-2": ClaimDelete})
	for _, c := range res.Claims {
		if c.Checked {
			t.Errorf("%s checked without claims", c.Name)
		}
	}
	if !hasNote(res, "PersistentVolumeClaims could not be read") {
		t.Errorf("notes %v", res.Notes)
	}

	// The policy is ignored where the version does not act on it.
	res = predict(t, Input{Set: del, Pods: pods(del, seq(0, 3), nil), Replicas: 2, Claims: pvcs, ClaimsKnown: true, Minor: 26})
	wantClaims(t, res, map[string]string{"data-web-3": ClaimRetain, "logs-web-3": ClaimRetain, "data-web-2": ClaimRetain, "logs-web-2": ClaimRetain})
	res = predict(t, Input{Set: del, Pods: pods(del, seq(0, 3), nil), Replicas: 2, Claims: pvcs, ClaimsKnown: true, Minor: 26,
		Gates: map[string]bool{rules.StatefulSetAutoDeletePVC: true}})
	wantClaims(t, res, map[string]string{"data-web-3": ClaimDelete, "logs-web-3": ClaimDelete, "data-web-2": ClaimDelete, "logs-web-2": ClaimDelete})

	// Another controller: left alone from 1.28; before, the pod becomes a
	// second owner and the claim survives while the other owner exists.
	yes := true
	foreign := metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "Backup", Name: "b", UID: types.UID("b"), Controller: &yes}
	fpvcs := []*corev1.PersistentVolumeClaim{claim("data-web-2", foreign)}
	one := newSet("web", withClaims(appsv1.DeletePersistentVolumeClaimRetentionPolicyType, "data"))
	res = predict(t, Input{Set: one, Pods: pods(one, seq(0, 2), nil), Replicas: 2, Claims: fpvcs, ClaimsKnown: true})
	wantClaims(t, res, map[string]string{"data-web-2": ClaimRetain})
	if !strings.Contains(res.Claims[0].Reason, "controlled by Backup/b") {
		t.Errorf("reason %q", res.Claims[0].Reason)
	}
	res = predict(t, Input{Set: one, Pods: pods(one, seq(0, 2), nil), Replicas: 2, Claims: fpvcs, ClaimsKnown: true, Minor: 27})
	if !strings.Contains(res.Claims[0].Reason, "also owned by Backup/b") {
		t.Errorf("reason %q", res.Claims[0].Reason)
	}

	// A pod behind the stall keeps its claim for now: it goes only when
	// the pod does, so it is not named among this scale's deletions.
	res = predict(t, Input{Set: one, Pods: pods(one, seq(0, 3), map[int][]podOpt{2: {notReady}, 3: {notReady}}), Replicas: 2,
		Claims: []*corev1.PersistentVolumeClaim{claim("data-web-3")}, ClaimsKnown: true})
	for _, f := range res.Pods {
		if f.Fate == FateDelete && f.BeforeStall {
			for _, c := range res.Claims {
				if c.Pod != f.Name {
					t.Errorf("claim %s of %s named, but only %s is deleted now", c.Name, c.Pod, f.Name)
				}
			}
		}
	}
	for _, c := range res.Claims {
		if c.Pod == "web-2" {
			t.Errorf("claim %s of web-2 (behind the stall) named: %+v", c.Name, res.Claims)
		}
	}
	if !hasNote(res, "behind the stall") {
		t.Errorf("notes %v", res.Notes)
	}
}

func wantClaims(t *testing.T, res Result, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	for _, c := range res.Claims {
		got[c.Name] = c.Fate
	}
	if len(got) != len(want) {
		t.Errorf("claims %v, want %v", got, want)
		return
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("claim %s: %q, want %q (all %+v)", k, got[k], v, res.Claims)
		}
	}
}

func hasNote(res Result, part string) bool {
	for _, n := range res.Notes {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// Duplicated condemned ordinals are both deleted; the order is flagged.
func TestDuplicateCondemnedOrdinal(t *testing.T) {
	set := newSet("web")
	ps := append(pods(set, seq(0, 3), nil), newPod(set, "web-03"))
	res := predict(t, Input{Set: set, Pods: ps, Replicas: 2})
	wantList(t, "victims", res.Victims, []string{"web-03", "web-3", "web-2"})
	if !hasNote(res, "share ordinal 3") {
		t.Errorf("notes %v", res.Notes)
	}
}

// Recreate (1.37 alpha): with the gate off every sync fails; with it on,
// old-revision pods are deleted first, and a kept one must come back.
func TestRecreateStrategy(t *testing.T) {
	set := newSet("web")
	set.Spec.UpdateStrategy.Type = appsv1.RecreateStatefulSetStrategyType
	set.Status.UpdateRevision = "web-new"
	rev := func(r string) podOpt {
		return func(p *corev1.Pod) { p.Labels[appsv1.StatefulSetRevisionLabel] = r }
	}
	per := map[int][]podOpt{0: {rev("web-new")}, 1: {rev("web-new")}, 2: {rev("web-new")}, 3: {rev("web-old")}}
	res := predict(t, Input{Set: set, Pods: pods(set, seq(0, 3), per), Replicas: 2})
	wantStall(t, res, "", "Recreate with the StatefulSetRecreateStrategy gate off")
	wantList(t, "deleted", res.DeletedBeforeStall, nil)

	gates := map[string]bool{rules.StatefulSetRecreateStrategy: true}
	res = predict(t, Input{Set: set, Pods: pods(set, seq(0, 3), per), Replicas: 2, Gates: gates})
	wantNoStall(t, res)
	wantList(t, "first sync", res.FirstSync, []string{"web-3"})
	wantList(t, "victims", res.Victims, []string{"web-3", "web-2"})

	per[1] = []podOpt{rev("web-old")}
	res = predict(t, Input{Set: set, Pods: pods(set, seq(0, 3), per), Replicas: 2, Gates: gates})
	wantStall(t, res, "web-1", "Recreate")
	wantList(t, "first sync", res.FirstSync, []string{"web-1", "web-3"})
	wantList(t, "deleted before stall", res.DeletedBeforeStall, []string{"web-3"})
	wantFate(t, res, "web-1", FateRecreate, "old revision")
}

func TestInputErrors(t *testing.T) {
	set := newSet("web")
	bad := newSet("web")
	bad.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Bogus"}}}
	for name, in := range map[string]Input{
		"nil set":  {Now: now, Minor: 37},
		"minor 20": {Set: set, Now: now, Minor: 20},
		"minor 38": {Set: set, Now: now, Minor: 38},
		"negative": {Set: set, Now: now, Minor: 37, Replicas: -1},
		"zero now": {Set: set, Minor: 37},
		"selector": {Set: bad, Now: now, Minor: 37},
	} {
		if _, err := Predict(in); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
