package workload

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/scale-preview/scale-preview/pkg/deployment"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// maxSyncs bounds the simulated deployment syncs; a rollout at fixed
// availability settles in a few.
const maxSyncs = 50

// depRS is one ReplicaSet of the Deployment during the simulation.
type depRS struct {
	rs      *appsv1.ReplicaSet
	like    rsLike
	before  int32
	after   int32 // after the scale step
	scaled  bool
	created int64 // pods the controller creates for it (counted, not built)
	// createdGone: created pods deleted again within the simulation.
	createdGone int64
	deleted     int
	last        *rsRun // the latest resize, for listing survivors
}

func (r *depRS) hasAfter() bool { return r.after != r.before }

// depSim is one run of the Deployment model under one interleaving of the
// controllers (the choices come from sched). It is pure: the snapshot is
// copied, the reference time comes from the options.
type depSim struct {
	d     *appsv1.Deployment
	o     Options
	sched *schedule
	pred  *prediction.Prediction
	work  snapshot.Snapshot
	rss   []*depRS
	state []deployment.ReplicaSet
	ds    deployment.Deployment
	// gone: pods deleted so far in the simulation.
	gone map[string]bool
	// stale: the availability each ReplicaSet's status still reports
	// until its controller has seen its own deletions.
	stale []int32
	// writeOrder: the ReplicaSets the last sync shrank, in the order it
	// wrote them.
	writeOrder []int
	ordered    []prediction.Pod
	certain    bool
	// syncNo counts the syncs that changed something; plan is what a
	// first run under the default choices did at each of them (the
	// lookahead for shrinks that race the next sync's), and trace records
	// this run's.
	syncNo int
	plan   []syncTrace
	trace  []syncTrace
	// futures: the syncs after the scale under each reading of the
	// statuses, for the next resize of a shrinking ReplicaSet (nextTarget).
	futures futures
	// neededFresh: ReplicaSets whose fresh status this sync's decision
	// needed (they had ranked and deleted before it).
	neededFresh map[string]bool
	// realized: pods whose open group became a choice (and its reason);
	// unrealized: an open group was left to its chances because nothing
	// after it was expected; partial: some outcomes were not followed.
	realized   map[string]string
	unrealized bool
	partial    bool
	// memo: runs and claims shared with the exploration's other
	// simulations (nil: each one computed afresh).
	memo *runMemo
	// podHint: the pods the ReplicaSets claim, room for the pods listed
	// (growing the list by appends cost much of the allocation).
	podHint int
	// nodes: each pod's node, when no memo holds it (nodeOf).
	nodes map[string]string
	// unchecked: a shrink had too many partial views to try.
	unchecked bool
	// partly: each shrink's chances and those of each partial view of its
	// siblings' deletions that differs (partialViews).
	partly []partialView
}

// syncTrace is what one deployment sync shrank: each ReplicaSet's target
// and its victims.
type syncTrace struct {
	to          map[string]int32
	victims     map[string][]string
	neededFresh map[string]bool
}

// newDepSim finds the Deployment and its ReplicaSets and sets the
// controller's view before the scale.
func newDepSim(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, o Options, sched *schedule, memo *runMemo) (*depSim, error) {
	d := findNamed(s.Deployments, ref)
	if d == nil {
		return nil, &NotFoundError{Ref: ref}
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("deployment %s has an invalid selector: %v", d.Name, err)
	}
	o.joint = true
	sim := &depSim{d: d, o: o, sched: sched, gone: map[string]bool{}, certain: true, realized: map[string]string{}, memo: memo,
		pred: newPrediction(ref, replicasOf(d.Spec.Replicas), replicas, o)}
	sim.collectReplicaSets(s, sel)
	// A private copy of the snapshot: adopted ReplicaSets carry their new
	// ownerRef.
	sim.work = *s
	sim.work.ReplicaSets = nil
	for _, r := range sim.rss {
		sim.work.ReplicaSets = append(sim.work.ReplicaSets, r.rs)
	}
	sim.work.Pods = slices.Clone(s.Pods)
	sim.initialState(replicas)
	for _, r := range sim.rss {
		c := sim.claim(r)
		sim.podHint += len(c.active) + len(c.terminating) + len(c.foreign) + len(c.released)
	}
	return sim, nil
}

