package rollout

import (
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/workload"
)

// predictStatefulSet runs the StatefulSet's rolling update for the change,
// and again as a bad release whose new pods never become available.
func predictStatefulSet(in Input) (*Result, error) {
	set := in.StatefulSet
	tmpl, err := changedTemplate("statefulset", set.Name, &set.Spec.Template, false, in.Change, in.Now)
	if err != nil {
		return nil, err
	}
	strategy := string(set.Spec.UpdateStrategy.Type)
	if strategy == "" {
		strategy = string(appsv1.RollingUpdateStatefulSetStrategyType)
	}
	res := &Result{Certain: true, Rollout: prediction.Rollout{Kind: "StatefulSet", Name: set.Name, Namespace: set.Namespace,
		Strategy: strategy, Change: in.Change.Kind}}
	switch set.Spec.UpdateStrategy.Type {
	case appsv1.OnDeleteStatefulSetStrategyType:
		res.Rollout.Outcome = prediction.RolloutNotStarted
		res.Rollout.Reason = "updateStrategy OnDelete: the controller replaces a pod with the new revision only when someone deletes it"
		res.Rollout.Unblock = "delete the pods by hand (kubectl delete pod), one at a time, highest ordinal first"
		return res, nil
	case "", appsv1.RollingUpdateStatefulSetStrategyType:
	default:
		return nil, &UnsupportedError{Msg: fmt.Sprintf("statefulset %s: updateStrategy %s is not modelled (RollingUpdate and OnDelete are)", set.Name, strategy)}
	}
	if err := runWithBadRelease(res, func(neverReady bool) (*ssSim, error) { return newSSSim(in, tmpl, neverReady) }); err != nil {
		return nil, err
	}
	return res, nil
}

// UnsupportedError: a strategy the model does not cover.
type UnsupportedError struct{ Msg string }

func (e *UnsupportedError) Error() string { return e.Msg }

// run: one step per wait for new pods; a step is the controller's syncs
// until it waits (deleted pods are gone before it recreates them).
func (s *ssSim) run(res *Result) {
	r := &res.Rollout
	for len(r.Steps) < maxSteps {
		st := prediction.RolloutStep{Certain: true}
		if !fillStep(s, &st) {
			break
		}
		waiting := s.ssWaiting()
		if !st.Certain {
			s.certain = false
		}
		r.Steps = append(r.Steps, st)
		res.Victims = append(res.Victims, st.Deleted...)
		if s.ssDone() || s.neverReady {
			break
		}
		for _, sl := range waiting {
			makeSlotAvailable(sl, s.in.Now)
		}
	}
	s.ssVerdict(res)
}

// sync is one pass of updateStatefulSet: processReplica for every ordinal
// (create what is missing; OrderedReady stops at the first pod that is not
// available), then the rolling update's deletions.
func (s *ssSim) sync(st *prediction.RolloutStep) bool {
	acted := false
	s.blockedBy = nil
	for _, sl := range s.slots {
		if sl.pod == nil {
			s.recreate(sl, st)
			acted = true
			if s.monotonic {
				return true
			}
			continue
		}
		if s.monotonic && !sl.available {
			s.blockedBy = sl
			return acted
		}
	}
	if deleted, wait := s.scaleDown(st); wait {
		return acted || deleted
	}
	if s.in.Rules.StatefulSet.MaxUnavailable {
		return s.updateBudgeted(st) || acted
	}
	return s.updateOne(st) || acted
}

// scaleDown is processCondemned over the ordinals past spec.replicas,
// highest first, before any update ("scaling will take precedence over
// updates"). OrderedReady deletes one per sync (the next waits until it
// is gone), and blocks on one that is not available unless it is the
// first unhealthy pod (the lowest such ordinal); Parallel deletes them all
// and goes on to the update in the same sync. wait: the sync ends here.
func (s *ssSim) scaleDown(st *prediction.RolloutStep) (deleted, wait bool) {
	var firstUnhealthy *slot
	for i := len(s.condemned) - 1; i >= 0; i-- {
		if c := s.condemned[i]; c.pod != nil && !c.available && firstUnhealthy == nil {
			firstUnhealthy = c
		}
	}
	for _, c := range s.condemned {
		if c.pod == nil {
			continue
		}
		if s.monotonic && !c.available && c != firstUnhealthy {
			s.blockedBy = c
			return deleted, true
		}
		s.delete(c, st, "past spec.replicas: the scale-in deletes the highest ordinal first, before any update")
		deleted = true
		if s.monotonic {
			return true, true
		}
	}
	return deleted, false
}

