package preemption

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// cluster is the scheduler's snapshot plus the preemptor's PreFilter state
// (inter-pod affinity counts, topology spread counts). Fit checks change
// it in place and undo their changes.
type cluster struct {
	rules     rules.SchedulerRules
	pre       *podInfo
	preLabels labels.Set
	preAff    nodeaffinity.RequiredNodeAffinity
	affTerms  []term
	antiTerms []term
	nsLabels  map[string]labels.Set // nil: namespaces unknown
	nodes     []*nodeState          // in the scheduler's snapshot order
	byName    map[string]*nodeState

	affinityOn   bool // InterPodAffinity PreFilter did not skip
	existingAnti counts
	affCounts    counts
	antiCounts   counts
	spread       []*spreadConstraint

	unmodelled []string
	// spareTies are the nodes whose victims depend on the cache order;
	// spareTieAt is where their one warning goes in Result.Uncertain.
	spareTies  []string
	spareTieAt int
}

func (c *cluster) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !slices.Contains(c.unmodelled, msg) {
		c.unmodelled = append(c.unmodelled, msg)
	}
}

func (c *cluster) preNsLabels() labels.Set {
	if c.nsLabels == nil {
		return nil
	}
	return c.nsLabels[c.pre.pod.Namespace]
}

func newCluster(in Input) (*cluster, error) {
	r := in.Rules
	pre, err := newPodInfo(in.Preemptor, r, false, nil)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: %w", in.Preemptor.Namespace, in.Preemptor.Name, err)
	}
	c := &cluster{rules: r, pre: pre, preLabels: labels.Set(in.Preemptor.Labels), byName: map[string]*nodeState{},
		preAff: nodeaffinity.GetRequiredNodeAffinity(in.Preemptor)}
	if in.Namespaces != nil {
		c.nsLabels = map[string]labels.Set{}
		for _, ns := range in.Namespaces {
			c.nsLabels[ns.Name] = labels.Set(ns.Labels)
		}
	}
	if c.affTerms, err = termsOf(in.Preemptor, requiredAffinity(in.Preemptor)); err != nil {
		return nil, err
	}
	c.antiTerms = pre.antiTerms
	for _, t := range append(slices.Clone(c.affTerms), c.antiTerms...) {
		if t.needsNsLabels {
			if c.nsLabels == nil {
				c.note("inter-pod (anti-)affinity with a namespaceSelector needs the namespaces' labels, which were not read")
			} else {
				for ns, l := range c.nsLabels {
					if t.nsSelector.Matches(l) {
						t.namespaces[ns] = true
					}
				}
			}
		}
	}
	// The incoming pod's own terms have their namespaceSelector resolved to
	// names, then matched with no namespace labels.
	for i := range c.affTerms {
		if c.affTerms[i].needsNsLabels {
			c.affTerms[i].nsSelector = labels.Nothing()
		}
	}
	for i := range c.antiTerms {
		if c.antiTerms[i].needsNsLabels {
			c.antiTerms[i].nsSelector = labels.Nothing()
		}
	}

	for _, n := range orderNodes(in.Nodes) {
		ns := newNodeState(n)
		ns.static = staticFailure(in.Preemptor, n, c.preAff)
		c.nodes = append(c.nodes, ns)
		c.byName[n.Name] = ns
	}
	prePrio := pre.priority
	scratch := corev1.ResourceList{}
	for i, p := range in.Pods {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue // the scheduler's informer does not see finished pods
		}
		if p.UID == in.Preemptor.UID && p.Namespace == in.Preemptor.Namespace && p.Name == in.Preemptor.Name {
			continue
		}
		if p.Spec.NodeName == "" {
			nom := p.Status.NominatedNodeName
			if nom == "" || corev1helpers.PodPriority(p) < prePrio {
				continue
			}
			if n := c.byName[nom]; n != nil {
				pi, err := newPodInfo(p, r, false, scratch)
				if err != nil {
					return nil, err
				}
				pi.node, pi.index = n, i
				n.nominated = append(n.nominated, pi)
			}
			continue
		}
		n := c.byName[p.Spec.NodeName]
		if n == nil {
			continue // no NodeInfo without its Node in the snapshot
		}
		pi, err := newPodInfo(p, r, true, scratch)
		if err != nil {
			return nil, err
		}
		pi.node, pi.index = n, i
		n.pods = append(n.pods, pi)
		n.addUsage(pi, 1)
		for _, t := range pi.antiTerms {
			if t.needsNsLabels && c.nsLabels == nil && t.selector.Matches(c.preLabels) {
				c.note("pod %s/%s has anti-affinity with a namespaceSelector; the namespaces' labels were not read", p.Namespace, p.Name)
			}
		}
	}
	if err := c.buildSpread(in.Preemptor); err != nil {
		return nil, err
	}
	c.buildAffinity()
	return c, nil
}

