package scheduling

import (
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// View is the scheduler's cache: the nodes and the pods bound to them,
// kept current as pods come and go (Add, Remove), so that placing a pod
// reads the nodes and only the pods its own terms and constraints need,
// not every pod again. A drain places one replacement after another in it.
type View struct {
	rules    rules.SchedulerRules
	nodes    []*NodeState // in the scheduler's snapshot order
	byName   map[string]*NodeState
	nsLabels map[string]labels.Set // nil: namespaces unknown
	bound    map[*corev1.Pod]*PodInfo
	// nominated are pending pods holding a nomination, in input order;
	// which count depends on the pod being placed (its priority).
	nominated []*corev1.Pod
	// anti are the bound pods with required anti-affinity terms: every
	// placement checks them.
	anti    []*PodInfo
	scratch corev1.ResourceList
	// statics: per template key (PlaceTemplate), each node's static
	// filter verdict, in node order: the nodes never change in a view.
	statics map[string][]string
	images  *map[string]int // nodes per image name, counted when first scored
}

// NewView builds the cache over nodes and pods (bound ones, and pending
// ones with a nomination; finished pods and pods of unknown nodes are not
// in the scheduler's cache).
func NewView(nodes []*corev1.Node, pods []*corev1.Pod, namespaces []*corev1.Namespace, r rules.SchedulerRules) (*View, error) {
	v := &View{rules: r, byName: map[string]*NodeState{}, bound: map[*corev1.Pod]*PodInfo{}, scratch: corev1.ResourceList{}, images: new(map[string]int)}
	if namespaces != nil {
		v.nsLabels = map[string]labels.Set{}
		for _, ns := range namespaces {
			v.nsLabels[ns.Name] = labels.Set(ns.Labels)
		}
	}
	for _, n := range orderNodes(nodes) {
		ns := newNodeState(n)
		v.nodes = append(v.nodes, ns)
		v.byName[n.Name] = ns
	}
	for _, p := range pods {
		if err := v.Add(p); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Add puts a pod into the cache: bound to its node, or held as a
// nomination while pending.
func (v *View) Add(p *corev1.Pod) error {
	if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return nil // the scheduler's informer does not see finished pods
	}
	if p.Spec.NodeName == "" {
		if p.Status.NominatedNodeName != "" {
			v.nominated = append(v.nominated, p)
		}
		return nil
	}
	n := v.byName[p.Spec.NodeName]
	if n == nil {
		return nil // no NodeInfo without its Node in the snapshot
	}
	pi, err := newPodInfo(p, v.rules, true, v.scratch)
	if err != nil {
		return err
	}
	n.Pods = append(n.Pods, pi)
	n.addUsage(pi, 1)
	v.bound[p] = pi
	if len(pi.antiTerms) > 0 {
		v.anti = append(v.anti, pi)
	}
	return nil
}

// Remove takes a pod object out of the cache (a pod gone, or an object
// about to be replaced by a changed copy through Add).
func (v *View) Remove(p *corev1.Pod) {
	pi, ok := v.bound[p]
	if !ok {
		v.nominated = slices.DeleteFunc(v.nominated, func(q *corev1.Pod) bool { return q == p })
		return
	}
	delete(v.bound, p)
	n := v.byName[p.Spec.NodeName]
	n.addUsage(pi, -1)
	// The view equals one built afresh over the pods left: a port another
	// pod on the node declares stays used. (The scheduler's own cache drops
	// it, UsedPorts being a set; only pods bound past the filters share one.)
	for _, o := range n.Pods {
		if o != pi {
			for _, hp := range o.ports {
				n.ports[hp] = true
			}
		}
	}
	n.Pods = slices.DeleteFunc(n.Pods, func(o *PodInfo) bool { return o == pi })
	if len(pi.antiTerms) > 0 {
		v.anti = slices.DeleteFunc(v.anti, func(o *PodInfo) bool { return o == pi })
	}
}

// Clone is a copy that changes apart from v; they share the pods' infos,
// which never change.
func (v *View) Clone() *View {
	c := *v
	c.nodes = make([]*NodeState, len(v.nodes))
	c.byName = make(map[string]*NodeState, len(v.nodes))
	for i, n := range v.nodes {
		cp := *n
		cp.Pods, cp.Nominated, cp.ports = slices.Clone(n.Pods), nil, maps.Clone(n.ports)
		cp.requested.scalar = maps.Clone(n.requested.scalar)
		c.nodes[i], c.byName[n.Node.Name] = &cp, &cp
	}
	c.bound = maps.Clone(v.bound)
	c.nominated, c.anti = slices.Clone(v.nominated), slices.Clone(v.anti)
	c.scratch = corev1.ResourceList{}
	return &c
}

// Place runs the filters for pod on every node of the view.
func (v *View) Place(pod *corev1.Pod) (Placement, error) {
	return v.PlaceTemplate(pod, "")
}

// PlaceTemplate is Place for a pod whose node name, node affinity and
// tolerations are those of every pod the caller gives the same key (the
// replacements of one owner): the static filters run once per key.
func (v *View) PlaceTemplate(pod *corev1.Pod, key string) (Placement, error) {
	c, err := v.cluster(pod)
	if err != nil {
		return Placement{}, err
	}
	v.staticFilters(pod, c, key)
	return c.place(), nil
}

// Choose runs the filters for pod and then the Score phase: where the
// scheduler binds it.
func (v *View) Choose(pod *corev1.Pod, in ScoreInput) (Placement, Choice, error) {
	c, err := v.cluster(pod)
	if err != nil {
		return Placement{}, Choice{}, err
	}
	v.staticFilters(pod, c, "")
	pl := c.place()
	return pl, c.Choose(pl, in), nil
}

// staticFilters sets each node's verdict of the filters that need no pods.
func (v *View) staticFilters(pod *corev1.Pod, c *Cluster, key string) {
	if cached, ok := v.statics[key]; ok && key != "" {
		for i, n := range v.nodes {
			n.static = cached[i]
		}
		return
	}
	out := make([]string, len(v.nodes))
	for i, n := range v.nodes {
		n.static = staticFailure(pod, n.Node, c.preAff)
		out[i] = n.static
	}
	if key != "" {
		if v.statics == nil {
			v.statics = map[string][]string{}
		}
		v.statics[key] = out
	}
}

// cluster is the view with pod's PreFilter state: the filters that need
// no pods (static), the nominations that count for it, its (anti-)affinity
// and topology spread counts. The cluster shares the view's nodes.
func (v *View) cluster(pod *corev1.Pod) (*Cluster, error) {
	pre, err := newPodInfo(pod, v.rules, false, nil)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, err)
	}
	c := &Cluster{Rules: v.rules, Pre: pre, preLabels: labels.Set(pod.Labels), Nodes: v.nodes, ByName: v.byName,
		preAff: nodeaffinity.GetRequiredNodeAffinity(pod), nsLabels: v.nsLabels, images: v.images, antiTerms: pre.antiTerms, preScalar: sortedNames(pre.req.scalar)}
	if c.affTerms, err = termsOf(pod, requiredAffinity(pod)); err != nil {
		return nil, err
	}
	c.resolveTerms()
	for _, n := range v.nodes {
		n.Nominated = n.Nominated[:0]
	}
	if err := v.nominate(c); err != nil {
		return nil, err
	}
	c.noteAntiNamespaceSelectors(v.anti)
	if err := c.buildSpread(pod); err != nil {
		return nil, err
	}
	c.buildAffinity(v.anti)
	return c, nil
}

