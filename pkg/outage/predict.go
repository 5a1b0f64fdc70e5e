package outage

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/disruption"
)

// NodeNotFoundError: a failed node is not in the input.
type NodeNotFoundError struct{ Node string }

func (e *NodeNotFoundError) Error() string { return fmt.Sprintf("node %q not found", e.Node) }

// sim is one prediction's working state.
type sim struct {
	in      Input
	owners  *disruption.Owners
	failed  map[string]bool
	nodes   map[string]*corev1.Node
	timings map[string]timing // by node
	res     *Result
	// dels are the pods deleted (stuck ones too), index into res.Pods.
	dels    []int
	podObjs []*corev1.Pod // res.Pods' objects
	assumed int           // pods given the admission's tolerations
}

// Predict runs the outage.
func Predict(in Input) (*Result, error) {
	s := &sim{in: in, owners: disruption.NewOwners(in.Workloads), failed: map[string]bool{}, nodes: map[string]*corev1.Node{},
		timings: map[string]timing{}, res: &Result{Certain: true}}
	for _, n := range in.Nodes {
		s.nodes[n.Name] = n
	}
	for _, name := range in.Failed {
		if s.nodes[name] == nil {
			return nil, &NodeNotFoundError{Node: name}
		}
		s.failed[name] = true
	}
	s.markNodes()
	view := s.viewAhead()
	s.podFates()
	states := s.budgetStates()
	s.follow(view)
	s.availability(<-states)
	s.finish()
	return s.res, nil
}

// markNodes is the node lifecycle controller: each zone's state and the
// failed nodes' taint windows.
func (s *sim) markNodes() {
	set := s.in.Settings
	zones := buildZones(s.in.Nodes, s.failed)
	allFull := allFullyDisrupted(zones, set)
	det := Detection(set)
	if allFull && len(s.in.Failed) > 0 {
		s.doubt("every zone is fully disrupted once the failed nodes are marked: the controller removes the NoExecute taints and stops tainting, " +
			"but a taint it sets during the pass that finds every zone down stays (that pass removes what its node list, read at its start, shows): " +
			"at most one node per zone, which one is heartbeat timing, and its pods are deleted after all")
	}
	for _, z := range zones {
		zr, t := z.plan(set, det, allFull)
		s.res.Zones = append(s.res.Zones, zr)
		for _, name := range z.queued {
			s.timings[name] = t
		}
	}
	if len(zones) == 1 && zones[0].key == "" && len(s.in.Nodes) > 0 {
		s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("no node has a zone label (%s): the controller treats the cluster as one zone %q", corev1.LabelTopologyZone, ""))
	}
	for _, name := range s.in.Failed {
		n, t := s.nodes[name], s.timings[name]
		nr := NodeResult{Node: name, Zone: zoneName(n), Tainted: t.tainted, Taint: TaintKey(set.Condition) + ":NoExecute", Reason: t.reason,
			Excluded: excluded(n), Certain: t.certain}
		if nr.Excluded {
			nr.Reason = appendReason(nr.Reason, "labelled "+LabelExcludeDisruption+": not counted in the zone's state, still tainted through its queue")
		}
		if !nodeReady(n) {
			s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("node %s is not Ready already: its taint may be set and its pods' clocks running; the times assume it fails now", name))
		}
		if !t.certain && !t.transient {
			s.doubt(t.reason) // a zone's reason: said once for its nodes
		}
		s.res.Nodes = append(s.res.Nodes, nr)
	}
}

