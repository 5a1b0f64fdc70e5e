// Package job predicts which pods the Job controller deletes when a Job's
// parallelism is lowered, or an Indexed Job's completions and parallelism
// together (elastic Indexed Jobs): manageJob and activePodsForRemoval in
// k8s.io/kubernetes pkg/controller/job, version by version (rules.JobRules).
//
// It is pure: a Job, its pods, a reference time and a rule set go in; the
// fates come out. The comparator is the engine's, with the rules the Job's
// controller.ActivePods has (no deletion cost, no ranks, exact times).
package job

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

// TrackingAnnotation marks a Job tracked with finalizers (1.22-1.25).
const TrackingAnnotation = "batch.kubernetes.io/job-tracking"

// Input is one Job and the change to preview.
type Input struct {
	Job *batchv1.Job
	// Pods are the pods the controller claims for the Job (owned by it, or
	// orphans matching its selector), in any phase.
	Pods []*corev1.Pod
	// Parallelism is the new spec.parallelism.
	Parallelism int32
	// Completions is the new spec.completions; nil leaves it unchanged.
	Completions *int32
	Now         time.Time
	Rules       rules.RuleSet
	Seed        uint64
}

// Cause says why a pod goes (or stays).
type Cause string

// Causes, in the order activePodsForRemoval applies them.
const (
	NoIndex    Cause = "no-index"         // an Indexed Job's pod without a valid index
	Duplicate  Cause = "duplicate-index"  // another pod with the same index is kept
	OutOfRange Cause = "out-of-range"     // index >= completions
	Sorted     Cause = "sorted"           // the ActivePods comparator decided
	Unsorted   Cause = "all-active-go"    // every active pod goes: no sort
	DupTie     Cause = "duplicate-chance" // chance picks which duplicate stays
)

// Fate is one active pod's predicted fate.
type Fate struct {
	engine.Placed
	Index int // completion index; -1 without one (or NonIndexed)
	Cause Cause
	// Kept names the duplicate kept instead of this pod (Duplicate).
	Kept string
}

// Result is the Job controller's next sync after the change.
type Result struct {
	Indexed     bool
	Parallelism int32 // current spec.parallelism
	// Completions is what the sync after the change reads (new or unchanged).
	Completions *int32
	// Active counts the active pods; Want is wantActive after the change.
	Active    int
	Want      int32
	Succeeded int32
	// Forced counts pods removed before any comparison (no index, out of
	// range, duplicates).
	Forced     int
	Order      []Fate // victims first, in the controller's order, then the kept
	Victims    int
	Contenders []engine.Contenders
	Certain    bool
	// Syncs is how many syncs the deletions take (500 per sync from 1.22).
	Syncs    int
	Warnings []string
	// Note, when set, is the whole answer: nothing is scaled in (a
	// suspended, finished or deleted Job, or parallelism not lowered).
	Note string
}

// ModeError: the Job's completion mode does not allow the change.
type ModeError struct{ Msg string }

func (e *ModeError) Error() string { return e.Msg }