// nominate adds to their nodes the nominated pods of at least the
// placed pod's priority (RunFilterPluginsWithNominatedPods counts them).
func (v *View) nominate(c *Cluster) error {
	for _, p := range v.nominated {
		if corev1helpers.PodPriority(p) < c.Pre.Priority {
			continue
		}
		n := v.byName[p.Status.NominatedNodeName]
		if n == nil {
			continue
		}
		pi, err := newPodInfo(p, v.rules, false, v.scratch)
		if err != nil {
			return err
		}
		n.Nominated = append(n.Nominated, pi)
	}
	return nil
}

// resolveTerms gives the incoming pod's namespaceSelectors their
// namespaces' names; the selectors then match no namespace labels.
func (c *Cluster) resolveTerms() {
	for _, t := range append(slices.Clone(c.affTerms), c.antiTerms...) {
		if !t.needsNsLabels {
			continue
		}
		if c.nsLabels == nil {
			c.Note("inter-pod (anti-)affinity with a namespaceSelector needs the namespaces' labels, which were not read")
			continue
		}
		for ns, l := range c.nsLabels {
			if t.nsSelector.Matches(l) {
				t.namespaces[ns] = true
			}
		}
	}
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
}

// noteAntiNamespaceSelectors: a bound pod's anti-affinity term with a
// namespaceSelector that could match the incoming pod needs the
// namespaces' labels. Sorted: the notes do not depend on the order in
// which pods came.
func (c *Cluster) noteAntiNamespaceSelectors(anti []*PodInfo) {
	if c.nsLabels != nil {
		return
	}
	var names []string
	for _, p := range anti {
		for _, t := range p.antiTerms {
			if t.needsNsLabels && t.selector.Matches(c.preLabels) {
				names = append(names, p.Pod.Namespace+"/"+p.Pod.Name)
			}
		}
	}
	slices.Sort(names)
	for _, n := range names {
		c.Note("pod %s has anti-affinity with a namespaceSelector; the namespaces' labels were not read", n)
	}
}