// collectReplicaSets: the ReplicaSets the Deployment controls, or orphans
// it adopts, by name.
func (sim *depSim) collectReplicaSets(s *snapshot.Snapshot, sel labels.Selector) {
	d := sim.d
	for _, rs := range s.ReplicaSets {
		if rs.Namespace != d.Namespace {
			continue
		}
		c := metav1.GetControllerOf(rs)
		owned := c != nil && c.UID == d.UID
		orphan := c == nil && rs.Spec.Selector != nil && sel.Matches(labels.Set(rs.Spec.Template.Labels)) && rs.DeletionTimestamp == nil
		if !owned && !orphan {
			continue
		}
		if orphan {
			// Adoption sets this ownerRef; ranks then see the siblings.
			rs = rs.DeepCopy()
			rs.OwnerReferences = append(rs.OwnerReferences, *metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment")))
			sim.pred.Warnings = append(sim.pred.Warnings, fmt.Sprintf("ReplicaSet %s is an orphan matching the selector: the Deployment adopts it", rs.Name))
		}
		r := &depRS{rs: rs, like: fromRS(rs), before: replicasOf(rs.Spec.Replicas)}
		r.after = r.before
		sim.rss = append(sim.rss, r)
	}
	sort.Slice(sim.rss, func(i, j int) bool { return sim.rss[i].rs.Name < sim.rss[j].rs.Name })
}

// initialState is what the deployment controller reads before the scale.
func (sim *depSim) initialState(replicas int32) {
	d := sim.d
	switch {
	case sim.memo != nil && sim.memo.initial != nil:
		// The same in every simulation of the exploration.
		sim.state = slices.Clone(sim.memo.initial)
	case sim.memo != nil:
		sim.initialReplicaSets()
		sim.memo.initial = slices.Clone(sim.state)
	default:
		sim.initialReplicaSets()
	}
	sim.ds = deployment.Deployment{
		Replicas: replicas, StatusReplicas: d.Status.Replicas, Strategy: string(d.Spec.Strategy.Type), Paused: d.Spec.Paused,
		NewReplicaSetName: d.Name + "-<new>", NewReplicaSetCreated: sim.o.Now,
	}
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		sim.ds.MaxSurge, sim.ds.MaxUnavailable = ru.MaxSurge, ru.MaxUnavailable
	}
}

// initialReplicaSets is each ReplicaSet as the controller reads it.
func (sim *depSim) initialReplicaSets() {
	d := sim.d
	sim.state = make([]deployment.ReplicaSet, len(sim.rss))
	for i, r := range sim.rss {
		c := sim.claim(r)
		sim.state[i] = deployment.ReplicaSet{
			Name: r.rs.Name, UID: string(r.rs.UID), Created: r.rs.CreationTimestamp.Time,
			Replicas: r.before, Available: available(c.active, d.Spec.MinReadySeconds, sim.o.Now, sim.gone),
			StatusReplicas: r.rs.Status.Replicas, RunningPods: int32(len(c.active) + len(c.terminating)),
			DesiredAnnotation: r.rs.Annotations[deployment.DesiredReplicasAnnotation],
			MaxAnnotation:     r.rs.Annotations[deployment.MaxReplicasAnnotation],
			New:               equalIgnoreHash(&r.rs.Spec.Template, &d.Spec.Template),
		}
	}
}

func (sim *depSim) claim(r *depRS) claimed {
	if sim.memo != nil {
		return sim.memo.claim(sim, r)
	}
	return claim(sim.work.Pods, sim.d.Namespace, string(r.rs.UID), r.like.selector)
}

// runRS runs r's ReplicaSet controller on the candidates c.
func (sim *depSim) runRS(r *depRS, c claimed, replicas int32, gone map[string]bool) rsRun {
	if sim.memo != nil {
		return sim.memo.run(sim, r, c, replicas, gone)
	}
	return runReplicaSet(&sim.work, r.like, c, replicas, sim.o, gone)
}

// sharedRS is runRS for a caller that does not change the result.
func (sim *depSim) sharedRS(r *depRS, c claimed, replicas int32, gone map[string]bool) rsRun {
	if sim.memo != nil {
		return sim.memo.shared(sim, r, c, replicas, gone)
	}
	return runReplicaSet(&sim.work, r.like, c, replicas, sim.o, gone)
}

// run simulates the scale and the rollout syncs after it.
func (sim *depSim) run() *prediction.Prediction {
	d, pred := sim.d, sim.pred
	if sim.ds.Replicas == pred.CurrentReplicas || d.DeletionTimestamp != nil {
		pred.Message = fmt.Sprintf("no change (%d replicas): no pod would be deleted by the scale", pred.CurrentReplicas)
		if d.DeletionTimestamp != nil {
			pred.Message = fmt.Sprintf("Deployment %s is being deleted: its controller no longer scales; no pod would be deleted", d.Name)
		}
		sim.listSurvivors()
		return pred
	}
	for i := 0; i < maxSyncs; i++ {
		if !sim.syncOnce() {
			break
		}
	}
	sim.finish()
	return pred
}

