package e2e

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

const (
	revisionAnnotation       = "deployment.kubernetes.io/revision"
	desiredReplicasAnnotaton = "deployment.kubernetes.io/desired-replicas"

	stepScale   = "scale"
	stepRollout = "rollout"
	// stepMerged: the ReplicaSet controller's first sync after the split
	// already saw a later size (the rollout's), so it deleted the pods of
	// both steps in one pass: which step killed which pod is not observable.
	stepMerged = "merged"
)

// rsHistory is one ReplicaSet of a Deployment through a real scale-in,
// rebuilt from the watch events (ordered by resourceVersion, which is the
// etcd revision, so events of pods and ReplicaSets can be compared).
type rsHistory struct {
	name     string
	uid      types.UID
	revision int
	before   int32 // spec.replicas before the scale
	// The split: the write of the scale() sync that set the desired-replicas
	// annotation to the new size. splitRV is 0 when the split did not
	// resize this ReplicaSet.
	splitRV       uint64
	splitGen      int64
	split         int32 // spec.replicas after the split (= before if not resized)
	final         int32
	resizes       []rsMark // spec.replicas changes after the scale, in order
	statuses      []rsMark // status.observedGeneration changes, in order
	deletedScale  []string
	deletedRoll   []string
	deletedMerged []string
	created       []string
}

// rsHistories rebuilds the ReplicaSets' story from the watch; keyed by name.
func (r *scenarioRun) rsHistories() map[string]*rsHistory {
	out := map[string]*rsHistory{}
	last := map[string]rsMark{}
	for _, rs := range r.rsBefore {
		rev, _ := strconv.Atoi(rs.Annotations[revisionAnnotation])
		h := &rsHistory{name: rs.Name, uid: rs.UID, revision: rev, before: deref0(rs.Spec.Replicas)}
		h.split, h.final = h.before, h.before
		out[rs.Name] = h
		last[rs.Name] = rsMark{name: rs.Name, replicas: h.before, gen: rs.Generation, obsGen: rs.Status.ObservedGeneration,
			desired: rs.Annotations[desiredReplicasAnnotaton]}
	}
	evs := slices.Clone(r.rsEvents)
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].rv < evs[j].rv })
	target := strconv.Itoa(int(r.sc.target))
	for _, ev := range evs {
		h := out[ev.name]
		prev, known := last[ev.name]
		if h == nil {
			rev, _ := strconv.Atoi(ev.revision)
			h = &rsHistory{name: ev.name, uid: ev.uid, revision: rev}
			out[ev.name] = h
		}
		if !known {
			prev = rsMark{name: ev.name}
		}
		if ev.replicas != prev.replicas {
			h.resizes = append(h.resizes, ev)
			// scale() writes the new desired-replicas annotation on every
			// active ReplicaSet; the rollout syncs after it find it set.
			if h.splitRV == 0 && len(h.resizes) == 1 && h.before > 0 && ev.desired == target && prev.desired != target {
				h.splitRV, h.splitGen, h.split = ev.rv, ev.gen, ev.replicas
			}
		}
		if ev.obsGen > prev.obsGen {
			h.statuses = append(h.statuses, ev)
		}
		h.final = ev.replicas
		last[ev.name] = ev
	}
	for _, n := range r.deleted {
		m, ok := r.deletedAt[n]
		if !ok || out[m.owner] == nil {
			continue
		}
		h := out[m.owner]
		switch h.stepOf(m.rv) {
		case stepScale:
			h.deletedScale = append(h.deletedScale, n)
		case stepRollout:
			h.deletedRoll = append(h.deletedRoll, n)
		default:
			h.deletedMerged = append(h.deletedMerged, n)
		}
	}
	for _, m := range r.createdAt {
		if h := out[m.owner]; h != nil {
			h.created = append(h.created, m.name)
		}
	}
	return out
}

// stepOf says which step deleted a pod of this ReplicaSet, deleted at
// revision rv: the ReplicaSet controller records the generation it acted
// on in status.observedGeneration right after its deletions, so the first
// status write after the deletion names the spec (split or later) that
// the deleting sync saw.
func (h *rsHistory) stepOf(rv uint64) string {
	if h.splitRV == 0 || rv < h.splitRV {
		return stepRollout
	}
	for i, st := range h.statuses {
		if st.rv <= rv {
			continue
		}
		switch {
		case st.obsGen == h.splitGen:
			return stepScale
		case st.obsGen > h.splitGen:
			// A status write for the split before the deletion means the
			// split's sync had finished: a later sync deleted this pod.
			for _, earlier := range h.statuses[:i] {
				if earlier.obsGen >= h.splitGen && earlier.rv > h.splitRV {
					return stepRollout
				}
			}
			return stepMerged
		}
		return "?"
	}
	// No status write after the deletion (not expected): fall back on the
	// order of the resizes.
	if len(h.resizes) > 1 && rv > h.resizes[1].rv {
		return stepRollout
	}
	return stepScale
}