// Predict runs the Job controller's next sync after the change.
func Predict(in Input) (Result, error) {
	j := in.Job
	res := Result{Parallelism: parallelismOf(j), Completions: j.Spec.Completions, Certain: true}
	completions, err := modeAndCompletions(in, &res)
	if err != nil {
		return res, err
	}
	if in.Parallelism < 0 {
		return res, fmt.Errorf("parallelism must not be negative, got %d", in.Parallelism)
	}
	if res.Note = unmanaged(j); res.Note != "" {
		return res, nil
	}
	var active []*corev1.Pod
	for _, p := range in.Pods {
		if isActive(p) {
			active = append(active, p)
		}
	}
	res.Active = len(active)
	res.Succeeded = succeeded(in, res.Indexed, completions)
	res.Want = wantActive(in, &res, completions)
	rmAtLeast := max(0, len(active)-int(res.Want))
	c := comparatorRules(in.Rules)
	if res.Indexed && completions != nil {
		indexed(&res, in, c, active, rmAtLeast, int(*completions))
	} else {
		sorted(&res, in, c, active, rmAtLeast)
	}
	if in.Rules.Job.DeleteCap && res.Victims > 0 {
		res.Syncs = (res.Victims + rules.JobMaxDeletesPerSync - 1) / rules.JobMaxDeletesPerSync
	} else if res.Victims > 0 {
		res.Syncs = 1
	}
	if res.Syncs > 1 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the Job controller deletes at most %d pods per sync: %d syncs", rules.JobMaxDeletesPerSync, res.Syncs))
	}
	res.Warnings = append(res.Warnings, unmodelled(in, res)...)
	if res.Victims == 0 && in.Parallelism >= res.Parallelism && (completions == nil || j.Spec.Completions == nil || *completions >= *j.Spec.Completions) {
		res.Note = fmt.Sprintf("parallelism %d is not below the current %d: no pod is deleted", in.Parallelism, res.Parallelism)
	}
	for i := range res.Order {
		res.Order[i].Position = i + 1
		res.Certain = res.Certain && res.Order[i].Certain
	}
	return res, nil
}

// modeAndCompletions checks the completion mode and gives the completions
// the controller works to: the Job's, or a valid change of them.
func modeAndCompletions(in Input, res *Result) (*int32, error) {
	j := in.Job
	mode := batchv1.NonIndexedCompletion
	if j.Spec.CompletionMode != nil {
		mode = *j.Spec.CompletionMode
	}
	if mode != batchv1.NonIndexedCompletion && mode != batchv1.IndexedCompletion {
		return nil, &ModeError{fmt.Sprintf("job %s has completion mode %q, which the Job controller does not know: it skips the Job", j.Name, mode)}
	}
	res.Indexed = mode == batchv1.IndexedCompletion
	completions := j.Spec.Completions
	if in.Completions != nil && !ptrEqual(in.Completions, j.Spec.Completions) {
		if err := checkCompletions(in, res.Indexed); err != nil {
			return nil, err
		}
		completions = in.Completions
	}
	res.Completions = completions
	return completions, nil
}

// unmanaged says why the controller deletes nothing for a parallelism
// change: the Job is finished, being deleted, finishing or suspended.
func unmanaged(j *batchv1.Job) string {
	switch {
	case finished(j):
		return fmt.Sprintf("job %s has finished: its controller no longer manages pods; nothing is deleted", j.Name)
	case j.DeletionTimestamp != nil:
		return fmt.Sprintf("job %s is being deleted: its controller no longer manages pods; nothing is deleted by the change", j.Name)
	case finishing(j):
		return fmt.Sprintf("job %s is finishing (a SuccessCriteriaMet or FailureTarget condition): its controller deletes every active pod whatever the parallelism", j.Name)
	case j.Spec.Suspend != nil && *j.Spec.Suspend:
		return fmt.Sprintf("job %s is suspended: its controller already deletes every active pod; parallelism changes nothing", j.Name)
	}
	return ""
}

// wantActive is how many active pods the controller wants: the
// parallelism, capped by the completions left where the rules say so.
func wantActive(in Input, res *Result, completions *int32) int32 {
	want := in.Parallelism
	if !in.Rules.Job.WantRemaining {
		return want
	}
	if completions != nil {
		return max(0, min(*completions-res.Succeeded, in.Parallelism))
	}
	if res.Succeeded > 0 {
		want = int32(res.Active)
		if in.Parallelism < want {
			res.Warnings = append(res.Warnings, "a pod of this Job (no completions) has succeeded: the controller lets the running pods finish and deletes none")
		}
	}
	return want
}

