package scheduling

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// Cluster is the scheduler's snapshot plus the preemptor's PreFilter state
// (inter-pod affinity counts, topology spread counts). Fit checks change
// it in place and undo their changes.
type Cluster struct {
	Rules     rules.SchedulerRules
	Pre       *PodInfo
	preLabels labels.Set
	preAff    nodeaffinity.RequiredNodeAffinity
	preScalar []corev1.ResourceName // the pod's extended resources, sorted
	affTerms  []term
	antiTerms []term
	nsLabels  map[string]labels.Set // nil: namespaces unknown
	Nodes     []*NodeState          // in the scheduler's snapshot order
	ByName    map[string]*NodeState

	affinityOn   bool // InterPodAffinity PreFilter did not skip
	existingAnti counts
	affCounts    counts
	antiCounts   counts
	spread       []*spreadConstraint

	owner  *metav1.LabelSelector // the pod's controller's selector (scoring)
	images *map[string]int       // nodes per image name, shared with the view

	Unmodelled []string
}

func (c *Cluster) Note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !slices.Contains(c.Unmodelled, msg) {
		c.Unmodelled = append(c.Unmodelled, msg)
	}
}

func (c *Cluster) preNsLabels() labels.Set {
	if c.nsLabels == nil {
		return nil
	}
	return c.nsLabels[c.Pre.Pod.Namespace]
}