// syncOnce is one deployment sync and the ReplicaSet syncs it causes.
// It reports whether the sync changed anything.
func (sim *depSim) syncOnce() bool {
	next, changes := sim.deploymentSync()
	if len(changes) == 0 {
		// A scale that changes no size still writes the annotations: the
		// next sync is then a rollout, which may well act.
		moved := annotationsMoved(sim.state, next)
		sim.state = next
		return moved
	}
	sim.trackNewReplicaSets(next)
	shrinks := sim.applyChanges(changes)
	sim.runShrinks(shrinks)
	sim.writeOrder = sim.writeOrder[:0]
	for _, sh := range shrinks {
		if !slices.Contains(sim.writeOrder, sh.i) {
			sim.writeOrder = append(sim.writeOrder, sh.i)
		}
	}
	for _, ch := range changes {
		if ch.Error == "" && ch.To > ch.From {
			// A grow is in the plan too: it may overtake an earlier shrink.
			sim.trace[len(sim.trace)-1].to[ch.ReplicaSet] = ch.To
		}
	}
	sim.syncNo++
	sim.stale = make([]int32, len(sim.rss))
	for i := range sim.rss {
		sim.stale[i] = next[i].Available
	}
	sim.refreshAvailability(next)
	shrunk := sim.trace[len(sim.trace)-1].victims
	for i, r := range sim.rss {
		if len(shrunk[r.rs.Name]) == 0 {
			// Only a ReplicaSet that deleted in this sync writes a status
			// from before its deletions; a stale view read by this sync
			// does not outlive it.
			sim.stale[i] = next[i].Available
		}
	}
	for i, r := range sim.rss {
		if r.scaled && !r.hasAfter() {
			r.after = next[i].Replicas
		}
	}
	sim.state = next
	return true
}

// deploymentSync runs the deployment controller once. Right after a sync
// that deleted available pods, each shrunk ReplicaSet's status still
// counts them: its controller writes the status it computed before its
// deletions, and a fresh one only once it has seen them go. The
// deployment controller syncs again right after its own writes, so it
// reads the stale statuses first. The fresh ones then land back to back,
// in the order the ReplicaSets were written; the first wakes the
// deployment controller, whose sync then writes its own status (the
// replica count changed) while the others land. So it mostly reads one
// fresh status, then all of them. Reading each one in turn, another order,
// or all fresh at once are the other choices. It acts on the first view
// that makes it act.
func (sim *depSim) deploymentSync() ([]deployment.ReplicaSet, []deployment.Change) {
	v := deployment.Version(sim.o.Rules.Minor)
	next, changes := deployment.Sync(sim.ds, sim.state, v)
	sim.neededFresh = nil
	var staleIdx []int
	for i := range sim.stale {
		if i < len(sim.state) && sim.stale[i] != sim.state[i].Available {
			staleIdx = append(staleIdx, i)
		}
	}
	if len(staleIdx) == 0 || len(staleIdx) > 3 {
		return next, changes
	}
	// The write order: the ReplicaSets' own controllers see their deletions
	// go, and write fresh statuses, in that order.
	slices.SortStableFunc(staleIdx, func(a, b int) int {
		return cmp.Compare(writePos(sim.writeOrder, a), writePos(sim.writeOrder, b))
	})
	type view struct {
		next    []deployment.ReplicaSet
		changes []deployment.Change
		at      []func(t *timing) float64 // summed
		label   string
		fresh   map[string]bool
	}
	// Which statuses had to be fresh for the sync to act: those
	// ReplicaSets have ranked and deleted before it.
	allFresh := map[string]bool{}
	for _, i := range staleIdx {
		allFresh[sim.state[i].Name] = true
	}
	views := []view{{next, changes, []func(t *timing) float64{func(t *timing) float64 { return t[raceFreshAtOnce] }}, "statuses fresh at once", allFresh}}
	otherOrder := raceOtherOrderOldFirst
	if sim.state[staleIdx[0]].New {
		otherOrder = raceOtherOrderNewFirst
	}
	if len(staleIdx) == 3 {
		otherOrder = raceOtherOrderOfThree
	}
	for _, sq := range freshSequences(len(staleIdx), otherOrder) {
		n, ch, fresh := sim.firstActingView(staleIdx, sq.steps, v)
		merged := false
		for k := range views {
			if sameChanges(views[k].changes, ch) {
				views[k].at = append(views[k].at, sq.at)
				if len(fresh) < len(views[k].fresh) {
					views[k].fresh = fresh
				}
				merged = true
				break
			}
		}
		if !merged {
			views = append(views, view{n, ch, []func(t *timing) float64{sq.at}, sq.label, fresh})
		}
	}
	if len(views) == 1 {
		sim.neededFresh = views[0].fresh
		return next, changes
	}
	opts := make([]option, len(views))
	for i, vw := range views {
		parts := vw.at
		opts[i] = timed(vw.label, func(t *timing) float64 {
			w := 0.0
			for _, f := range parts {
				w += f(t)
			}
			return w
		})
	}
	pick := views[sim.sched.chooseStatus(opts)]
	sim.neededFresh = pick.fresh
	return pick.next, pick.changes
}