// checkCompletions is the API server's validation of a completions change
// (validateCompletions in pkg/apis/batch/validation).
func checkCompletions(in Input, indexed bool) error {
	j := in.Job
	switch {
	case !indexed:
		return &ModeError{fmt.Sprintf("job %s is NonIndexed: spec.completions is immutable; only --parallelism can change", j.Name)}
	case !in.Rules.Job.ElasticIndexed:
		return &ModeError{fmt.Sprintf("Kubernetes %s does not let an Indexed Job's completions change (ElasticIndexedJob: 1.27+, on by default)", in.Rules.Version())}
	case *in.Completions != in.Parallelism:
		return &ModeError{fmt.Sprintf("spec.completions can only be modified in tandem with spec.parallelism: give --parallelism=%d too", *in.Completions)}
	case *in.Completions < 0:
		return fmt.Errorf("completions must not be negative, got %d", *in.Completions)
	}
	return nil
}

// comparatorRules is the rule set of controller.ActivePods: the engine's
// comparator without deletion cost and with exact times (no log2 buckets).
func comparatorRules(r rules.RuleSet) rules.RuleSet {
	r.DeletionCost, r.LogScale = false, false
	return r
}

// sorted is activePodsForRemoval for a NonIndexed Job: the active pods in
// the informer's order, sorted; the first rmAtLeast go.
func sorted(res *Result, in Input, r rules.RuleSet, active []*corev1.Pod, rm int) {
	cands := make([]engine.Pod, len(active))
	for i, p := range active {
		cands[i] = engine.FromPod(p)
	}
	// One round: the cap splits the deletions over syncs, but each sync
	// sorts what is left with the same comparator and no ranks, so the set
	// deleted is the same.
	er := engine.Predict(engine.Input{Candidates: cands, Delete: rm, Now: in.Now, Rules: r, Seed: in.Seed, Burst: max(rm, 1)})
	res.Contenders = er.Contenders
	for _, pl := range er.Order {
		f := Fate{Placed: pl, Index: -1, Cause: Sorted}
		if er.Unsorted && pl.Delete {
			f.Cause = Unsorted
		}
		if pl.Delete {
			res.Victims++
		}
		res.Order = append(res.Order, f)
	}
}

// indexed is activePodsForRemoval for an Indexed Job: pods without an
// index, duplicates and (1.22+) indexes >= completions go first, whatever
// rmAtLeast is; then, if that is not enough, one pod per index, sorted.
func indexed(res *Result, in Input, r rules.RuleSet, active []*corev1.Pod, rm, completions int) {
	x := byCompletionIndex(in, active, completions)
	res.Forced = len(x.noIndex) + len(x.outOfRange)
	d := &duplicates{}
	for _, ix := range x.indexes {
		group := x.byIndex[ix]
		if len(group) == 1 {
			d.left = append(d.left, &group[0])
			continue
		}
		res.Forced += len(group) - 1
		d.add(res, in, r, ix, group)
	}
	need := max(0, rm-res.Forced)
	leftFates, leftOpen := sortLeft(in, r, d.left, need)
	d.spreadTies(leftFates)
	res.Contenders = append(res.Contenders, leftOpen...)
	// The controller's rm: no index first, then by index the duplicates
	// and, from the first index out of range, every pod from there; then
	// the sorted ones.
	res.Order = append(res.Order, x.noIndex...)
	res.Order = append(res.Order, d.fates...)
	sortByIndex(x.outOfRange)
	res.Order = append(res.Order, x.outOfRange...)
	for _, f := range leftFates {
		if f.Delete {
			res.Order = append(res.Order, f)
		}
	}
	for _, f := range leftFates {
		if !f.Delete {
			res.Order = append(res.Order, f)
		}
	}
	for _, f := range res.Order {
		if f.Delete {
			res.Victims++
		}
	}
}

// indexedPods are an indexed Job's active pods by completion index: those
// without one, those out of range (when the rules remove them), and the
// rest by index.
type indexedPods struct {
	noIndex, outOfRange []Fate
	byIndex             map[int][]engine.Pod
	indexes             []int // of byIndex, sorted
}