func (h *rsHistory) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (revision %d): %d -> split %d -> final %d; resizes", h.name, h.revision, h.before, h.split, h.final)
	for _, m := range h.resizes {
		fmt.Fprintf(&b, " %d@%d", m.replicas, m.rv)
	}
	fmt.Fprintf(&b, "; deleted by the split %v, by the rollout %v", h.deletedScale, h.deletedRoll)
	if len(h.deletedMerged) > 0 {
		fmt.Fprintf(&b, ", in a merged sync %v", h.deletedMerged)
	}
	if len(h.created) > 0 {
		fmt.Fprintf(&b, "; created %v", h.created)
	}
	return b.String()
}

// stepReport is what checkRollout found for one scenario.
type stepReport struct {
	splitChecked, splitBad     int
	finalChecked, finalBad     int
	stepChecked, stepBad       int
	stepUnverifiable           int
	createsChecked, createsBad int
}

// checkRollout compares the plugin's ReplicaSet story of a Deployment
// (replicaSets[].afterScale and final, each victim's step, creates) with
// what the controllers did.
func (r *scenarioRun) checkRollout(t *testing.T) {
	t.Helper()
	p := r.pred
	if p == nil || len(r.rsBefore) == 0 {
		return
	}
	hs := r.rsHistories()
	names := make([]string, 0, len(hs))
	for n := range hs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("  observed RS %s", hs[n])
	}
	rep := &stepReport{}
	r.stepReport = rep
	var errs []string
	allCertain := p.allCertain()
	for _, prs := range p.ReplicaSets {
		h := hs[prs.Name]
		if h == nil {
			// A ReplicaSet the rollout would create ("web-<new>"): not
			// expected in these scenarios; its pods are counted in creates.
			t.Logf("  NOTE: plugin's ReplicaSet %q does not exist", prs.Name)
			continue
		}
		if prs.Before != h.before {
			errs = append(errs, fmt.Sprintf("replicaSets[%s].before = %d, spec.replicas was %d", prs.Name, prs.Before, h.before))
		}
		rep.splitChecked++
		if prs.AfterScale != h.split {
			rep.splitBad++
			errs = append(errs, fmt.Sprintf("replicaSets[%s].afterScale = %d, the deployment controller's split set %d", prs.Name, prs.AfterScale, h.split))
		}
		switch {
		case allCertain:
			rep.finalChecked++
			if prs.Final != h.final {
				rep.finalBad++
				errs = append(errs, fmt.Sprintf("replicaSets[%s].final = %d, the controllers ended at %d", prs.Name, prs.Final, h.final))
			}
		case prs.Final != h.final:
			t.Logf("  NOTE (uncertain prediction, not checked): replicaSets[%s].final = %d, the controllers ended at %d", prs.Name, prs.Final, h.final)
		}
	}
	observed := map[string]string{}
	for _, h := range hs {
		for _, n := range h.deletedScale {
			observed[n] = stepScale
		}
		for _, n := range h.deletedRoll {
			observed[n] = stepRollout
		}
		for _, n := range h.deletedMerged {
			observed[n] = stepMerged
		}
		if want := h.before - h.split; h.splitRV != 0 && len(h.deletedMerged) == 0 && int32(len(h.deletedScale)) != want && r.sc.terminate == nil {
			t.Logf("  NOTE: %s lost %d pods to the split's sync, its size went down by %d", h.name, len(h.deletedScale), want)
		}
	}
	// A pod of an open choice (contenders[].pods) can be certain to die
	// while chance decides whether the split or the rollout kills it (a
	// tie cut by the split, the rest taken by the rollout): its step is
	// not checked.
	inGroup := map[string]bool{}
	for _, g := range p.Contenders {
		for _, n := range g.Pods {
			inGroup[n] = true
		}
	}
	for _, pp := range p.Pods {
		if inGroup[pp.Name] && pp.Certain && pp.ContenderGroup == nil {
			t.Logf("  CONTRACT NOTE: %s is in an open choice (contenders[].pods) but has no contenderGroup, and is certain (fate %s, step %q, p=%v)",
				pp.Name, pp.Fate, pp.Step, deref(pp.DeleteProbability))
			for gi, g := range p.Contenders {
				if !slices.Contains(g.Pods, pp.Name) {
					continue
				}
				t.Logf("    contenders[%d]: %s, %d of %v go", gi, g.Rule, g.Delete, g.Pods)
				for _, n := range g.Pods {
					if q := p.pod(n); q != nil {
						t.Logf("      %s: fate %s, certain %v, p=%v, step %q, contenderGroup %v; the controllers: %q",
							n, q.Fate, q.Certain, deref(q.DeleteProbability), q.Step, deref(q.ContenderGroup), observed[n])
					}
				}
			}
		}
		if pp.Fate != "delete" || !pp.Certain {
			continue
		}
		if inGroup[pp.Name] {
			rep.stepUnverifiable++
			t.Logf("  step of %s not checked: it is in an open choice (plugin says %q, the controllers %q)", pp.Name, pp.Step, observed[pp.Name])
			continue
		}
		got, ok := observed[pp.Name]
		if !ok {
			continue // not deleted: compare() reports it
		}
		if pp.Step == "scale-or-rollout" {
			// Certain to die; a tie decides which step kills it.
			rep.stepUnverifiable++
			continue
		}
		if pp.Step != stepScale && pp.Step != stepRollout {
			rep.stepChecked++
			rep.stepBad++
			errs = append(errs, fmt.Sprintf("victim %s has step %q, want scale or rollout", pp.Name, pp.Step))
			continue
		}
		if got == stepMerged || got == "?" {
			rep.stepUnverifiable++
			continue
		}
		rep.stepChecked++
		if got != pp.Step {
			rep.stepBad++
			errs = append(errs, fmt.Sprintf("victim %s: step %q, but the controllers deleted it in the %s step", pp.Name, pp.Step, got))
		}
	}
	switch {
	case allCertain:
		rep.createsChecked++
		if p.Creates != len(r.created) {
			rep.createsBad++
			errs = append(errs, fmt.Sprintf("creates = %d, the controllers created %d pods after the scale (%v)", p.Creates, len(r.created), r.created))
		}
	case p.Creates != len(r.created):
		t.Logf("  NOTE (uncertain prediction, not checked): creates = %d, the controllers created %d pods", p.Creates, len(r.created))
	}
	env.stats.addSteps(r.sc.name, rep)
	if len(errs) > 0 {
		t.Errorf("plugin's Deployment story disagrees with the controllers:\n  %s", strings.Join(errs, "\n  "))
		return
	}
	t.Logf("  ROLLOUT STORY OK: split %d/%d, final %d/%d, steps %d/%d (+%d unverifiable), creates %d/%d",
		rep.splitChecked-rep.splitBad, rep.splitChecked, rep.finalChecked-rep.finalBad, rep.finalChecked,
		rep.stepChecked-rep.stepBad, rep.stepChecked, rep.stepUnverifiable, rep.createsChecked-rep.createsBad, rep.createsChecked)
}

