package drain

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// NodeNotFoundError: a node to drain is not in the input.
type NodeNotFoundError struct{ Node string }

func (e *NodeNotFoundError) Error() string { return fmt.Sprintf("node %q not found", e.Node) }

// Predict simulates the drain: once per branch of the races between a
// round's replacements (enumerate), each binding every replacement to its
// least allocated feasible node (the scheduler's likeliest choice), a
// Job's after its back-off; then under variants that each change one thing
// the snapshot cannot settle. The creation-order branch is the answer,
// weighed against the other branches (weigh); what differs in a variant is
// marked uncertain.
func Predict(in Input) (*Result, error) {
	for _, name := range in.Drain {
		if !slices.ContainsFunc(in.Nodes, func(n *corev1.Node) bool { return n.Name == name }) {
			return nil, &NodeNotFoundError{Node: name}
		}
	}
	start, f := newState(in), newKubectlFilters(in)
	branches, exact := enumerate(start, f)
	res, seen := branches[0].res, branches[0].seen
	for _, b := range branches[1:] {
		compareNodes(res, b.res, orderDiffers)
		// A variant is needed when any branch met what it changes.
		seen.choice, seen.job, seen.assumed = seen.choice || b.seen.choice, seen.job || b.seen.job, seen.assumed || b.seen.assumed
	}
	for _, v := range variants[1:] {
		if v.needs(seen) {
			other, _ := run(start.clone(v), f)
			compareRuns(res, other, v.differs)
		}
	}
	weigh(res, branches, exact, in.Nodes)
	return res, nil
}

// variants are the runs Predict compares; the first is the answer's.
var variants = []variant{
	{pick: pickLeastAllocated, jobHold: 2},
	{pick: pickFirst, jobHold: 2, differs: scoring, needs: func(f facts) bool { return f.choice }},
	{pick: pickLast, jobHold: 2, differs: scoring, needs: func(f facts) bool { return f.choice }},
	{pick: pickLeastAllocated, jobHold: 0, needs: func(f facts) bool { return f.job },
		differs: "when the Job controller's back-off (10 s) lets a Job's replacement compete for room"},
	{pick: pickLeastAllocated, jobHold: 2, unreadyStays: true, needs: func(f facts) bool { return f.assumed },
		differs: "whether pods the snapshot cannot tell become Ready do"},
}

const orderDiffers = "the order in which kubectl's parallel evictions (or deletions) create the replacements"

const scoring = "which feasible node the scheduler picks for earlier replacements"

// run is one simulation from the cordoned cluster (newState): kubectl
// drains the nodes in order.
func run(s *state, f *kubectlFilters) (*Result, facts) {
	in := s.in
	res := &Result{Certain: true}
	stuckOn := ""
	for _, name := range in.Drain {
		if stuckOn != "" {
			res.Nodes = append(res.Nodes, s.notReached(name, stuckOn, f))
			continue
		}
		nd := s.drainNode(name, f)
		res.Nodes = append(res.Nodes, nd.result)
		if nd.forever {
			stuckOn = name
		}
		// kubectl waited for the pods to go; the replacements are
		// scheduled but need not be Ready when the next node starts.
		s.terminate()
		s.schedule()
		s.recompute()
	}
	s.releaseHolds()
	s.schedule()
	s.finish(res)
	s.seen.choice = s.choiceMade
	return res, s.seen
}

// finish fills the lists that span nodes.
func (s *state) finish(res *Result) {
	for _, n := range res.Nodes {
		res.Victims = append(res.Victims, n.Evicted...)
		if !n.Certain {
			res.Certain = false
		}
	}
	s.doubtRaced(res)
	for _, r := range s.repls {
		res.Replacements = append(res.Replacements, *r)
	}
	for _, bs := range s.budgets {
		if bs.b.Err != nil {
			res.Warnings = append(res.Warnings, bs.b.Err.Error()+": the Eviction API ignores it")
		}
	}
	res.Uncertain = append(res.Uncertain, s.notes...)
	if s.in.Options.Timeout > 0 && waited(res) {
		res.Warnings = append(res.Warnings, fmt.Sprintf("evictions that wait for pods to become Ready are assumed to succeed within --timeout=%s", s.in.Options.Timeout))
	}
	res.BrokenBudgets = s.broken
	s.doubtUnplaced(res)
}