func byCompletionIndex(in Input, active []*corev1.Pod, completions int) indexedPods {
	x := indexedPods{byIndex: map[int][]engine.Pod{}}
	for _, p := range active {
		ix := CompletionIndex(p)
		ep := engine.FromPod(p)
		switch {
		case ix < 0:
			x.noIndex = append(x.noIndex, forced(ep, ix, NoIndex))
		case ix >= completions && in.Rules.Job.OutOfRange:
			x.outOfRange = append(x.outOfRange, forced(ep, ix, OutOfRange))
		default:
			x.byIndex[ix] = append(x.byIndex[ix], ep)
		}
	}
	for ix := range x.byIndex {
		x.indexes = append(x.indexes, ix)
	}
	slices.Sort(x.indexes)
	return x
}

// duplicates are the pods that share an index with another: all but one
// per index go.
type duplicates struct {
	// left holds one pod per index, in index order: the order the
	// controller sorts them from.
	left  []*engine.Pod
	fates []Fate
	ties  []dupTie
}

// dupTie: duplicates of one index that tie under every rule with the one
// kept.
type dupTie struct {
	kept    *engine.Pod
	members []int // into fates
}

// add sorts one index's pods: they come in the informer's order, so a tie
// here is chance; all but the last after the sort go.
func (d *duplicates) add(res *Result, in Input, r rules.RuleSet, ix int, group []engine.Pod) {
	er := engine.Predict(engine.Input{Candidates: group, Delete: len(group) - 1, Now: in.Now, Rules: r, Seed: in.Seed + uint64(ix), Burst: len(group)})
	var kept *engine.Pod
	for _, pl := range er.Order {
		if !pl.Delete {
			kept = pl.Pod
		}
	}
	d.left = append(d.left, kept)
	var open []string
	if len(er.Contenders) > 0 {
		open = er.Contenders[0].Pods
	}
	t := dupTie{kept: kept}
	for _, pl := range er.Order {
		if pl.Pod == kept {
			continue
		}
		f := Fate{Placed: pl, Index: ix, Cause: Duplicate, Kept: kept.Name}
		f.Group, f.Round, f.Next, f.NextPod = -1, 0, nil, nil
		if pl.Boundary == nil || pl.BoundaryPod != kept {
			dec := (&engine.Comparator{Rules: r, Now: in.Now}).Compare(pl.Pod, kept)
			f.Boundary, f.BoundaryPod = &dec, kept
		}
		if slices.Contains(open, pl.Pod.Name) {
			f.Cause = DupTie
			t.members = append(t.members, len(d.fates))
		}
		d.fates = append(d.fates, f)
	}
	if len(t.members) > 0 {
		g := er.Contenders[0]
		g.Reason = fmt.Sprintf("pods with the same index %d tie under every rule: one of them stays", ix)
		d.ties = append(d.ties, t)
		res.Contenders = append(res.Contenders, g)
	}
}

// spreadTies: with n tied duplicates, each goes as one of the n-1, or as
// the one kept when the sort of the left pods removes that one. Tie groups
// come first, the left sort's groups after them.
func (d *duplicates) spreadTies(leftFates []Fate) {
	byPod := map[*engine.Pod]int{}
	for i := range leftFates {
		byPod[leftFates[i].Pod] = i
	}
	for gi, t := range d.ties {
		lf := &leftFates[byPod[t.kept]]
		n := float64(len(t.members) + 1)
		p := (n-1)/n + lf.Probability/n
		certain := lf.Certain && lf.Delete
		for _, m := range t.members {
			d.fates[m].Probability, d.fates[m].Certain, d.fates[m].Delete = p, certain, true
			d.fates[m].Group = gi
		}
		lf.Probability, lf.Certain = p, certain
		if !certain {
			lf.Group, lf.Cause = gi, DupTie
		}
	}
	for i := range leftFates {
		if g := leftFates[i].Group; g >= 0 && leftFates[i].Cause != DupTie {
			leftFates[i].Group = g + len(d.ties)
		}
	}
}