// updateOne is the rolling update without MaxUnavailableStatefulSet: from
// the highest ordinal down to the partition, delete the first old pod,
// unless a pod above it is not yet available.
func (s *ssSim) updateOne(st *prediction.RolloutStep) bool {
	for t := len(s.slots) - 1; t >= s.partition; t-- {
		sl := s.slots[t]
		if sl.pod != nil && !sl.isNew {
			s.delete(sl, st, "highest ordinal at the old revision")
			return true
		}
		if sl.pod == nil || !sl.available {
			return false
		}
	}
	return false
}

// updateBudgeted is updateStatefulSetAfterInvariantEstablished: up to
// maxUnavailable pods unavailable at once, counted over every ordinal.
func (s *ssSim) updateBudgeted(st *prediction.RolloutStep) bool {
	unavailable, needing := 0, 0
	parallel := !s.monotonic && s.in.Rules.StatefulSet.ParallelUnavailableFirst
	for _, sl := range s.slots {
		if sl.pod == nil || !sl.available {
			unavailable++
			if parallel && sl.pod != nil && !sl.isNew {
				needing++
			}
		}
	}
	if unavailable >= s.maxUnavail && needing == 0 {
		return false
	}
	acted := false
	if parallel {
		// Phase 1: old pods already unavailable go whatever the budget.
		for t := len(s.slots) - 1; t >= s.partition; t-- {
			if sl := s.slots[t]; sl.pod != nil && !sl.isNew && !sl.available {
				s.delete(sl, st, "old and already unavailable (Parallel deletes these first)")
				acted = true
			}
		}
	}
	budget := s.maxUnavail - unavailable
	for t := len(s.slots) - 1; t >= s.partition && budget > 0; t-- {
		sl := s.slots[t]
		if sl.pod != nil && !sl.isNew && (!parallel || sl.available) {
			s.delete(sl, st, fmt.Sprintf("highest ordinal at the old revision (maxUnavailable %d)", s.maxUnavail))
			budget--
			acted = true
		}
	}
	return acted
}

// delete: the old pod terminates and is gone before the next sync; its
// node's resources are free for the pod recreated under its name.
func (s *ssSim) delete(sl *slot, st *prediction.RolloutStep, why string) {
	st.Deleted = append(st.Deleted, podName(sl.pod))
	st.Why = append(st.Why, why)
	s.view.Remove(sl.pod)
	sl.pod, sl.available = nil, false
}

// recreate is CreateStatefulPod: the same name, at the update revision
// from the partition up (below it, at the current one).
func (s *ssSim) recreate(sl *slot, st *prediction.RolloutStep) {
	sl.pod = s.newPod(sl)
	sl.isNew = s.indexOf(sl) >= s.partition
	sl.fresh, sl.available = true, false
	s.placeSlot(sl)
	// The step's deletions follow the ordinals, whatever node the scoring
	// picks: an undetermined node leaves the step certain (the answer's
	// top-level certain is false).
	st.Created = append(st.Created, slotCreated(sl))
}

func (s *ssSim) indexOf(sl *slot) int { return sl.ord - s.slots[0].ord }

// placeSlot runs the scheduler's filters and scores, as place does for a
// Deployment's new pod.
func (s *ssSim) placeSlot(sl *slot) {
	p := chooseAndBind(s.view, sl.pod, s.set.Spec.Selector, s.unbound(sl))
	sl.fitError, sl.candidates = p.fitError, p.candidates
	s.warnings, s.certain = append(s.warnings, p.warnings...), s.certain && p.certain
	if len(s.set.Spec.VolumeClaimTemplates) > 0 {
		s.warnings = append(s.warnings, "the recreated pods keep their PersistentVolumeClaims; a volume's node affinity or zone (PersistentVolumes are not read) may narrow where they can go")
	}
}

// unbound: another recreated pod's node is left undetermined.
func (s *ssSim) unbound(self *slot) bool {
	for _, sl := range s.slots {
		if sl != self && len(sl.candidates) > 0 {
			return true
		}
	}
	return false
}

// retryPlacement: a pod that fit nowhere is retried once deletions free room.
func (s *ssSim) retryPlacement(st *prediction.RolloutStep) {
	for _, sl := range s.slots {
		if sl.pod != nil && sl.fitError != "" {
			s.placeSlot(sl)
			if sl.fitError == "" {
				c := slotCreated(sl)
				c.Reason = "pending until now: " + c.Reason
				st.Created = append(st.Created, c)
			}
		}
	}
}