// ---------------------------------------------------------------- named mid-rollout scenarios

// rsPath is a ReplicaSet's spec.replicas before the scale, after the split
// and at the end, as the real controllers must set them.
type rsPath struct{ before, split, final int32 }

// expectRollout checks the real controllers' story of a two-ReplicaSet
// Deployment (old = lower revision): the sizes, how many pods each step
// deleted, and how many pods were created after the scale.
func expectRollout(old, new rsPath, rolloutDeletes, creates int) func(r *scenarioRun) error {
	return func(r *scenarioRun) error {
		hs := r.rsHistories()
		var byRev []*rsHistory
		for _, h := range hs {
			byRev = append(byRev, h)
		}
		sort.Slice(byRev, func(i, j int) bool { return byRev[i].revision < byRev[j].revision })
		if len(byRev) != 2 {
			return fmt.Errorf("%d ReplicaSets, want 2 (old, new)", len(byRev))
		}
		var errs []string
		for i, want := range []rsPath{old, new} {
			h := byRev[i]
			if got := (rsPath{h.before, h.split, h.final}); got != want {
				errs = append(errs, fmt.Sprintf("%s: %d -> %d -> %d, want %d -> %d -> %d", h.name, got.before, got.split, got.final, want.before, want.split, want.final))
			}
		}
		roll, merged := 0, 0
		for _, h := range byRev {
			roll += len(h.deletedRoll)
			merged += len(h.deletedMerged)
		}
		if merged == 0 && roll != rolloutDeletes {
			errs = append(errs, fmt.Sprintf("the rollout after the split deleted %d pods, want %d", roll, rolloutDeletes))
		}
		if len(r.created) != creates {
			errs = append(errs, fmt.Sprintf("%d pods created after the scale (%v), want %d", len(r.created), r.created, creates))
		}
		if len(errs) > 0 {
			return fmt.Errorf("%s", strings.Join(errs, "; "))
		}
		return nil
	}
}

