package e2e

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// rolloutContender is a contender group of the rollout's answer: which
// Delete of Pods a step takes is left to the DaemonSet controller's Go map
// order (docs/rollout.md).
type rolloutContender struct {
	Pods   []string `json:"pods"`
	Delete int      `json:"delete"`
	Reason string   `json:"reason"`
	// Exact: the chance k/n is given (a map of more than 8 nodes).
	Exact bool `json:"exact"`
}

// compareDaemonSet: the DaemonSet controller walks its nodes in Go map
// order, so the plugin names sets, not an order. Compared: the outcome;
// the victims and the nodes given a new pod when the rollout completes
// (or the answer is certain); the first deletions as k of the candidates
// the first contender group names, beside the deletions it calls
// determined; the chance k/n of the first candidate by name where given
// (more than 8 nodes); the new pods that fit nowhere; the budgets.
func (c *updateComparison) compareDaemonSet(p *rolloutPrediction, o *updateObserved) {
	r := p.Rollout
	if o.rec.newNeverReady {
		// The bad release's first step is the rollout's first step.
		f := r.IfNewPodsFail
		if f == nil {
			c.check("ifNewPodsFail", false, "missing")
			return
		}
		c.check("ifNewPodsFail.availableMin", f.AvailableMin == o.rec.availableMin, "predicted %d, real %d", f.AvailableMin, o.rec.availableMin)
		c.check("ifNewPodsFail.deleted", len(f.Deleted) == len(o.victims), "predicted %v, real %v", f.Deleted, o.victims)
		c.compareDSFirstDeletions(p, o, f.Deleted)
		c.compareBudgets(p, o)
		return
	}
	c.check("outcome", r.Outcome == o.outcome, "predicted %s (%s), real %s", r.Outcome, r.Reason, o.outcome)
	if p.Certain || r.Outcome == "completes" {
		c.check("victims", sameSet(p.Victims, o.victims), "predicted %v, real %v", p.Victims, o.victims)
		c.check("ds.nodes", sameSet(dsPredictedNodes(p), dsRealNodes(o)), "new pods predicted on %v, bound on %v", sorted(dsPredictedNodes(p)), sorted(dsRealNodes(o)))
	} else {
		c.uncertain = append(c.uncertain, "victims")
	}
	if p.Certain && r.Outcome == "stalls" {
		c.check("remaining", sameSet(r.Remaining, o.remaining), "predicted %v, real %v", r.Remaining, o.remaining)
	}
	c.compareDSFirstDeletions(p, o, firstDeleted(p))
	nowhere, unbound := 0, 0
	for _, st := range r.Steps {
		for _, cr := range st.Created {
			if cr.Node == "" && cr.Reason != "" {
				nowhere++
			}
		}
	}
	for _, cr := range o.created {
		if cr.node == "" {
			unbound++
		}
	}
	if r.Outcome == "stalls" {
		c.check("fits-nowhere", nowhere == unbound, "predicted %d new pods that fit nowhere, real %d unbound", nowhere, unbound)
	}
	c.compareBudgets(p, o)
}

// compareDSFirstDeletions: the first step that deletes names D (a bad
// release: the old pods it deletes); the real
// rollout's first len(D) deletions must hold D's determined pods (those
// outside the first contender group) and otherwise pods of that group.
// Each pod of the group was predicted deleted by then with chance k/n.
// (Go's map iteration starts at a random place; the DaemonSet controller
// builds the map anew in every sync.)
func (c *updateComparison) compareDSFirstDeletions(p *rolloutPrediction, o *updateObserved, d []string) {
	if len(p.Contenders) > 0 && strings.Contains(p.Contenders[0].Reason, "creates new pods beside") {
		c.compareDSFirstSurge(p.Contenders[0], o)
		return
	}
	if len(d) == 0 || len(o.victims) < len(d) {
		c.check("ds.first", len(d) == 0 && len(o.victims) == 0, "predicted first deletions %v, real %v", d, o.victims)
		return
	}
	first := o.victims[:len(d)]
	if len(p.Contenders) == 0 {
		c.check("ds.first", sameSet(d, first), "predicted first deletions %v, real %v", d, first)
		return
	}
	g := p.Contenders[0]
	ok := true
	for _, pod := range d {
		if !slices.Contains(g.Pods, pod) && !slices.Contains(first, pod) {
			ok = false // a determined deletion came later
		}
	}
	for _, pod := range first {
		if !slices.Contains(g.Pods, pod) && !slices.Contains(d, pod) {
			ok = false // a pod outside the candidates went first
		}
	}
	c.check("ds.first", ok, "first deletions %v: not %v's determined pods plus %d of %v (%s)", first, d, g.Delete, g.Pods, g.Reason)
	c.uncertain = append(c.uncertain, "ds.first (map order)")
	// One pod per group (the first by name, the one the plugin shows): a
	// group's hits always add up to k, so only one pod's tests the odds.
	if g.Exact {
		c.chances = append(c.chances, chanceObs{p: float64(g.Delete) / float64(len(g.Pods)), hit: slices.Contains(first, g.Pods[0])})
	}
}

// firstDeleted is the first step that deletes.
func firstDeleted(p *rolloutPrediction) []string {
	for _, st := range p.Rollout.Steps {
		if len(st.Deleted) > 0 {
			return st.Deleted
		}
	}
	return nil
}

// dsPredictedNodes are the nodes the plugin gives a new pod.
func dsPredictedNodes(p *rolloutPrediction) []string {
	var out []string
	for _, st := range p.Rollout.Steps {
		for _, cr := range st.Created {
			if cr.Node != "" {
				out = append(out, cr.Node)
			}
		}
	}
	return out
}

// dsRealNodes are the nodes new pods were bound to.
func dsRealNodes(o *updateObserved) []string {
	var out []string
	for _, cr := range o.created {
		if cr.node != "" {
			out = append(out, cr.node)
		}
	}
	return out
}

// compareDSFirstSurge: with maxSurge the first contender group names the
// old pods beside which k new pods go first; the nodes of the first k new
// pods created must be theirs, each with chance k/n.
func (c *updateComparison) compareDSFirstSurge(g rolloutContender, o *updateObserved) {
	nodeOf, target := map[string]string{}, map[string]string{}
	for _, st := range o.rec.pods {
		if st.old {
			nodeOf[st.key] = st.node
		}
		target[st.key] = st.target
	}
	var first []string
	for _, cr := range o.created[:min(g.Delete, len(o.created))] {
		first = append(first, target[cr.pod])
	}
	var poolNodes []string
	for _, pod := range g.Pods {
		poolNodes = append(poolNodes, nodeOf[pod])
	}
	ok := len(first) == g.Delete
	for _, n := range first {
		ok = ok && slices.Contains(poolNodes, n)
	}
	c.check("ds.first", ok, "first new pods on %v: not %d of the nodes of %v (%v)", first, g.Delete, g.Pods, poolNodes)
	c.uncertain = append(c.uncertain, "ds.first (map order)")
	if g.Exact {
		c.chances = append(c.chances, chanceObs{p: float64(g.Delete) / float64(len(g.Pods)), hit: slices.Contains(first, poolNodes[0])})
	}
}

// dsTarget is the node a daemon pod's required node affinity names
// (metadata.name In [node]): set at creation, before any binding.
func dsTarget(p *corev1.Pod) string {
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return p.Spec.NodeName
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			if f.Key == "metadata.name" && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return p.Spec.NodeName
}