// writePos is i's place in the order the last sync wrote the ReplicaSets
// (after every written one if it was not written).
func writePos(order []int, i int) int {
	if p := slices.Index(order, i); p >= 0 {
		return p
	}
	return len(order) + i
}

// firstActingView walks the views from every status stale to every status
// fresh, turning them fresh a step at a time (steps index staleIdx), and
// returns the first sync that changes a size (the last one otherwise). The
// availability carried on is the fresh one.
func (sim *depSim) firstActingView(staleIdx []int, steps [][]int, v deployment.Version) ([]deployment.ReplicaSet, []deployment.Change, map[string]bool) {
	stale := make([]bool, len(staleIdx))
	for i := range stale {
		stale[i] = true
	}
	fresh := map[string]bool{}
	for step := 0; ; step++ {
		st := slices.Clone(sim.state)
		for b, i := range staleIdx {
			if stale[b] {
				st[i].Available = sim.stale[i]
			}
		}
		n, ch := deployment.Sync(sim.ds, st, v)
		if acts(ch) || step == len(steps) {
			for i := range n {
				if i < len(sim.state) {
					n[i].Available = sim.state[i].Available
				}
			}
			return n, ch, fresh
		}
		for _, b := range steps[step] {
			stale[b] = false
			fresh[sim.state[staleIdx[b]].Name] = true
		}
	}
}

func annotationsMoved(before, after []deployment.ReplicaSet) bool {
	if len(before) != len(after) {
		return true
	}
	for i := range before {
		if before[i].DesiredAnnotation != after[i].DesiredAnnotation || before[i].MaxAnnotation != after[i].MaxAnnotation {
			return true
		}
	}
	return false
}

func acts(ch []deployment.Change) bool {
	for _, c := range ch {
		if c.Error == "" {
			return true
		}
	}
	return false
}

func sameChanges(a, b []deployment.Change) bool {
	return slices.EqualFunc(a, b, func(x, y deployment.Change) bool {
		return x.ReplicaSet == y.ReplicaSet && x.To == y.To && (x.Error == "") == (y.Error == "")
	})
}

// trackNewReplicaSets adds the ReplicaSet a rollout creates, with no pods.
// Its selector carries its own pod-template-hash, as the controller's does,
// so it never claims existing pods.
func (sim *depSim) trackNewReplicaSets(next []deployment.ReplicaSet) {
	d := sim.d
	for len(next) > len(sim.state) {
		ns := next[len(sim.state)]
		sel := d.Spec.Selector.DeepCopy()
		if sel == nil {
			sel = &metav1.LabelSelector{}
		}
		sel = metav1.AddLabelToSelector(sel, appsv1.DefaultDeploymentUniqueLabelKey, "scale-preview-new")
		tmpl := *d.Spec.Template.DeepCopy()
		tmpl.Labels = maps.Clone(tmpl.Labels)
		if tmpl.Labels == nil {
			tmpl.Labels = map[string]string{}
		}
		tmpl.Labels[appsv1.DefaultDeploymentUniqueLabelKey] = "scale-preview-new"
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: ns.Name, Namespace: d.Namespace, UID: types.UID("new-rs-" + ns.Name),
			CreationTimestamp: metav1.NewTime(sim.o.Now), OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
			Spec: appsv1.ReplicaSetSpec{Replicas: new(int32), Selector: sel, Template: tmpl}}
		sim.rss = append(sim.rss, &depRS{rs: rs, like: fromRS(rs)})
		sim.work.ReplicaSets = append(sim.work.ReplicaSets, rs)
		sim.state = append(sim.state, deployment.ReplicaSet{Name: ns.Name, New: true})
	}
}

// shrink is one ReplicaSet's scale-down in a sync.
type shrink struct {
	i    int
	step string
	to   int32
}

