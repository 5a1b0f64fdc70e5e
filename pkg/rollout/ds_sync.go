package rollout

import (
	"fmt"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/workload"
)

// run: one step per wait for new pods; a step is the controller's syncs
// until it waits (its new pods become available together).
func (s *dsSim) run(res *Result) {
	r := &res.Rollout
	for len(r.Steps) < maxSteps {
		s.steps = len(r.Steps) + 1
		// After a pick in Go map order, which pods are left is undetermined.
		st := prediction.RolloutStep{Certain: len(s.groups) == 0}
		if !fillStep(s, &st) {
			break
		}
		waiting := s.waiting()
		r.Steps = append(r.Steps, st)
		res.Victims = append(res.Victims, st.Deleted...)
		if s.done() || s.neverReady {
			break
		}
		for _, n := range waiting {
			makeAvailable(&member{pod: n.new}, s.in.Now)
			n.newAvail = true
		}
		s.finishTerminations()
	}
	s.verdict(res)
}

// sync is one pass of the controller: rollingUpdate's deletions (and, with
// maxSurge, its creations), then the manage loop's creations on nodes
// with no pod.
func (s *dsSim) sync(st *prediction.RolloutStep) bool {
	acted := false
	if s.maxSurge == 0 {
		acted = s.updateUnavailable(st)
	} else {
		acted = s.updateSurge(st)
	}
	for _, n := range s.nodes {
		if n.old == nil && n.new == nil {
			s.create(n, st, "")
			acted = true
		}
	}
	return acted
}

// updateUnavailable is rollingUpdate with maxSurge 0: old pods that are
// already unavailable go whatever the budget (from 1.28 they count
// against it), then available old pods up to maxUnavailable minus the
// unavailable count, taken in Go map order.
func (s *dsSim) updateUnavailable(st *prediction.RolloutStep) bool {
	numUnavail := 0
	var replace, cands []*dsNode
	for _, n := range s.nodes {
		switch {
		case n.old == nil && n.new == nil, n.old != nil && n.new != nil:
			numUnavail++
		case n.new != nil:
			if !n.newAvail {
				numUnavail++
			}
		case !n.oldAvail:
			replace = append(replace, n)
			if s.in.Rules.DaemonSet.UnavailableOldCount {
				numUnavail++
			}
		default:
			cands = append(cands, n)
		}
	}
	k := min(max(s.maxUnavail-numUnavail, 0), len(cands))
	counted := "counted against maxUnavailable"
	if !s.in.Rules.DaemonSet.UnavailableOldCount {
		counted = "not counted against maxUnavailable before 1.28"
	}
	for _, n := range replace {
		s.deleteOld(n, st, fmt.Sprintf("old and already unavailable: replaced whatever maxUnavailable (%s)", counted))
	}
	for _, p := range s.pick(cands, k, st, fmt.Sprintf("step %d deletes %d of these %d available old pods", s.steps, k, len(cands))) {
		s.deleteOld(p.node, st, p.why)
	}
	return len(replace)+k > 0
}

// updateSurge is rollingUpdate with maxSurge: a new pod beside every old
// pod that is unavailable, and beside up to maxSurge minus the new pods
// not yet available of the other old pods (Go map order); an old pod goes
// once the new pod on its node is available.
func (s *dsSim) updateSurge(st *prediction.RolloutStep) bool {
	numSurge := 0
	var allowed, cands, retire []*dsNode
	for _, n := range s.nodes {
		switch {
		case n.old == nil:
		case n.new == nil && !n.oldAvail:
			allowed = append(allowed, n)
		case n.new == nil:
			cands = append(cands, n)
		case !n.newAvail:
			numSurge++
		default:
			retire = append(retire, n)
		}
	}
	for _, n := range retire {
		s.deleteOld(n, st, "its node's new pod is available (with maxSurge the old pod goes once its replacement is up)")
	}
	for _, n := range allowed {
		s.create(n, st, "beside an old pod that is unavailable (outside maxSurge)")
	}
	k := min(max(s.maxSurge-numSurge, 0), len(cands))
	for _, p := range s.pick(cands, k, st, fmt.Sprintf("step %d creates new pods beside %d of these %d old pods (they go once those are available)", s.steps, k, len(cands))) {
		s.create(p.node, st, p.why)
	}
	return len(retire)+len(allowed)+k > 0
}