// doubtUnplaced: a replacement that fits nowhere after an earlier one had
// a choice of nodes might have fitted had that choice been another; the
// nodes it blocks are uncertain.
func (s *state) doubtUnplaced(res *Result) {
	if !s.choiceMade {
		return
	}
	for i := range res.Replacements {
		r := &res.Replacements[i]
		if r.Node != "" {
			continue
		}
		r.Certain, res.Certain = false, false
		res.Uncertain = append(res.Uncertain, fmt.Sprintf("the replacement of %s fits nowhere, but an earlier replacement had a choice of nodes: another choice might have left room", r.For))
		for j := range res.Nodes {
			if res.Nodes[j].Outcome == OutcomeBlocked && strings.Contains(res.Nodes[j].Reason+blockingWhys(res.Nodes[j]), r.For) {
				res.Nodes[j].Certain = false
			}
		}
	}
}

// doubtRaced: replacements that raced for too little room; which of them
// is scheduled, and the nodes that wait on them, are uncertain.
func (s *state) doubtRaced(res *Result) {
	for _, r := range s.raced {
		res.Certain = false
		res.Uncertain = appendNew(res.Uncertain, fmt.Sprintf("the replacement of %s races with others created at once (kubectl evicts a node's pods in parallel) for too little room: whether it is scheduled depends on which is created first", r.For))
		for j := range res.Nodes {
			if res.Nodes[j].Outcome == OutcomeBlocked && strings.Contains(res.Nodes[j].Reason+blockingWhys(res.Nodes[j]), r.For) {
				res.Nodes[j].Certain = false
			}
		}
	}
}

func blockingWhys(n NodeResult) string {
	var b strings.Builder
	for _, p := range n.Pods {
		if p.Action == ActionBlocking {
			b.WriteString(p.Why)
		}
	}
	return b.String()
}

// candidates are the pods kubectl lists on the node, in the API's order
// (namespace, then name), limited by --pod-selector.
func (s *state) candidates(node string) []*podState {
	var out []*podState
	sel := s.in.Options.PodSelector
	for _, p := range s.pods {
		if p.gone || p.pending || p.pod.Spec.NodeName != node {
			continue
		}
		if sel != nil && !sel.Matches(labels.Set(p.pod.Labels)) {
			continue
		}
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b *podState) int {
		return cmp.Or(cmp.Compare(a.pod.Namespace, b.pod.Namespace), cmp.Compare(a.pod.Name, b.pod.Name))
	})
	return out
}

// compareRuns marks uncertain what the variant b changes: a node's
// outcome or lists, or whether and where a replacement is placed.
func compareRuns(a, b *Result, differs string) {
	compareNodes(a, b, differs)
	for i := range a.Replacements {
		r := &a.Replacements[i]
		if i < len(b.Replacements) && r.Node == b.Replacements[i].Node {
			continue
		}
		r.Certain = false // certain on a node only if every run puts it there
		if i >= len(b.Replacements) || (r.Node == "") != (b.Replacements[i].Node == "") {
			a.Certain = false // whether it is scheduled at all
			a.Uncertain = appendNew(a.Uncertain, fmt.Sprintf("the replacement of %s: whether it is scheduled depends on %s", r.For, differs))
		}
	}
	if len(a.Replacements) != len(b.Replacements) {
		a.Certain = false
	}
}

// compareNodes marks uncertain the nodes whose outcome or lists b
// changes (the branches of a race compare only these: weigh matches
// their replacements by the pod replaced).
func compareNodes(a, b *Result, differs string) {
	for i := range a.Nodes {
		x, y := &a.Nodes[i], &b.Nodes[i]
		if x.Outcome != y.Outcome || !sameSet(x.Evicted, y.Evicted) || !sameSet(x.Remaining, y.Remaining) || !sameSet(x.Skipped, y.Skipped) {
			x.Certain = false
			a.Certain = false
			a.Uncertain = appendNew(a.Uncertain, fmt.Sprintf("node %s: the outcome depends on %s", x.Node, differs))
		}
	}
}

func appendNew(list []string, msg string) []string {
	if slices.Contains(list, msg) {
		return list
	}
	return append(list, msg)
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// gracePeriod is what the pod gets: --grace-period, or its own.
func (s *state) gracePeriod(p *corev1.Pod) int64 {
	if g := s.in.Options.GracePeriodSeconds; g >= 0 {
		return int64(g)
	}
	if p.Spec.TerminationGracePeriodSeconds != nil {
		return *p.Spec.TerminationGracePeriodSeconds
	}
	return corev1.DefaultTerminationGracePeriodSeconds
}

func waited(res *Result) bool {
	for _, n := range res.Nodes {
		for _, p := range n.Pods {
			if p.Action == ActionEvictedAfterWait {
				return true
			}
		}
	}
	return false
}