// orderNodes is the scheduler cache's node tree order: zones (region and
// zone labels) in order of first appearance, nodes taken round-robin from
// each zone.
func orderNodes(nodes []*corev1.Node) []*corev1.Node {
	var zones []string
	byZone := map[string][]*corev1.Node{}
	for _, n := range nodes {
		z := n.Labels[corev1.LabelTopologyRegion] + ":\x00:" + n.Labels[corev1.LabelTopologyZone]
		if _, ok := byZone[z]; !ok {
			zones = append(zones, z)
		}
		byZone[z] = append(byZone[z], n)
	}
	if len(zones) <= 1 {
		return nodes
	}
	out := make([]*corev1.Node, 0, len(nodes))
	for i := 0; len(out) < len(nodes); i++ {
		for _, z := range zones {
			if i < len(byZone[z]) {
				out = append(out, byZone[z][i])
			}
		}
	}
	return out
}

func (c *cluster) buildAffinity() {
	c.existingAnti, c.affCounts, c.antiCounts = counts{}, counts{}, counts{}
	nsl := c.preNsLabels()
	for _, n := range c.nodes {
		for _, p := range n.pods {
			c.affinityUpdate(p, n.node, 1, nsl)
		}
	}
	c.affinityOn = len(c.existingAnti) > 0 || len(c.affTerms) > 0 || len(c.antiTerms) > 0
}

// affinityUpdate is the InterPodAffinity preFilterState.updateWithPod.
func (c *cluster) affinityUpdate(p *podInfo, node *corev1.Node, delta int64, nsl labels.Set) {
	for i := range p.antiTerms {
		if p.antiTerms[i].matches(c.pre.pod, nsl) {
			c.existingAnti.update(node, p.antiTerms[i].topologyKey, delta)
		}
	}
	if c.matchesAllAffinity(p.pod) {
		for _, t := range c.affTerms {
			c.affCounts.update(node, t.topologyKey, delta)
		}
	}
	for i := range c.antiTerms {
		if c.antiTerms[i].matches(p.pod, nil) {
			c.antiCounts.update(node, c.antiTerms[i].topologyKey, delta)
		}
	}
}

func (c *cluster) matchesAllAffinity(p *corev1.Pod) bool {
	if len(c.affTerms) == 0 {
		return false
	}
	for i := range c.affTerms {
		if !c.affTerms[i].matches(p, nil) {
			return false
		}
	}
	return true
}