// applyChanges applies growths (counted) and returns the shrinks in the
// order the deployment controller writes them.
func (sim *depSim) applyChanges(changes []deployment.Change) []shrink {
	var out []shrink
	for _, ch := range changes {
		if ch.Error != "" {
			sim.pred.Warnings = append(sim.pred.Warnings, fmt.Sprintf("the deployment controller's update of %s fails: %s", ch.ReplicaSet, ch.Error))
			continue
		}
		i := indexOf(sim.rss, ch.ReplicaSet)
		if i < 0 {
			continue
		}
		r := sim.rss[i]
		if sim.isSplit(ch.Step) {
			r.scaled = true
		}
		if ch.To > ch.From {
			n := sim.grow(r, int64(ch.To-ch.From))
			sim.pred.Creates += int(n)
			continue
		}
		out = append(out, shrink{i, ch.Step, ch.To})
	}
	return out
}

// shrinkRun: one shrink's run in a sync, and what its partial views
// start from.
type shrinkRun struct {
	run        rsRun
	unrealized rsRun // before its open groups were realized
	before     depRS // the ReplicaSet before this shrink
	to         int32 // the size it sorts for (two steps if merged)
	late       bool  // may rank after the next sync's deletions
}

// addPartialViews: the deletions shrink k may see in part (its siblings'
// and, if it may rank late, the next sync's) give its partial views.
func (sim *depSim) addPartialViews(k int, shrinks []shrink, done []shrinkRun, later []string) {
	d := &done[k]
	var others []string
	for j := range shrinks {
		if j != k {
			others = append(others, done[j].run.victims...)
		}
	}
	if d.late {
		others = append(others, later...)
	}
	r := sim.rss[shrinks[k].i]
	seen := sim.gone
	if prev := sim.earlierVictims(r.rs.Name); len(prev) > 0 {
		seen = maps.Clone(sim.gone)
		for _, n := range prev {
			delete(seen, n)
		}
		others = append(others, prev...)
	}
	if len(others) == 0 {
		return
	}
	alts := sim.partialViews(r, d.to, seen, others, d.unrealized, d.before)
	if len(alts) == 0 {
		return
	}
	base := chances(d.unrealized.pods)
	for _, alt := range alts {
		sim.partly = append(sim.partly, partialView{base, alt, weightPartlyVisible / float64(len(alts))})
	}
}

// runShrinks picks each shrinking ReplicaSet's victims. Shrinks written in
// one sync run concurrently in the ReplicaSet controller: which of the
// others' victims each one's ranks see gone is a choice (visibility).
func (sim *depSim) runShrinks(shrinks []shrink) {
	sees, order := sim.chooseVisibility(len(shrinks))
	if sim.unrealized {
		// An earlier open group was left to its chances, and yet another
		// step follows that may depend on it.
		sim.partial = true
	}
	done := make([]shrinkRun, len(shrinks))
	tr := syncTrace{to: map[string]int32{}, victims: map[string][]string{}, neededFresh: sim.neededFresh}
	later, after := sim.laterVictims(shrinks)
	for _, k := range order {
		sh, d := shrinks[k], &done[k]
		r := sim.rss[sh.i]
		view := maps.Clone(sim.gone)
		for j := range shrinks {
			if sees[k][j] {
				for _, n := range done[j].run.victims {
					view[n] = true
				}
			}
		}
		d.to = sh.to
		if b, ok := sim.nextTarget(r.rs.Name, sh.to); ok {
			d.to = b // one ReplicaSet sync takes both steps with one sort
		}
		if d.late = sim.mayRankLate(r.rs.Name); d.late && after {
			for _, n := range later {
				view[n] = true
			}
		}
		d.before = *r
		d.run = sim.shrinkOne(r, d.to, view)
		d.unrealized = d.run
		sim.realizeOpen(r, &d.run, sim.laterSteps(k, order, sees))
	}
	for _, k := range order {
		sim.addPartialViews(k, shrinks, done, later)
	}
	for k, sh := range shrinks {
		tr.to[sim.rss[sh.i].rs.Name] = sh.to
		tr.victims[sim.rss[sh.i].rs.Name] = done[k].run.victims
	}
	sim.trace = append(sim.trace, tr)
	for k, sh := range shrinks {
		sim.record(sim.rss[sh.i], sh.step, done[k].run)
	}
}