// NewCluster builds the scheduler's view for scheduling in.Pod: a View
// of the other pods, with in.Pod's PreFilter state.
func NewCluster(in Input) (*Cluster, error) {
	if _, err := newPodInfo(in.Pod, in.Rules, false, nil); err != nil {
		return nil, fmt.Errorf("pod %s/%s: %w", in.Pod.Namespace, in.Pod.Name, err)
	}
	if _, err := termsOf(in.Pod, requiredAffinity(in.Pod)); err != nil {
		return nil, err // the pod's own errors first, as the scheduler's PreFilter
	}
	others := make([]*corev1.Pod, 0, len(in.Pods))
	for _, p := range in.Pods {
		if p.UID != in.Pod.UID || p.Namespace != in.Pod.Namespace || p.Name != in.Pod.Name {
			others = append(others, p)
		}
	}
	v, err := NewView(in.Nodes, others, in.Namespaces, in.Rules)
	if err != nil {
		return nil, err
	}
	c, err := v.cluster(in.Pod)
	if err != nil {
		return nil, err
	}
	v.staticFilters(in.Pod, c, "")
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

// buildAffinity counts the InterPodAffinity PreFilter state. Without
// terms of its own, the incoming pod meets only the bound pods' anti
// terms (anti), so the other pods need no look.
func (c *Cluster) buildAffinity(anti []*PodInfo) {
	c.existingAnti, c.affCounts, c.antiCounts = counts{}, counts{}, counts{}
	nsl := c.preNsLabels()
	if len(c.affTerms) == 0 && len(c.antiTerms) == 0 {
		for _, p := range anti {
			c.affinityUpdate(p, c.ByName[p.Pod.Spec.NodeName].Node, 1, nsl)
		}
	} else {
		for _, n := range c.Nodes {
			for _, p := range n.Pods {
				c.affinityUpdate(p, n.Node, 1, nsl)
			}
		}
	}
	c.affinityOn = len(c.existingAnti) > 0 || len(c.affTerms) > 0 || len(c.antiTerms) > 0
}

// affinityUpdate is the InterPodAffinity preFilterState.updateWithPod.
func (c *Cluster) affinityUpdate(p *PodInfo, node *corev1.Node, delta int64, nsl labels.Set) {
	for i := range p.antiTerms {
		if p.antiTerms[i].matches(c.Pre.Pod, nsl) {
			c.existingAnti.update(node, p.antiTerms[i].topologyKey, delta)
		}
	}
	if c.matchesAllAffinity(p.Pod) {
		for _, t := range c.affTerms {
			c.affCounts.update(node, t.topologyKey, delta)
		}
	}
	for i := range c.antiTerms {
		if c.antiTerms[i].matches(p.Pod, nil) {
			c.antiCounts.update(node, c.antiTerms[i].topologyKey, delta)
		}
	}
}

func (c *Cluster) matchesAllAffinity(p *corev1.Pod) bool {
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

func (c *Cluster) buildSpread(pod *corev1.Pod) error {
	for _, tsc := range pod.Spec.TopologySpreadConstraints {
		if tsc.WhenUnsatisfiable != corev1.DoNotSchedule {
			continue
		}
		sc, err := c.parseSpread(tsc, pod)
		if err != nil {
			return err
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
		for _, n := range c.Nodes {
			if c.spreadNodeEligible(n.Node) && c.spreadIncludes(sc, n.Node) {
				domains[i][n.Node.Labels[sc.topologyKey]] = true
			}
		}
	}
	for _, n := range c.Nodes {
		counted := c.spreadNodeEligible(n.Node)
		for i, sc := range c.spread {
			v, hasKey := n.Node.Labels[sc.topologyKey]
			switch {
			case c.Rules.SpreadCountsMatchingNodesOnly && (!counted || !c.spreadIncludes(sc, n.Node)):
				continue
			case !c.Rules.SpreadCountsMatchingNodesOnly && (!hasKey || !domains[i][v]):
				continue
			}
			cnt := 0
			if !sc.selector.Empty() {
				for _, p := range n.Pods {
					if p.Pod.DeletionTimestamp == nil && p.Pod.Namespace == pod.Namespace && sc.selector.Matches(labels.Set(p.Pod.Labels)) {
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
func (c *Cluster) spreadNodeEligible(n *corev1.Node) bool {
	for _, sc := range c.spread {
		if _, ok := n.Labels[sc.topologyKey]; !ok {
			return false
		}
	}
	if !c.Rules.NodeInclusionPolicy {
		if ok, _ := c.preAff.Match(n); !ok {
			return false
		}
	}
	return true
}

func (c *Cluster) spreadIncludes(sc *spreadConstraint, n *corev1.Node) bool {
	if !c.Rules.NodeInclusionPolicy {
		return true
	}
	if sc.honorAff {
		if ok, _ := c.preAff.Match(n); !ok {
			return false
		}
	}
	if sc.honorTaints {
		if _, bad := corev1helpers.FindMatchingUntoleratedTaint(klog.Background(), n.Spec.Taints, c.Pre.Pod.Spec.Tolerations, func(t *corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}, false); bad {
			return false
		}
	}
	return true
}

// spreadUpdate is PodTopologySpread.updateWithPod: note that it does not
// skip terminating pods, although the initial count does.
func (c *Cluster) spreadUpdate(p *PodInfo, n *corev1.Node, delta int) {
	if len(c.spread) == 0 || p.Pod.Namespace != c.Pre.Pod.Namespace || !c.spreadNodeEligible(n) {
		return
	}
	pl := labels.Set(p.Pod.Labels)
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
func (c *Cluster) Move(p *PodInfo, n *NodeState, sign int) {
	n.addUsage(p, sign)
	if c.affinityOn {
		c.affinityUpdate(p, n.Node, int64(sign), c.preNsLabels())
	}
	c.spreadUpdate(p, n.Node, sign)
}

// status codes of a filter run.
const (
	Fits = iota
	Unschedulable
	Unresolvable
)

type Verdict struct {
	Code   int
	Reason string
}

// filter runs the pod-dependent filters on n in the default profile's
// order: NodePorts, NodeResourcesFit, PodTopologySpread, InterPodAffinity.
func (c *Cluster) Filter(n *NodeState) Verdict {
	if n.static != "" {
		return Verdict{Unresolvable, n.static}
	}
	for _, hp := range c.Pre.ports {
		if n.portConflict(hp) {
			return Verdict{Unschedulable, "node(s) didn't have free ports for the requested pod ports"}
		}
	}
	if v := c.fitResources(n); v.Code != Fits {
		return v
	}
	for _, sc := range c.spread {
		val, ok := n.Node.Labels[sc.topologyKey]
		if !ok {
			return Verdict{Unresolvable, "node(s) didn't match pod topology spread constraints (missing required label)"}
		}
		minNum := sc.paths[0].num
		if c.Rules.MinDomains && len(sc.matchNum) < int(sc.minDomains) {
			minNum = 0
		}
		self := 0
		if sc.selector.Matches(c.preLabels) {
			self = 1
		}
		if sc.matchNum[val]+self-minNum > int(sc.maxSkew) {
			return Verdict{Unschedulable, "node(s) didn't match pod topology spread constraints"}
		}
	}
	if c.affinityOn {
		if len(c.affTerms) > 0 {
			exist := true
			for _, t := range c.affTerms {
				v, ok := n.Node.Labels[t.topologyKey]
				if !ok {
					return Verdict{Unresolvable, "node(s) didn't match pod affinity rules"}
				}
				if c.affCounts[pair{t.topologyKey, v}] <= 0 {
					exist = false
				}
			}
			if !exist && (len(c.affCounts) != 0 || !c.matchesAllAffinity(c.Pre.Pod)) {
				return Verdict{Unresolvable, "node(s) didn't match pod affinity rules"}
			}
		}
		if len(c.antiCounts) > 0 {
			for _, t := range c.antiTerms {
				if v, ok := n.Node.Labels[t.topologyKey]; ok && c.antiCounts[pair{t.topologyKey, v}] > 0 {
					return Verdict{Unschedulable, "node(s) didn't match pod anti-affinity rules"}
				}
			}
		}
		if len(c.existingAnti) > 0 {
			for k, v := range n.Node.Labels {
				if c.existingAnti[pair{k, v}] > 0 {
					return Verdict{Unschedulable, "node(s) didn't satisfy existing pods anti-affinity rules"}
				}
			}
		}
	}
	return Verdict{Fits, ""}
}

func (c *Cluster) fitResources(n *NodeState) Verdict {
	var reasons []string
	code := Fits
	if int64(n.podCount)+1 > n.allowedPods {
		reasons, code = append(reasons, "Too many pods"), Unschedulable
	}
	req := c.Pre.req
	if req.milliCPU == 0 && req.memory == 0 && req.ephemeral == 0 && len(req.scalar) == 0 {
		return Verdict{code, join(reasons)}
	}
	check := func(name string, want, alloc, used int64) {
		if want > 0 && want > alloc-used {
			reasons = append(reasons, "Insufficient "+name)
			if code == Fits {
				code = Unschedulable
			}
			if c.Rules.RequestAboveAllocatableUnresolvable && want > alloc {
				code = Unresolvable
			}
		}
	}
	check("cpu", req.milliCPU, n.allocatable.milliCPU, n.requested.milliCPU)
	check("memory", req.memory, n.allocatable.memory, n.requested.memory)
	check("ephemeral-storage", req.ephemeral, n.allocatable.ephemeral, n.requested.ephemeral)
	for _, name := range c.preScalar {
		if req.scalar[name] == 0 {
			continue
		}
		check(string(name), req.scalar[name], n.allocatable.scalar[name], n.requested.scalar[name])
	}
	return Verdict{code, join(reasons)}
}

// filterWithNominated is RunFilterPluginsWithNominatedPods: the pod must
// fit with the nominated pods of at least its priority on the node, and
// without them.
func (c *Cluster) FilterWithNominated(n *NodeState) Verdict {
	if len(n.Nominated) == 0 || n.static != "" {
		return c.Filter(n)
	}
	// The scheduler adds the nominated pods to a copy of the NodeInfo;
	// undoing them here must not drop a port a bound pod also uses.
	ports := maps.Clone(n.ports)
	for _, p := range n.Nominated {
		c.Move(p, n, 1)
	}
	v := c.Filter(n)
	for _, p := range n.Nominated {
		c.Move(p, n, -1)
	}
	n.ports = ports
	if v.Code != Fits {
		return v
	}
	return c.Filter(n)
}