func (c *cluster) buildSpread(pod *corev1.Pod) error {
	for _, tsc := range pod.Spec.TopologySpreadConstraints {
		if tsc.WhenUnsatisfiable != corev1.DoNotSchedule {
			continue
		}
		ls := tsc.LabelSelector
		if c.rules.MatchLabelKeys && len(tsc.MatchLabelKeys) > 0 && ls != nil {
			ls = ls.DeepCopy()
			for _, k := range tsc.MatchLabelKeys {
				if v, ok := pod.Labels[k]; ok {
					ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{v}})
				}
			}
		}
		sel, err := metav1.LabelSelectorAsSelector(ls)
		if err != nil {
			return fmt.Errorf("topology spread constraint: %w", err)
		}
		sc := &spreadConstraint{maxSkew: tsc.MaxSkew, minDomains: 1, topologyKey: tsc.TopologyKey, selector: sel,
			honorAff: true, matchNum: map[string]int{}, paths: newCriticalPaths()}
		if c.rules.MinDomains && tsc.MinDomains != nil {
			sc.minDomains = *tsc.MinDomains
		}
		if c.rules.NodeInclusionPolicy {
			sc.honorAff = tsc.NodeAffinityPolicy == nil || *tsc.NodeAffinityPolicy == corev1.NodeInclusionPolicyHonor
			sc.honorTaints = tsc.NodeTaintsPolicy != nil && *tsc.NodeTaintsPolicy == corev1.NodeInclusionPolicyHonor
		}
		c.spread = append(c.spread, sc)
	}
	if len(c.spread) == 0 {
		return nil
	}
	// Before 1.24 a domain, once one of its nodes was eligible, counted the
	// pods of every node with the constraint's key.
	domains := make([]map[string]bool, len(c.spread))
	for i, sc := range c.spread {
		domains[i] = map[string]bool{}
		for _, n := range c.nodes {
			if c.spreadNodeEligible(n.node) && c.spreadIncludes(sc, n.node) {
				domains[i][n.node.Labels[sc.topologyKey]] = true
			}
		}
	}
	for _, n := range c.nodes {
		counted := c.spreadNodeEligible(n.node)
		for i, sc := range c.spread {
			v, hasKey := n.node.Labels[sc.topologyKey]
			switch {
			case c.rules.SpreadCountsMatchingNodesOnly && (!counted || !c.spreadIncludes(sc, n.node)):
				continue
			case !c.rules.SpreadCountsMatchingNodesOnly && (!hasKey || !domains[i][v]):
				continue
			}
			cnt := 0
			if !sc.selector.Empty() {
				for _, p := range n.pods {
					if p.pod.DeletionTimestamp == nil && p.pod.Namespace == pod.Namespace && sc.selector.Matches(labels.Set(p.pod.Labels)) {
						cnt++
					}
				}
			}
			sc.matchNum[v] += cnt
		}
	}
	for _, sc := range c.spread {
		for v, num := range sc.matchNum {
			sc.paths.update(v, num)
		}
	}
	return nil
}

// spreadNodeEligible: the node has every constraint's key and, without
// node inclusion policies, matches the pod's required node affinity.
func (c *cluster) spreadNodeEligible(n *corev1.Node) bool {
	for _, sc := range c.spread {
		if _, ok := n.Labels[sc.topologyKey]; !ok {
			return false
		}
	}
	if !c.rules.NodeInclusionPolicy {
		if ok, _ := c.preAff.Match(n); !ok {
			return false
		}
	}
	return true
}

func (c *cluster) spreadIncludes(sc *spreadConstraint, n *corev1.Node) bool {
	if !c.rules.NodeInclusionPolicy {
		return true
	}
	if sc.honorAff {
		if ok, _ := c.preAff.Match(n); !ok {
			return false
		}
	}
	if sc.honorTaints {
		if _, bad := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, c.pre.pod.Spec.Tolerations, func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}, false); bad {
			return false
		}
	}
	return true
}

// spreadUpdate is PodTopologySpread.updateWithPod: note that it does not
// skip terminating pods, although the initial count does.
func (c *cluster) spreadUpdate(p *podInfo, n *corev1.Node, delta int) {
	if len(c.spread) == 0 || p.pod.Namespace != c.pre.pod.Namespace || !c.spreadNodeEligible(n) {
		return
	}
	pl := labels.Set(p.pod.Labels)
	for _, sc := range c.spread {
		if !sc.selector.Matches(pl) || !c.spreadIncludes(sc, n) {
			continue
		}
		v := n.Labels[sc.topologyKey]
		sc.matchNum[v] += delta
		sc.paths.update(v, sc.matchNum[v])
	}
}

// move adds (sign 1) or removes (sign -1) a pod on its node, with the
// PreFilter extensions' AddPod/RemovePod.
func (c *cluster) move(p *podInfo, n *nodeState, sign int) {
	n.addUsage(p, sign)
	if c.affinityOn {
		c.affinityUpdate(p, n.node, int64(sign), c.preNsLabels())
	}
	c.spreadUpdate(p, n.node, sign)
}

// status codes of a filter run.
const (
	fits = iota
	unschedulable
	unresolvable
)

type verdict struct {
	code   int
	reason string
}