// nextTarget: the next syncs resize the same ReplicaSet again (in some
// known future). Its controller may not have synced in between, and then
// takes both steps in one sort, or, when the next step grows it back, sees
// only the final size and deletes less or nothing: a choice. Each future's
// next size is an option of its own: a status read stale lets the rollout
// go further, and a controller that has not synced yet leaves its status
// stale.
func (sim *depSim) nextTarget(rs string, to int32) (int32, bool) {
	// The syncs of a rollout follow each other within milliseconds: the
	// next resize may come one or two syncs later.
	fut := sim.futures
	if fut == nil && sim.plan != nil {
		fut = futures{{sim.plan, 1}}
	}
	sizes, shares := fut.nextSizes(sim.syncNo, rs)
	grows, shrinks := 0, 0
	for k, b := range sizes {
		switch {
		case b > to:
			grows++
		case b < to:
			shrinks++
		default:
			shares[k] = 0
		}
	}
	if grows+shrinks == 0 {
		return 0, false
	}
	base := "synced before the grow"
	if grows == 0 {
		base = "one sort per step"
	}
	var weights []func(t *timing) float64
	var targets []int32
	var opts []option
	for k, b := range sizes {
		if b == to {
			continue
		}
		r, label, share := raceMerged, "steps merged in one sort", shares[k]
		if b > to {
			r, label = raceOvertaken, "overtaken by the grow"
		}
		if grows+shrinks > 1 {
			label += fmt.Sprintf(" to %d", b)
		}
		w := func(t *timing) float64 { return t[r] * share }
		weights = append(weights, w)
		opts = append(opts, timed(label, w))
		targets = append(targets, b)
	}
	opts = slices.Insert(opts, 0, timed(base, func(t *timing) float64 {
		left := 1.0
		for _, w := range weights {
			left -= w(t)
		}
		return left
	}))
	if c := sim.sched.choose(opts); c > 0 {
		return targets[c-1], true
	}
	return 0, false
}

// mayRankLate: rs may rank only after the next sync's deletions. Only a
// ReplicaSet that also shrank in the previous sync waits (until its
// controller has seen those deletions), and only if the next sync (per the
// plan) did not need its fresh status to act.
func (sim *depSim) mayRankLate(rs string) bool {
	needed := sim.syncNo+1 < len(sim.plan) && sim.plan[sim.syncNo+1].neededFresh[rs]
	return sim.shrankBefore(rs) && !needed
}

// shrankBefore: rs deleted pods in the previous sync.
func (sim *depSim) shrankBefore(rs string) bool {
	return sim.syncNo > 0 && sim.syncNo-1 < len(sim.trace) && len(sim.trace[sim.syncNo-1].victims[rs]) > 0
}

// laterVictims: the next sync shrinks other ReplicaSets (per the plan),
// whose victims may already be terminating when these ones rank: a choice
// (after), the victims returned either way, for the partial views. Not
// those of a ReplicaSet that also shrank in the previous sync: its
// controller first waits to see those deletions, as the late one does, and
// then still needs the next sync's resize, so it comes second (0 of 50
// runs, against about half when it could act at once).
func (sim *depSim) laterVictims(shrinks []shrink) (victims []string, after bool) {
	if sim.syncNo+1 >= len(sim.plan) {
		return nil, false
	}
	var out []string
	for rs, vs := range sim.plan[sim.syncNo+1].victims {
		if !slices.ContainsFunc(shrinks, func(sh shrink) bool { return sim.rss[sh.i].rs.Name == rs }) && !sim.shrankBefore(rs) {
			out = append(out, vs...)
		}
	}
	slices.Sort(out)
	if len(out) == 0 || !slices.ContainsFunc(shrinks, func(sh shrink) bool { return sim.mayRankLate(sim.rss[sh.i].rs.Name) }) {
		return nil, false
	}
	after = sim.sched.choose(yesNo(raceSeesNextSync, "ranked before the next sync's deletions", "ranked after the next sync's deletions")) == 1
	return out, after
}

// earlierVictims: the previous sync's victims in ReplicaSets other than rs
// whose deletions rs's controller may not have seen yet when it ranks.
// Nothing waits for them unless this sync needed that ReplicaSet's fresh
// status: the next resize can follow within milliseconds (a new
// ReplicaSet above the new size shrinks at once), while the sibling's
// delete calls are still in flight.
func (sim *depSim) earlierVictims(rs string) []string {
	if sim.syncNo == 0 || sim.syncNo-1 >= len(sim.trace) {
		return nil
	}
	var out []string
	for name, vs := range sim.trace[sim.syncNo-1].victims {
		if name != rs && !sim.neededFresh[name] {
			out = append(out, vs...)
		}
	}
	slices.Sort(out)
	return out
}

// isSplit: a change of the scale's own sync. scale() also runs in later
// syncs (a paused Deployment, or old ReplicaSets scaled to 0 once the new
// one is saturated, which needs its status after the split): those are
// follow-up steps.
func (sim *depSim) isSplit(step string) bool {
	return step == deployment.StepScale && sim.syncNo == 0
}