// nodePick is a node the update takes, and why.
type nodePick struct {
	node *dsNode
	why  string
}

// pick takes k of the candidate nodes. The controller walks a Go map
// built anew in each sync, so which k is not determined. A map of more
// than 8 entries places its keys by a hash with a random seed, so by
// symmetry each is taken with chance k/n; up to 8 it is one group kept in
// insertion order, read from a random one of 8 slots onwards, which favours
// the nodes added first (the informers' order): there the chances are not
// weighed. The nodes shown are the first k by name; the step is uncertain
// and a contender group says k of n.
func (s *dsSim) pick(cands []*dsNode, k int, st *prediction.RolloutStep, what string) []nodePick {
	out := make([]nodePick, 0, k)
	if k == 0 {
		return out
	}
	why := "every candidate node is taken"
	if len(s.groups) > 0 {
		why = "every candidate node left is taken (which are left follows an earlier step's Go map order)"
	}
	if k < len(cands) {
		st.Certain, s.certain = false, false
		g := prediction.ContenderGroup{Delete: k, Rule: "TIE", Exact: len(s.nodes) > smallMap}
		var names []string
		for _, n := range cands {
			names = append(names, n.old.Name)
			g.Pods = append(g.Pods, podName(n.old))
		}
		odds := fmt.Sprintf("chance %.0f%% each", 100*float64(k)/float64(len(cands)))
		if !g.Exact {
			odds = fmt.Sprintf("chances not weighed: with %d nodes or fewer Go's map iteration favours the nodes added to it first", smallMap)
		}
		why = fmt.Sprintf("%d of %d old pods (%s), in Go map order (%s)", k, len(cands), short(names), odds)
		g.Reason = what + ": the DaemonSet controller walks its nodes in Go map order, so which ones is undetermined (" + odds + ")"
		s.groups = append(s.groups, g)
	}
	for _, n := range cands[:k] {
		out = append(out, nodePick{n, why})
	}
	return out
}

// smallMap is the most entries a Go map keeps in one group (abi.MapGroupSlots,
// and bucketCnt before Go 1.24).
const smallMap = 8

// deleteOld: the old pod terminates, holding its node's resources until
// the step ends.
func (s *dsSim) deleteOld(n *dsNode, st *prediction.RolloutStep, why string) {
	st.Deleted = append(st.Deleted, podName(n.old))
	st.Why = append(st.Why, why)
	n.gone = append(n.gone, n.old)
	n.old, n.oldAvail = nil, false
}

// create is the new pod for a node, placed by the scheduler's filters.
func (s *dsSim) create(n *dsNode, st *prediction.RolloutStep, why string) {
	n.new, n.newAvail, n.fresh = s.newPod(n), false, true
	c := s.place(n)
	if c.Reason == "" {
		c.Reason = why
	}
	st.Created = append(st.Created, c)
}

// place runs the filters for the node's new pod. Where it does not fit
// while the node's deleted pods still terminate, it is retried once they
// are gone (the scheduler's retry after their grace period).
func (s *dsSim) place(n *dsNode) prediction.RolloutCreate {
	if s.fitsNow(n.name) {
		s.bind(n)
		return prediction.RolloutCreate{Node: n.name}
	}
	pl, err := s.view.Place(n.new)
	if err == nil && len(pl.Feasible) == 0 && len(n.gone) > 0 {
		s.releaseGone(n)
		pl, err = s.view.Place(n.new)
		if err == nil && len(pl.Feasible) > 0 {
			s.bind(n)
			return prediction.RolloutCreate{Node: n.name, Reason: "once the old pod is gone (it holds the node's resources for its grace period)"}
		}
	}
	if err != nil {
		n.fitError = err.Error()
		return prediction.RolloutCreate{Reason: n.fitError}
	}
	for _, u := range pl.Unmodelled {
		s.warnings = append(s.warnings, fmt.Sprintf("the new pods use %s, which the filters here do not model: where they fit is uncertain", u))
		s.certain = false
	}
	if len(pl.Feasible) == 0 {
		n.fitError = pl.FitError
		return prediction.RolloutCreate{Reason: n.fitError}
	}
	s.bind(n)
	return prediction.RolloutCreate{Node: n.name}
}