// sortLeft is the sort of one pod per index. The controller sorts them
// from index order, so its sort.Sort decides ties the same way every time:
// run here, it gives the controller's order (Go 1.19+'s pdqsort, in the
// builds of Kubernetes 1.25+). Older releases were built with another
// sort.Sort: ties there are left to chance, estimated as the engine does.
func sortLeft(in Input, r rules.RuleSet, left []*engine.Pod, need int) ([]Fate, []engine.Contenders) {
	c := &engine.Comparator{Rules: r, Now: in.Now}
	capped := in.Rules.Job.DeleteCap && need > rules.JobMaxDeletesPerSync
	if in.Rules.Minor < 25 || capped {
		// Later syncs sort a shorter list, which may break ties otherwise.
		cands := make([]engine.Pod, len(left))
		for i, p := range left {
			cands[i] = *p
		}
		er := engine.Predict(engine.Input{Candidates: cands, Delete: need, Now: in.Now, Rules: r, Seed: in.Seed, Burst: max(need, 1)})
		byName := map[string]*engine.Pod{}
		for _, p := range left {
			byName[p.Name] = p
		}
		out := make([]Fate, 0, len(er.Order))
		for _, pl := range er.Order {
			pl.Pod = byName[pl.Pod.Name] // the callers' pointers
			if pl.BoundaryPod != nil {
				pl.BoundaryPod = byName[pl.BoundaryPod.Name]
			}
			out = append(out, Fate{Placed: pl, Index: CompletionIndex(pl.Pod.Source), Cause: Sorted})
		}
		why := "the controller sorts from index order, but this release may be built with a Go older than 1.19, whose sort.Sort breaks ties another way; shown as equal shares"
		if capped {
			why = "later syncs sort a shorter list from index order, which may break the tie another way; shown as equal shares"
		}
		for i := range er.Contenders {
			er.Contenders[i].Reason, er.Contenders[i].Exact = "tie under every rule: "+why, false
		}
		return out, er.Contenders
	}
	s := slices.Clone(left)
	sort.Sort(activePods{c: c, pods: s})
	need = min(need, len(s))
	out := make([]Fate, len(s))
	for i, p := range s {
		f := Fate{Placed: engine.Placed{Pod: p, Delete: i < need, Certain: true, Group: -1}, Index: CompletionIndex(p.Source), Cause: Sorted}
		if f.Delete {
			f.Probability = 1
		}
		if need > 0 && need < len(s) {
			other := s[need]
			if !f.Delete {
				other = s[need-1]
			}
			if other != p {
				d := c.Compare(p, other)
				f.Boundary, f.BoundaryPod = &d, other
			}
		}
		out[i] = f
	}
	return out, nil
}

func forced(p engine.Pod, ix int, c Cause) Fate {
	pp := p
	return Fate{Placed: engine.Placed{Pod: &pp, Delete: true, Certain: true, Probability: 1, Group: -1}, Index: ix, Cause: c}
}

// sortByIndex orders out-of-range pods by index, as byCompletionIndex
// leaves them (pods of one index in an order that does not matter: all go).
func sortByIndex(fs []Fate) {
	slices.SortStableFunc(fs, func(a, b Fate) int { return a.Index - b.Index })
}

// activePods is controller.ActivePods over engine pods.
type activePods struct {
	c    *engine.Comparator
	pods []*engine.Pod
}

func (s activePods) Len() int           { return len(s.pods) }
func (s activePods) Swap(i, j int)      { s.pods[i], s.pods[j] = s.pods[j], s.pods[i] }
func (s activePods) Less(i, j int) bool { return s.c.Less(s.pods[i], s.pods[j]) }