// record merges one ReplicaSet run into the prediction.
func (sim *depSim) record(r *depRS, changeStep string, run rsRun) {
	pred := sim.pred
	r.last = &run
	if !run.certain {
		sim.certain = false
	}
	pred.StableUntil = earliest(pred.StableUntil, run.stableUntil)
	for _, g := range run.contenders {
		g.ReplicaSet = r.rs.Name
		pred.Contenders = append(pred.Contenders, g)
	}
	pred.Warnings = append(pred.Warnings, run.warnings...)
	step := prediction.StepRollout
	if sim.isSplit(changeStep) {
		step = prediction.StepScale
	}
	for _, pp := range run.pods {
		// Created pods deleted again are counted by shrinkOne; they are
		// not existing pods.
		if pp.Fate != prediction.FateDelete || sim.gone[pp.Name] || isCreated(pp.Name) {
			continue
		}
		sim.gone[pp.Name] = true
		r.deleted++
		pp.Step, pp.ReplicaSet = step, r.rs.Name
		if sim.ordered == nil {
			sim.ordered = make([]prediction.Pod, 0, sim.podHint)
		}
		sim.ordered = append(sim.ordered, pp)
	}
}

// refreshAvailability: availability after the deletions, at fixed pod health.
func (sim *depSim) refreshAvailability(next []deployment.ReplicaSet) {
	for i, r := range sim.rss {
		c := sim.claim(r)
		next[i].Available = available(c.active, sim.d.Spec.MinReadySeconds, sim.o.Now, sim.gone)
		next[i].RunningPods = int32(countNotGone(c.active, sim.gone)+len(c.terminating)) + int32(min(r.created, 1<<30))
	}
}

// finish lists the ReplicaSet sizes, the victims in order and the survivors.
func (sim *depSim) finish() {
	pred, d := sim.pred, sim.d
	for i, r := range sim.rss {
		if !r.scaled {
			r.after = r.before
		}
		pred.ReplicaSets = append(pred.ReplicaSets, prediction.ReplicaSetStep{
			Name: r.rs.Name, New: sim.state[i].New, Before: r.before, AfterScale: r.after, Final: sim.state[i].Replicas,
			Deleted: r.deleted, Created: int(min(r.created, int64(^uint32(0)>>1))),
		})
	}
	for i := range sim.ordered {
		sim.ordered[i].Position = i + 1
		pred.Victims = append(pred.Victims, sim.ordered[i].Name)
	}
	pred.Pods = sim.ordered
	pred.Certain = sim.certain
	sim.listSurvivors()
	switch {
	case d.Spec.Paused:
		pred.Conflicts = append(pred.Conflicts, prediction.Conflict{Kind: "Rollout", Name: d.Name, Message: "the Deployment is paused: the scale still splits across its ReplicaSets, but the rollout does not continue"})
	case activeBefore(sim.rss) > 1:
		pred.Conflicts = append(pred.Conflicts, prediction.Conflict{Kind: "Rollout", Name: d.Name, Message: fmt.Sprintf("a rollout is in progress over %d ReplicaSets: the scale is split between them, then the rollout continues at the new size", activeBefore(sim.rss))})
	}
	pred.Message = summary(pred, false)
}

// listSurvivors appends every pod not deleted, once: each ReplicaSet's
// kept pods in its last predicted order, then terminating and ignored ones.
func (sim *depSim) listSurvivors() {
	pred := sim.pred
	listed := make(map[string]bool, sim.podHint)
	if pred.Pods != nil && sim.podHint > len(pred.Pods) {
		pred.Pods = slices.Grow(pred.Pods, sim.podHint-len(pred.Pods))
	}
	for _, p := range pred.Pods {
		listed[p.Name] = true
	}
	var uncounted []prediction.Pod
	// Counted once: recounting for every kept pod was quadratic.
	n := positioned(pred.Pods)
	for _, r := range sim.rss {
		run := r.last
		if run == nil {
			c := sim.claim(r)
			x := sim.sharedRS(r, c, int32(len(c.active)), sim.gone)
			run = &x // read only
		}
		for _, pp := range run.pods {
			if listed[pp.Name] || sim.gone[pp.Name] || isCreated(pp.Name) || pp.Fate == prediction.FateDelete {
				continue
			}
			listed[pp.Name] = true
			if pp.Fate == prediction.FateKeep {
				pp.ReplicaSet = r.rs.Name
				n++
				pp.Position = n
				pred.Pods = append(pred.Pods, pp)
			} else {
				uncounted = append(uncounted, pp)
			}
		}
	}
	// Terminating and ignored pods have no place in the order: list them last.
	pred.Pods = append(pred.Pods, uncounted...)
}