// filter runs the pod-dependent filters on n in the default profile's
// order: NodePorts, NodeResourcesFit, PodTopologySpread, InterPodAffinity.
func (c *cluster) filter(n *nodeState) verdict {
	if n.static != "" {
		return verdict{unresolvable, n.static}
	}
	for _, hp := range c.pre.ports {
		if n.portConflict(hp) {
			return verdict{unschedulable, "node(s) didn't have free ports for the requested pod ports"}
		}
	}
	if v := c.fitResources(n); v.code != fits {
		return v
	}
	for _, sc := range c.spread {
		val, ok := n.node.Labels[sc.topologyKey]
		if !ok {
			return verdict{unresolvable, "node(s) didn't match pod topology spread constraints (missing required label)"}
		}
		minNum := sc.paths[0].num
		if c.rules.MinDomains && len(sc.matchNum) < int(sc.minDomains) {
			minNum = 0
		}
		self := 0
		if sc.selector.Matches(c.preLabels) {
			self = 1
		}
		if sc.matchNum[val]+self-minNum > int(sc.maxSkew) {
			return verdict{unschedulable, "node(s) didn't match pod topology spread constraints"}
		}
	}
	if c.affinityOn {
		if len(c.affTerms) > 0 {
			exist := true
			for _, t := range c.affTerms {
				v, ok := n.node.Labels[t.topologyKey]
				if !ok {
					return verdict{unresolvable, "node(s) didn't match pod affinity rules"}
				}
				if c.affCounts[pair{t.topologyKey, v}] <= 0 {
					exist = false
				}
			}
			if !exist && (len(c.affCounts) != 0 || !c.matchesAllAffinity(c.pre.pod)) {
				return verdict{unresolvable, "node(s) didn't match pod affinity rules"}
			}
		}
		if len(c.antiCounts) > 0 {
			for _, t := range c.antiTerms {
				if v, ok := n.node.Labels[t.topologyKey]; ok && c.antiCounts[pair{t.topologyKey, v}] > 0 {
					return verdict{unschedulable, "node(s) didn't match pod anti-affinity rules"}
				}
			}
		}
		if len(c.existingAnti) > 0 {
			for k, v := range n.node.Labels {
				if c.existingAnti[pair{k, v}] > 0 {
					return verdict{unschedulable, "node(s) didn't satisfy existing pods anti-affinity rules"}
				}
			}
		}
	}
	return verdict{fits, ""}
}

func (c *cluster) fitResources(n *nodeState) verdict {
	var reasons []string
	code := fits
	if int64(n.podCount)+1 > n.allowedPods {
		reasons, code = append(reasons, "Too many pods"), unschedulable
	}
	req := c.pre.req
	if req.milliCPU == 0 && req.memory == 0 && req.ephemeral == 0 && len(req.scalar) == 0 {
		return verdict{code, join(reasons)}
	}
	check := func(name string, want, alloc, used int64) {
		if want > 0 && want > alloc-used {
			reasons = append(reasons, "Insufficient "+name)
			if code == fits {
				code = unschedulable
			}
			if c.rules.RequestAboveAllocatableUnresolvable && want > alloc {
				code = unresolvable
			}
		}
	}
	check("cpu", req.milliCPU, n.allocatable.milliCPU, n.requested.milliCPU)
	check("memory", req.memory, n.allocatable.memory, n.requested.memory)
	check("ephemeral-storage", req.ephemeral, n.allocatable.ephemeral, n.requested.ephemeral)
	for _, name := range sortedNames(req.scalar) {
		if req.scalar[name] == 0 {
			continue
		}
		check(string(name), req.scalar[name], n.allocatable.scalar[name], n.requested.scalar[name])
	}
	return verdict{code, join(reasons)}
}

// filterWithNominated is RunFilterPluginsWithNominatedPods: the pod must
// fit with the nominated pods of at least its priority on the node, and
// without them.
func (c *cluster) filterWithNominated(n *nodeState) verdict {
	if len(n.nominated) == 0 || n.static != "" {
		return c.filter(n)
	}
	for _, p := range n.nominated {
		c.move(p, n, 1)
	}
	v := c.filter(n)
	for _, p := range n.nominated {
		c.move(p, n, -1)
	}
	if v.code != fits {
		return v
	}
	return c.filter(n)
}