func (s *dsSim) bind(n *dsNode) {
	n.fitError = ""
	n.new.Spec.NodeName = n.name
	_ = s.view.Add(n.new)
}

func (s *dsSim) releaseGone(n *dsNode) {
	for _, p := range n.gone {
		s.view.Remove(p)
		delete(s.fits, n.name) // placed on its own from now on
	}
	n.gone = nil
}

// finishTerminations: the pods deleted in the step are gone.
func (s *dsSim) finishTerminations() {
	for _, n := range s.nodes {
		s.releaseGone(n)
	}
}

// retryPlacement: a new pod that fit nowhere is retried at each step.
func (s *dsSim) retryPlacement(st *prediction.RolloutStep) {
	for _, n := range s.nodes {
		if n.new != nil && n.fitError != "" {
			c := s.place(n)
			if n.fitError == "" {
				c.Reason = strings.TrimSpace("pending until now " + c.Reason)
				st.Created = append(st.Created, c)
			}
		}
	}
}

// waiting are the new pods bound and not yet available.
func (s *dsSim) waiting() []*dsNode {
	var out []*dsNode
	for _, n := range s.nodes {
		if n.new != nil && n.fresh && !n.newAvail && n.fitError == "" {
			out = append(out, n)
		}
	}
	return out
}

// verdict: completes, stalls (why, and what unblocks it), or not-started.
func (s *dsSim) verdict(res *Result) {
	r := &res.Rollout
	res.Certain = s.certain && res.Certain
	res.Warnings = append(res.Warnings, workload.Dedupe(s.warnings)...)
	res.Contenders = append(res.Contenders, s.groups...)
	switch {
	case len(s.nodes) == 0:
		r.Outcome, r.Reason = prediction.RolloutNotStarted, "no node in the input runs the DaemonSet (its nodeSelector, node affinity or tolerations leave every node out)"
	case s.done() && len(r.Steps) == 0:
		r.Outcome, r.Reason = prediction.RolloutNotStarted, "nothing changes: every pod already runs the new template"
	case s.done():
		r.Outcome = prediction.RolloutCompletes
	default:
		r.Outcome = prediction.RolloutStalls
		r.Remaining = s.oldPods()
		r.Reason, r.Unblock = s.stallReason()
		if len(s.groups) > 0 {
			r.Reason += "; which other nodes were updated before it stopped depends on Go map order"
		}
	}
}

// stallReason names what the update waits for forever.
func (s *dsSim) stallReason() (string, string) {
	for _, n := range s.nodes {
		if n.new == nil || n.fitError == "" {
			continue
		}
		if s.maxSurge > 0 {
			return fmt.Sprintf("the new pod for node %s fits nowhere beside the old pod, which keeps its resources until the new one is available: %s; it holds one of maxSurge %d for good", n.name, n.fitError, s.maxSurge),
				fmt.Sprintf("free room on node %s for a second daemon pod (or update with maxSurge 0 and maxUnavailable > 0, which deletes the old pod first)", n.name)
		}
		return fmt.Sprintf("the new pod for node %s fits nowhere, even with the old pod gone: %s; it counts against maxUnavailable %d for good", n.name, n.fitError, s.maxUnavail),
			fmt.Sprintf("free room on node %s", n.name)
	}
	for _, n := range s.nodes {
		if n.new != nil && !n.newAvail {
			return "the new pods never become available: the controller waits on them", "fix the new revision (kubectl rollout undo daemonset/" + s.ds.Name + ")"
		}
	}
	return "the controller makes no further change (" + strings.Join(s.oldPods(), ", ") + " remain)", "check the DaemonSet's status"
}

func (s *dsSim) waitingNew() int  { return len(s.waiting()) }
func (s *dsSim) badRelease() bool { return s.neverReady }
func (s *dsSim) budgetStates() []prediction.RolloutBudget {
	return statesOf(s.budgets, s.healthy)
}