// podFates is the taint eviction controller for every pod on a failed node.
func (s *sim) podFates() {
	key := TaintKey(s.in.Settings.Condition)
	for _, p := range s.in.Pods {
		if !s.failed[p.Spec.NodeName] || p.DeletionTimestamp != nil {
			continue
		}
		ref := metav1.GetControllerOfNoCopy(p)
		pod, added := admitted(p, ref != nil && ref.Kind == "DaemonSet", s.in.Settings.DefaultTolerationSeconds)
		if added {
			s.assumed++
		}
		v := evictionVerdict(pod, noExecuteTaints(s.nodes[p.Spec.NodeName], key))
		pr := s.fate(p, v, s.timings[p.Spec.NodeName])
		if !pr.Certain {
			s.res.Certain = false
		}
		s.res.Pods = append(s.res.Pods, pr)
		s.podObjs = append(s.podObjs, p)
		if pr.Deleted != nil || pr.Terminating != nil {
			s.dels = append(s.dels, len(s.res.Pods)-1)
		}
	}
	if s.assumed > 0 {
		s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("%d pod(s) never went through the API server (no creationTimestamp): assumed the DefaultTolerationSeconds admission's %ds tolerations (the DaemonSet controller's, without seconds, for DaemonSet pods)",
			s.assumed, s.in.Settings.DefaultTolerationSeconds))
	}
}

// fate is one pod's fate from its verdict and its node's timing.
func (s *sim) fate(p *corev1.Pod, v verdict, t timing) PodResult {
	pr := PodResult{Pod: p.Namespace + "/" + p.Name, Node: p.Spec.NodeName, Owner: s.ownerName(p), Toleration: v.used, Certain: true}
	switch {
	case v.forever:
		pr.Fate, pr.Reason = FateStays, "tolerates the taint without tolerationSeconds: stays bound to the dead node"
		if ref := metav1.GetControllerOfNoCopy(p); ref != nil && ref.Kind == "DaemonSet" {
			pr.Reason = "DaemonSet pod: tolerates the taint forever, stays bound to the dead node"
		}
		return pr
	case t.tainted == nil:
		pr.Fate, pr.Reason, pr.Certain = FateStays, "its node is never tainted: "+t.reason, t.certain || t.transient
		switch {
		case t.transient && t.exposed != nil:
			// handleDisruption removes the taints its node list (read at the
			// pass's start) shows: one set during that pass stays.
			w := t.exposed.Add(v.delay)
			pr.Certain = false
			pr.Reason = fmt.Sprintf("every zone is fully disrupted: stays unless its node is the one of its zone tainted during the pass that finds every zone down "+
				"(that taint stays: see the node): deleted at T+%s..%ss then", secs(w.Min), secs(w.Max))
		case t.exposed != nil:
			w := t.exposed.Add(v.delay)
			pr.Certain = false
			pr.Reason = fmt.Sprintf("stays unless its node is tainted early: deleted at T+%s..%ss then (%s)", secs(w.Min), secs(w.Max), t.reason)
		}
		return pr
	}
	w := t.tainted.Add(v.delay)
	pr.Fate, pr.Deleted = FateDeleted, &w
	return s.afterDelete(p, pr)
}

func (s *sim) ownerName(p *corev1.Pod) string {
	ref := metav1.GetControllerOfNoCopy(p)
	if ref == nil {
		return ""
	}
	return disruption.OwnerName(ref, s.owners.Get(p.Namespace, ref))
}

// finish orders the victims and gathers the doubts.
func (s *sim) finish() {
	idx := slices.Clone(s.dels)
	when := func(i int) Window {
		if w := s.res.Pods[i].Deleted; w != nil {
			return *w
		}
		return *s.res.Pods[i].Terminating
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(when(a).Min, when(b).Min), cmp.Compare(when(a).Max, when(b).Max), cmp.Compare(s.res.Pods[a].Pod, s.res.Pods[b].Pod))
	})
	for _, i := range idx {
		s.res.Victims = append(s.res.Victims, s.res.Pods[i].Pod)
	}
}

func (s *sim) doubt(msg string) {
	s.res.Certain = false
	if !slices.Contains(s.res.Uncertain, msg) {
		s.res.Uncertain = append(s.res.Uncertain, msg)
	}
}

func appendReason(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "; " + b
}
