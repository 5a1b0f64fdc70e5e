package scheduling

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// weighted is fwk.WeightedAffinityTerm.
type weighted struct {
	term
	weight int64
}

func weightedOf(pod *corev1.Pod, in []corev1.WeightedPodAffinityTerm) ([]weighted, error) {
	out := make([]weighted, 0, len(in))
	for _, w := range in {
		ts, err := termsOf(pod, []corev1.PodAffinityTerm{w.PodAffinityTerm})
		if err != nil {
			return nil, err
		}
		out = append(out, weighted{ts[0], int64(w.Weight)})
	}
	return out, nil
}

// affinityTerms are a pod's terms that InterPodAffinity scores.
type affinityTerms struct {
	prefAff, prefAnti []weighted
	required          []term
}

func affinityTermsOf(pod *corev1.Pod) (affinityTerms, error) {
	var t affinityTerms
	a := pod.Spec.Affinity
	if a == nil {
		return t, nil
	}
	var err error
	if a.PodAffinity != nil {
		if t.prefAff, err = weightedOf(pod, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution); err != nil {
			return t, err
		}
		if t.required, err = termsOf(pod, a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
			return t, err
		}
	}
	if a.PodAntiAffinity != nil {
		t.prefAnti, err = weightedOf(pod, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
	}
	return t, err
}

// topoScore is InterPodAffinity's scoreMap: weight per topology pair.
type topoScore map[pair]int64

func (m topoScore) add(t *term, weight int64, p *corev1.Pod, nsl labels.Set, node *corev1.Node) {
	if !t.matches(p, nsl) {
		return
	}
	if v, ok := node.Labels[t.topologyKey]; ok {
		m[pair{t.topologyKey, v}] += weight
	}
}

// interPodAffinityScores is InterPodAffinity's score: the incoming pod's
// preferred terms against the pods in place, theirs (and their required
// affinity, hardPodAffinityWeight 1) against it; min-max normalised.
func (c *Cluster) interPodAffinityScores(nodes []*NodeState, ch *Choice) []int64 {
	out := make([]int64, len(nodes))
	own, err := affinityTermsOf(c.Pre.Pod)
	if err != nil {
		ch.Unmodelled = appendOnce(ch.Unmodelled, fmt.Sprintf("preferred inter-pod affinity: %v", err))
		return out
	}
	if a := c.Pre.Pod.Spec.Affinity; a != nil {
		var pref []corev1.WeightedPodAffinityTerm
		if a.PodAffinity != nil {
			pref = append(pref, a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution...)
		}
		if a.PodAntiAffinity != nil {
			pref = append(pref, a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution...)
		}
		for _, w := range pref {
			if len(w.PodAffinityTerm.MatchLabelKeys)+len(w.PodAffinityTerm.MismatchLabelKeys) > 0 {
				ch.Unmodelled = appendOnce(ch.Unmodelled, "matchLabelKeys/mismatchLabelKeys in preferred inter-pod affinity are not modelled")
			}
		}
	}
	c.resolveWeighted(own.prefAff, ch)
	c.resolveWeighted(own.prefAnti, ch)
	hasOwn := len(own.prefAff)+len(own.prefAnti) > 0
	nsl := c.preNsLabels()
	m := topoScore{}
	for _, n := range c.Nodes {
		if len(n.Node.Labels) == 0 {
			continue
		}
		for _, p := range n.Pods {
			if a := p.Pod.Spec.Affinity; !hasOwn && (a == nil || (a.PodAffinity == nil && a.PodAntiAffinity == nil)) {
				continue
			}
			c.scoreExisting(m, own, p.Pod, n.Node, nsl, ch)
		}
	}
	if len(m) == 0 {
		return out // PreScore skips
	}
	for i, n := range nodes {
		for k, w := range m {
			if v, ok := n.Node.Labels[k.key]; ok && v == k.value {
				out[i] += w
			}
		}
	}
	lo, hi := out[0], out[0]
	for _, s := range out {
		lo, hi = min(lo, s), max(hi, s)
	}
	for i, s := range out {
		out[i] = 0
		if hi > lo {
			out[i] = int64(float64(maxNodeScore) * (float64(s-lo) / float64(hi-lo)))
		}
	}
	return out
}

// scoreExisting is processExistingPod.
func (c *Cluster) scoreExisting(m topoScore, own affinityTerms, p *corev1.Pod, node *corev1.Node, nsl labels.Set, ch *Choice) {
	for i := range own.prefAff {
		m.add(&own.prefAff[i].term, own.prefAff[i].weight, p, nil, node)
	}
	for i := range own.prefAnti {
		m.add(&own.prefAnti[i].term, -own.prefAnti[i].weight, p, nil, node)
	}
	theirs, err := affinityTermsOf(p)
	if err != nil {
		return // the scheduler's cache could not have parsed it either
	}
	if nsl == nil && needsNs(theirs) {
		ch.Unmodelled = appendOnce(ch.Unmodelled, fmt.Sprintf("pod %s/%s has preferred inter-pod affinity with a namespaceSelector; the namespaces' labels were not read", p.Namespace, p.Name))
	}
	for i := range theirs.required {
		m.add(&theirs.required[i], 1, c.Pre.Pod, nsl, node)
	}
	for i := range theirs.prefAff {
		m.add(&theirs.prefAff[i].term, theirs.prefAff[i].weight, c.Pre.Pod, nsl, node)
	}
	for i := range theirs.prefAnti {
		m.add(&theirs.prefAnti[i].term, -theirs.prefAnti[i].weight, c.Pre.Pod, nsl, node)
	}
}

func needsNs(t affinityTerms) bool {
	for _, x := range t.required {
		if x.needsNsLabels {
			return true
		}
	}
	for _, x := range append(t.prefAff, t.prefAnti...) {
		if x.needsNsLabels {
			return true
		}
	}
	return false
}

// resolveWeighted gives the incoming pod's preferred namespaceSelectors
// their namespaces (mergeAffinityTermNamespacesIfNotEmpty).
func (c *Cluster) resolveWeighted(ws []weighted, ch *Choice) {
	for i := range ws {
		t := &ws[i].term
		if !t.needsNsLabels {
			continue
		}
		if c.nsLabels == nil {
			ch.Unmodelled = appendOnce(ch.Unmodelled, "preferred inter-pod affinity with a namespaceSelector needs the namespaces' labels, which were not read")
		}
		for ns, l := range c.nsLabels {
			if t.nsSelector.Matches(l) {
				t.namespaces[ns] = true
			}
		}
		t.nsSelector = labels.Nothing()
	}
}
