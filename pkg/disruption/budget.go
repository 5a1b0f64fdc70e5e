// Package disruption is PodDisruptionBudget arithmetic as the Kubernetes
// components do it: which pods a budget selects (the Eviction API's and the
// scheduler's matching differ), and the status the disruption controller
// computes (pkg/controller/disruption: expected pods from the owners'
// scale, minAvailable/maxUnavailable as integers or percentages rounded
// up, healthy pods, disruptionsAllowed, disruptedPods). Pure: the time is
// an argument.
package disruption

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Budget is one PodDisruptionBudget with its selector parsed.
type Budget struct {
	PDB *policyv1.PodDisruptionBudget
	// Selector is nil when spec.selector does not parse (Err says why):
	// the Eviction API and the scheduler then skip the budget, and the
	// controller cannot sync it.
	Selector labels.Selector
	Err      error
}

// Name is namespace/name.
func (b *Budget) Name() string { return b.PDB.Namespace + "/" + b.PDB.Name }

// Parse reads every budget; none is dropped.
func Parse(pdbs []*policyv1.PodDisruptionBudget) []*Budget {
	out := make([]*Budget, 0, len(pdbs))
	for _, p := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		if err != nil {
			out = append(out, &Budget{PDB: p, Err: fmt.Errorf("PodDisruptionBudget %s/%s: invalid selector: %w", p.Namespace, p.Name, err)})
			continue
		}
		out = append(out, &Budget{PDB: p, Selector: sel})
	}
	return out
}

// EvictionSelects is the Eviction API's getPodDisruptionBudgets: same
// namespace and a selector that parses and matches. An empty selector
// ({}) selects every pod of the namespace; a missing one selects none.
func (b *Budget) EvictionSelects(p *corev1.Pod) bool {
	return b.Selector != nil && b.PDB.Namespace == p.Namespace && b.Selector.Matches(labels.Set(p.Labels))
}

// SchedulerSelects is the scheduler's filterPodsWithPDBViolation match: it
// also skips an empty selector and pods without labels.
func (b *Budget) SchedulerSelects(p *corev1.Pod) bool {
	return b.Selector != nil && !b.Selector.Empty() && len(p.Labels) > 0 && b.EvictionSelects(p)
}

// UnhealthyAlwaysAllow: spec.unhealthyPodEvictionPolicy is AlwaysAllow
// and the API server keeps the field (honoured).
func (b *Budget) UnhealthyAlwaysAllow(honoured bool) bool {
	p := b.PDB.Spec.UnhealthyPodEvictionPolicy
	return honoured && p != nil && *p == policyv1.AlwaysAllow
}