// CompletionIndex is getCompletionIndex: the job-completion-index
// annotation as a non-negative int, else -1.
func CompletionIndex(p *corev1.Pod) int {
	if p == nil {
		return -1
	}
	v, ok := p.Annotations[batchv1.JobCompletionIndexAnnotation]
	if !ok {
		return -1
	}
	i, err := strconv.Atoi(v)
	if err != nil || i < 0 {
		return -1
	}
	return i
}

// succeeded is the count manageJob reads: for an Indexed Job the succeeded
// indexes below completions, else succeeded pods.
func succeeded(in Input, indexed bool, completions *int32) int32 {
	j := in.Job
	tracked := in.Rules.Job.TrackingAll || (in.Rules.Job.TrackingFinalizers && j.Annotations[TrackingAnnotation] != "")
	if indexed && completions != nil {
		n := int(*completions)
		set := map[int]bool{}
		if tracked {
			for _, ix := range parseIndexes(j.Status.CompletedIndexes, n) {
				set[ix] = true
			}
		}
		for _, p := range in.Pods {
			ix := CompletionIndex(p)
			if p.Status.Phase == corev1.PodSucceeded && ix >= 0 && ix < n && (!tracked || hasTrackingFinalizer(p)) {
				set[ix] = true
			}
		}
		return int32(len(set))
	}
	if !tracked {
		n := int32(0)
		for _, p := range in.Pods {
			if p.Status.Phase == corev1.PodSucceeded {
				n++
			}
		}
		return n
	}
	uncounted := map[string]bool{}
	n := j.Status.Succeeded
	if u := j.Status.UncountedTerminatedPods; u != nil {
		for _, uid := range u.Succeeded {
			uncounted[string(uid)] = true
		}
		n += int32(len(u.Succeeded))
	}
	for _, p := range in.Pods {
		if p.Status.Phase == corev1.PodSucceeded && hasTrackingFinalizer(p) && !uncounted[string(p.UID)] {
			n++
		}
	}
	return n
}

// parseIndexes is parseIndexesFromString: "1,3-5" below completions.
func parseIndexes(s string, completions int) []int {
	var out []int
	if s == "" {
		return nil
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil {
			continue
		}
		if first >= completions {
			break
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil {
				continue
			}
			last = min(last, completions-1)
		}
		for i := first; i <= last; i++ {
			out = append(out, i)
		}
	}
	return out
}

func hasTrackingFinalizer(p *corev1.Pod) bool {
	return slices.Contains(p.Finalizers, batchv1.JobTrackingFinalizer)
}

// unmodelled warns about what can end the Job in the same sync, which
// deletes every active pod instead.
func unmodelled(in Input, res Result) []string {
	j := in.Job
	var out []string
	failed := j.Status.Failed
	for _, p := range in.Pods {
		if p.Status.Phase == corev1.PodFailed && hasTrackingFinalizer(p) {
			failed++
		}
	}
	if j.Spec.BackoffLimit != nil && failed > *j.Spec.BackoffLimit {
		out = append(out, fmt.Sprintf("%d failed pods exceed backoffLimit %d: the controller fails the Job and deletes every active pod", failed, *j.Spec.BackoffLimit))
	}
	if j.Spec.PodFailurePolicy != nil || j.Spec.SuccessPolicy != nil || j.Spec.BackoffLimitPerIndex != nil {
		out = append(out, "the Job has a podFailurePolicy, successPolicy or backoffLimitPerIndex: if it ends the Job in this sync, every active pod goes instead (not modelled)")
	}
	return out
}

func finished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// finishing: the Job met its success or failure criteria (1.31+
// conditions); the sync deletes every active pod instead of managing them.
func finishing(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobSuccessCriteriaMet || c.Type == batchv1.JobFailureTarget) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

func parallelismOf(j *batchv1.Job) int32 {
	if j.Spec.Parallelism == nil {
		return 1
	}
	return *j.Spec.Parallelism
}

// isActive is controller.IsPodActive.
func isActive(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil
}

func ptrEqual(a, b *int32) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