func earliest(a, b *time.Time) *time.Time {
	if a == nil {
		return b
	}
	if b == nil || a.Before(*b) {
		return a
	}
	return b
}

func indexOf(rss []*depRS, name string) int {
	for i, r := range rss {
		if r.rs.Name == name {
			return i
		}
	}
	return -1
}

func available(pods []*corev1.Pod, minReady int32, now time.Time, gone map[string]bool) int32 {
	var n int32
	for _, p := range pods {
		if !gone[p.Name] && podutils.IsPodAvailable(p, minReady, metav1.NewTime(now)) {
			n++
		}
	}
	return n
}

func countNotGone(pods []*corev1.Pod, gone map[string]bool) int {
	n := 0
	for _, p := range pods {
		if !gone[p.Name] {
			n++
		}
	}
	return n
}

// equalIgnoreHash is deploymentutil.EqualIgnoreHash: templates equal but
// for the pod-template-hash label.
func equalIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	delete(b.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	return apiequality.Semantic.DeepEqual(a, b)
}

// activeBefore counts ReplicaSets that had replicas before the scale.
func activeBefore(rss []*depRS) int {
	n := 0
	for _, r := range rss {
		if r.before > 0 {
			n++
		}
	}
	return n
}

// positioned counts pods with a place in the deletion order.
func positioned(pods []prediction.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Position > 0 {
			n++
		}
	}
	return n
}

const createdPrefix = "(created)-"

func isCreated(name string) bool {
	return len(name) > len(createdPrefix) && name[:len(createdPrefix)] == createdPrefix
}

// grow counts the pods a ReplicaSet creates: Pending, unassigned, not
// ready. They are identical, so they are counted rather than built (a
// scale-up to any size costs nothing).
func (sim *depSim) grow(r *depRS, n int64) int64 {
	r.created += n
	return n
}

// createdAlive: created pods of r not yet deleted in the simulation.
func (r *depRS) createdAlive() int64 { return r.created - r.createdGone }

// shrinkOne runs r's ReplicaSet controller down to `to` with the given
// pods already gone. Its created pods all compare equal, so they form one
// block in the deletion order; only enough of them are built to find that
// block (one more than the existing candidates) and the count of deleted
// ones follows from where the block sits.
func (sim *depSim) shrinkOne(r *depRS, to int32, gone map[string]bool) rsRun {
	c := sim.claim(r)
	existing := countNotGone(c.active, gone)
	alive := r.createdAlive()
	m := min(alive, int64(existing)+1)
	for i := int64(0); i < m; i++ {
		c.active = append(c.active, sim.createdPod(r, i))
	}
	n := int64(existing) + alive - int64(to) // pods to delete
	if n <= 0 {
		return sim.runRS(r, c, int32(int64(existing)+m), gone)
	}
	d := n
	if extra := alive - m; extra > 0 {
		before := sim.createdBlockStart(r, c, gone)
		switch {
		case n <= before+m:
		case n <= before+alive:
			d = before + m
		default:
			d = n - extra
		}
	}
	run := sim.runRS(r, c, int32(int64(existing)+m-d), gone)
	existingVictims := 0
	for _, v := range run.victims {
		if !isCreated(v) {
			existingVictims++
		}
	}
	createdDeleted := n - int64(existingVictims)
	r.createdGone += createdDeleted
	r.deleted += int(min(createdDeleted, 1<<30))
	return run
}

// createdBlockStart counts the existing candidates that sort before the
// created pods.
func (sim *depSim) createdBlockStart(r *depRS, c claimed, gone map[string]bool) int64 {
	all := sim.runRS(r, c, 1, gone)
	var n int64
	for _, p := range all.pods {
		if isCreated(p.Name) {
			break
		}
		if p.Fate == prediction.FateDelete || p.Fate == prediction.FateKeep {
			n++
		}
	}
	return n
}

func (sim *depSim) createdPod(r *depRS, i int64) *corev1.Pod {
	name := fmt.Sprintf("%s%s-%d", createdPrefix, r.rs.Name, i+1)
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: sim.d.Namespace, UID: types.UID(name),
		Labels: maps.Clone(r.rs.Spec.Template.Labels),
		// Stored at whole seconds, as the API server does.
		CreationTimestamp: metav1.NewTime(sim.o.Now.Truncate(time.Second)), OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(r.rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
}
