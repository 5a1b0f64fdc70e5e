package drain

import (
	"fmt"
	"slices"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/disruption"
)

// nodeDrain is one node's result and whether kubectl waits forever there.
type nodeDrain struct {
	result  NodeResult
	forever bool
}

// listed is a pod kubectl lists on the node with its filters' verdict.
type listed struct {
	p   *podState
	v   verdict
	res *PodResult
}

// list runs kubectl's filters over the node's pods.
func (s *state) list(node string, f *kubectlFilters) []listed {
	var out []listed
	for _, p := range s.candidates(node) {
		v := f.check(p.pod)
		out = append(out, listed{p: p, v: v, res: &PodResult{Pod: p.key, GracePeriodSeconds: s.gracePeriod(p.pod)}})
	}
	return out
}

// drainNode is deleteOrEvictPodsSimple: pre-checks, then evictions (or
// deletions) until every pod is gone or none can go.
func (s *state) drainNode(node string, f *kubectlFilters) nodeDrain {
	pods := s.list(node, f)
	nr := NodeResult{Node: node, Certain: true}
	if refused := s.refuse(&nr, pods); refused {
		return nodeDrain{result: nr}
	}
	var acted []listed
	for _, l := range pods {
		if l.v.skip {
			l.res.Action, l.res.Why = ActionSkipped, skipRule(l.p.pod, l.v)
			nr.Skipped = append(nr.Skipped, l.p.key)
		} else {
			acted = append(acted, l)
		}
	}
	forever := false
	if s.in.Options.DisableEviction {
		s.deleteAll(&nr, acted)
	} else {
		forever = s.evictAll(&nr, acted)
	}
	for _, l := range pods {
		nr.Pods = append(nr.Pods, *l.res)
	}
	s.conclude(&nr)
	return nodeDrain{result: nr, forever: forever}
}

// refuse: kubectl's pre-checks fail for some pod, so it evicts nothing on
// the node.
func (s *state) refuse(nr *NodeResult, pods []listed) bool {
	var msgs []string
	for _, l := range pods {
		if l.v.errMsg != "" && !slices.Contains(msgs, l.v.errMsg) {
			msgs = append(msgs, l.v.errMsg)
		}
	}
	if len(msgs) == 0 {
		return false
	}
	nr.Outcome = OutcomeRefused
	nr.Reason = "kubectl refuses to drain: cannot delete " + strings.Join(msgs, "; ")
	for _, l := range pods {
		switch {
		case l.v.errMsg != "":
			l.res.Action, l.res.Why = ActionRefused, l.v.errMsg
			nr.Remaining = append(nr.Remaining, l.p.key)
		case l.v.skip:
			l.res.Action, l.res.Why = ActionSkipped, skipRule(l.p.pod, l.v)
			nr.Skipped = append(nr.Skipped, l.p.key)
		default:
			l.res.Action, l.res.Why = ActionNotEvicted, "kubectl refused the node before any eviction"
			nr.Remaining = append(nr.Remaining, l.p.key)
		}
		nr.Pods = append(nr.Pods, *l.res)
	}
	return true
}

// conclude sets the outcome from the pods' actions.
func (s *state) conclude(nr *NodeResult) {
	for _, p := range nr.Pods {
		if p.Action == ActionBlocking {
			nr.Remaining = append(nr.Remaining, p.Pod)
		}
	}
	if len(nr.Remaining) == 0 {
		nr.Outcome = OutcomeDrained
		return
	}
	nr.Outcome = OutcomeBlocked
	var parts []string
	for _, p := range nr.Pods {
		if p.Action == ActionBlocking {
			why, _, _ := strings.Cut(p.Why, "; unblock: ")
			parts = append(parts, p.Pod+" ("+why+")")
		}
	}
	nr.Reason = "never leave: " + strings.Join(parts, "; ")
}

// notReached is a node kubectl cordoned but never drains: it waits
// forever on an earlier node.
func (s *state) notReached(node, stuckOn string, f *kubectlFilters) NodeResult {
	nr := NodeResult{Node: node, Outcome: OutcomeBlocked, Certain: true,
		Reason: fmt.Sprintf("never reached: kubectl waits forever on node %s (no --timeout); the node stays cordoned", stuckOn)}
	for _, l := range s.list(node, f) {
		if l.v.skip {
			l.res.Action, l.res.Why = ActionSkipped, skipRule(l.p.pod, l.v)
			nr.Skipped = append(nr.Skipped, l.p.key)
		} else {
			l.res.Action, l.res.Why = ActionNotEvicted, nr.Reason
			nr.Remaining = append(nr.Remaining, l.p.key)
		}
		nr.Pods = append(nr.Pods, *l.res)
	}
	return nr
}

// deleteAll is --disable-eviction: every pod is deleted at once, budgets
// unchecked; the budgets that fall below their minimum are named.
func (s *state) deleteAll(nr *NodeResult, acted []listed) {
	for _, l := range acted {
		l.res.Action, l.res.Why = ActionDeleted, "--disable-eviction deletes it without checking budgets"
		if bs := s.budgetsOf(l.p.pod); len(bs) > 0 {
			l.res.PDB = bs[0].b.PDB.Name
		}
		s.remove(l.p)
		nr.Evicted = append(nr.Evicted, l.p.key)
	}
	for _, bs := range s.budgets {
		if bs.b.Selector == nil || !slices.ContainsFunc(acted, func(l listed) bool { return bs.b.EvictionSelects(l.p.pod) }) {
			continue
		}
		c := bs.compute(s)
		if c.SyncFailed == "" && c.CurrentHealthy < c.DesiredHealthy {
			msg := fmt.Sprintf("deleting pods on node %s takes PDB %s below its minimum: %s, healthy %d < %d until the replacements are Ready", nr.Node, bs.b.Name(), disruption.Describe(bs.b), c.CurrentHealthy, c.DesiredHealthy)
			s.broken = append(s.broken, msg)
		}
	}
}