func readyStates(n int, nodes ...string) []podState {
	var out []podState
	for i := 0; i < n; i++ {
		// Ready times far apart (whole days, distinct log2 buckets mostly).
		out = append(out, running(nodes[i%len(nodes)], time.Duration(3+7*i)*day))
	}
	return out
}

func rolloutScenarios() []*scenario {
	surge2unavail1 := func(sc *scenario) *scenario {
		sc.maxSurge, sc.maxUnavailable = ptrTo(intstr.FromInt32(2)), ptrTo(intstr.FromInt32(1))
		return sc
	}
	return []*scenario{
		// rolling.go, after the scale: maxSurge 2, maxUnavailable 1, 10 replicas mid-rollout
		// at old/new 9/3 with the new pods not ready; scale to 3. The
		// split gives 4/1 (9*5/12 -> 4, 3*5/12 -> 1); the rollout then
		// shrinks the old ReplicaSet to 2 (2 more deletions, more than
		// the split's share) and brings the new one back to 3 (2 created).
		surge2unavail1(&scenario{
			name: "rollout-spec-3.5-10to3", kind: kindDeployment, replicas: 10, target: 3,
			states:      readyStates(10, "node-a", "node-b", "node-c"),
			rollout:     true,
			extraStates: []podState{notReady("node-a"), notReady("node-b"), pending("")},
			expect:      expectRollout(rsPath{9, 4, 2}, rsPath{3, 1, 3}, 2, 2),
		}),
		// maxSurge 0, maxUnavailable 1, 3 replicas at old/new 2/1 (new pod
		// not ready); scale to 1. Split 1/0, then the rollout deletes the
		// last old pod and creates a new one: old 2 -> 1 -> 0, new 1 -> 0 -> 1.
		{
			name: "rollout-surge0-3to1", kind: kindDeployment, replicas: 3, target: 1,
			maxSurge: ptrTo(intstr.FromInt32(0)), maxUnavailable: ptrTo(intstr.FromInt32(1)),
			states:      readyStates(3, "node-a", "node-b"),
			rollout:     true,
			extraStates: []podState{notReady("node-a")},
			expect:      expectRollout(rsPath{2, 1, 0}, rsPath{1, 0, 1}, 1, 1),
		},
		// The §3.5 Deployment, paused: the scale still splits (4/1), the
		// rollout does not continue: 7 deletions, all by the split, none
		// created.
		surge2unavail1(&scenario{
			name: "rollout-paused-10to3", kind: kindDeployment, replicas: 10, target: 3,
			states:      readyStates(10, "node-a", "node-b", "node-c"),
			rollout:     true,
			paused:      true,
			extraStates: []podState{notReady("node-a"), notReady("node-b"), pending("")},
			expect:      expectRollout(rsPath{9, 4, 4}, rsPath{3, 1, 1}, 0, 0),
		}),
		// Percentages (25%/25% of 8: surge 2, unavailable 2), new pods
		// mixed: one ready, one not ready, one unbound. Only the
		// plugin-vs-controllers checks apply.
		{
			name: "rollout-25pct-8to3", kind: kindDeployment, replicas: 8, target: 3,
			maxSurge: ptrTo(intstr.FromString("25%")), maxUnavailable: ptrTo(intstr.FromString("25%")),
			states:      readyStates(8, "node-a", "node-b"),
			rollout:     true,
			extraStates: []podState{running("node-c", 2*time.Hour), notReady("node-a"), pending(""), notReady("node-b"), pending("")},
			expect:      expectSomethingDeleted,
		},
	}
}

// shortRollouts run with -short.
var shortRollouts = []string{"rollout-spec-3.5-10to3"}

// TestRolloutScenarios: Deployments scaled in mid-rollout, where the
// rollout that continues after the proportional split deletes more pods
// (and creates some). Besides the usual plugin-vs-controllers checks, each
// victim's step and the ReplicaSets' sizes are compared (checkRollout).
func TestRolloutScenarios(t *testing.T) {
	for _, sc := range rolloutScenarios() {
		t.Run(sc.name, func(t *testing.T) {
			if testing.Short() && !slices.Contains(shortRollouts, sc.name) {
				t.Skip("not in the -short set")
			}
			r := newRun(sc)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			_ = r.prepare(ctx) // errors are reported by run
			r.run(t)
		})
	}
}