func slotCreated(sl *slot) prediction.RolloutCreate {
	m := &member{pod: sl.pod, candidates: sl.candidates, fitError: sl.fitError}
	c := created(m)
	c.Pod = sl.name
	return c
}

func makeSlotAvailable(sl *slot, now time.Time) {
	makeAvailable(&member{pod: sl.pod}, now)
	sl.available = true
}

// ssWaiting: recreated pods scheduled and not yet available.
func (s *ssSim) ssWaiting() []*slot {
	var out []*slot
	for _, sl := range s.slots {
		if sl.pod != nil && sl.fresh && !sl.available && sl.fitError == "" {
			out = append(out, sl)
		}
	}
	return out
}

// ssDone: every ordinal from the partition up runs the new revision, available.
func (s *ssSim) ssDone() bool {
	for _, c := range s.condemned {
		if c.pod != nil {
			return false
		}
	}
	for i, sl := range s.slots {
		if sl.pod == nil || !sl.available || (i >= s.partition && !sl.isNew) {
			return false
		}
	}
	return true
}

// ssVerdict: completes (below a partition the old revision stays), stalls
// (naming the pod or the fit error), or not-started.
func (s *ssSim) ssVerdict(res *Result) {
	r := &res.Rollout
	res.Certain = s.certain && res.Certain
	res.Warnings = append(res.Warnings, workload.Dedupe(s.warnings)...)
	switch {
	case s.ssDone() && len(r.Steps) == 0:
		r.Outcome, r.Reason = prediction.RolloutNotStarted, "nothing changes: the new template is the one already rolled out"
	case s.ssDone():
		r.Outcome = prediction.RolloutCompletes
		if s.partition > 0 {
			r.Reason = fmt.Sprintf("partition %d: %s stay on the old revision until the partition is lowered", s.partition, s.oldBelowPartition())
		}
	default:
		r.Outcome = prediction.RolloutStalls
		r.Remaining = s.oldPods()
		r.Reason, r.Unblock = s.ssStallReason()
	}
}

func (s *ssSim) ssStallReason() (string, string) {
	for _, sl := range s.slots {
		if sl.pod != nil && sl.fitError != "" {
			return fmt.Sprintf("%s fits no node: %s", sl.name, sl.fitError), "free room on a node the pod may use (its volume may tie it to one node or zone)"
		}
	}
	if b := s.blockedBy; b != nil && slices.Contains(s.condemned, b) {
		return fmt.Sprintf("pod %s, past spec.replicas, is not Running and Ready, and a lower ordinal is the first unhealthy pod: OrderedReady's scale-in waits on it before any update", b.name),
			fmt.Sprintf("fix pod %s, or delete it by hand (kubectl delete pod %s): past spec.replicas it is not recreated", b.name, b.name)
	}
	if b := s.blockedBy; b != nil && !b.fresh {
		return fmt.Sprintf("pod %s is not Running and Ready: OrderedReady waits on it before any update", b.name),
			fmt.Sprintf("fix pod %s, or delete it by hand (kubectl delete pod %s) so that the controller recreates it", b.name, b.name)
	}
	for _, sl := range s.slots {
		if sl.pod != nil && !sl.available && !sl.fresh {
			return fmt.Sprintf("old pod %s is unavailable and counts against maxUnavailable %d, so no pod is updated", sl.name, s.maxUnavail),
				fmt.Sprintf("fix pod %s, or delete it by hand (kubectl delete pod %s)", sl.name, sl.name)
		}
	}
	for _, sl := range s.slots {
		if sl.fresh && !sl.available {
			return fmt.Sprintf("the recreated pod %s never becomes available: the controller waits on it", sl.name),
				fmt.Sprintf("fix the new revision, then delete pod %s by hand (a StatefulSet does not roll back by itself)", sl.name)
		}
	}
	return "the controller makes no further change (" + strings.Join(s.oldPods(), ", ") + " remain)", "check the StatefulSet's status"
}

func (s *ssSim) oldPods() []string {
	var out []string
	for _, sl := range s.alive() {
		if !sl.isNew {
			out = append(out, podName(sl.pod))
		}
	}
	return out
}

func (s *ssSim) oldBelowPartition() string {
	var names []string
	for _, sl := range s.slots[:s.partition] {
		names = append(names, sl.name)
	}
	return short(names)
}

func (s *ssSim) waitingNew() int  { return len(s.ssWaiting()) }
func (s *ssSim) badRelease() bool { return s.neverReady }
func (s *ssSim) budgetStates() []prediction.RolloutBudget {
	return statesOf(s.budgets, s.healthy)
}
