package rollout

import (
	"fmt"
	"maps"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/scheduling"
)

// dsNode is one node that runs the DaemonSet, during the simulation.
type dsNode struct {
	name     string
	old      *corev1.Pod // the old pod; nil once deleted
	oldAvail bool
	new      *corev1.Pod // the new pod; nil until created
	newAvail bool
	fresh    bool          // the new pod is the rollout's (not one already there)
	fitError string        // the new pod fits nowhere (yet)
	gone     []*corev1.Pod // deleted, still holding the node's resources
}

// dsSim is one run of a DaemonSet's rolling update (update.go's
// rollingUpdate and the manage loop, one sync at a time).
type dsSim struct {
	in                   Input
	ds                   *appsv1.DaemonSet
	template             *corev1.PodTemplateSpec
	newHash              string // pods with this controller-revision-hash are new
	nodes                []*dsNode
	maxSurge, maxUnavail int
	view                 *scheduling.View
	fits                 map[string]bool // fitsNow's pass (nil: not yet)
	budgets              []*budget
	neverReady           bool
	certain              bool
	warnings             []string
	groups               []prediction.ContenderGroup
	steps                int
}

// predictDaemonSet runs the DaemonSet's rolling update for the change,
// and again as a bad release whose new pods never become available.
func predictDaemonSet(in Input) (*Result, error) {
	ds := in.DaemonSet
	tmpl, err := changedTemplate("daemonset", ds.Name, &ds.Spec.Template, false, in.Change, in.Now)
	if err != nil {
		return nil, err
	}
	strategy := string(ds.Spec.UpdateStrategy.Type)
	if strategy == "" {
		strategy = string(appsv1.RollingUpdateDaemonSetStrategyType)
	}
	res := &Result{Certain: true, Rollout: prediction.Rollout{Kind: "DaemonSet", Name: ds.Name, Namespace: ds.Namespace,
		Strategy: strategy, Change: in.Change.Kind}}
	switch ds.Spec.UpdateStrategy.Type {
	case appsv1.OnDeleteDaemonSetStrategyType:
		res.Rollout.Outcome = prediction.RolloutNotStarted
		res.Rollout.Reason = "updateStrategy OnDelete: the controller creates a pod from the new template only on a node whose old pod someone deletes"
		res.Rollout.Unblock = "delete the pods by hand (kubectl delete pod), node by node"
		return res, nil
	case "", appsv1.RollingUpdateDaemonSetStrategyType:
	default:
		return nil, &UnsupportedError{Msg: fmt.Sprintf("daemonset %s: updateStrategy %s is not modelled (RollingUpdate and OnDelete are)", ds.Name, strategy)}
	}
	if err := runWithBadRelease(res, func(neverReady bool) (*dsSim, error) { return newDSSim(in, tmpl, neverReady) }); err != nil {
		return nil, err
	}
	return res, nil
}

// newDSSim reads the nodes that run the DaemonSet and its pods on them.
func newDSSim(in Input, tmpl *corev1.PodTemplateSpec, neverReady bool) (*dsSim, error) {
	s := &dsSim{in: in, ds: in.DaemonSet, template: tmpl, neverReady: neverReady, certain: true}
	s.newHash = s.readNewHash()
	byNode := map[string]*dsNode{}
	for _, n := range in.Nodes {
		if shouldRunDaemonPod(s.ds, n) {
			d := &dsNode{name: n.Name}
			s.nodes = append(s.nodes, d)
			byNode[n.Name] = d
		}
	}
	slices.SortFunc(s.nodes, func(a, b *dsNode) int { return cmpString(a.name, b.name) })
	if err := s.readStrategy(len(s.nodes)); err != nil {
		return nil, err
	}
	if w := quotasUnmodelled(in, s.ds.Namespace, "DaemonSet", s.maxSurge > 0); len(w) > 0 {
		s.warnings, s.certain = append(s.warnings, w...), false
	}
	gone := s.readPods(byNode)
	view, err := scheduling.NewView(in.Nodes, in.Pods, in.Namespaces, in.Scheduler)
	if err != nil {
		return nil, err
	}
	for _, p := range gone {
		view.Remove(p)
	}
	s.view = view
	var pods []*corev1.Pod
	for _, n := range s.nodes {
		if n.old != nil {
			pods = append(pods, n.old)
		}
		if n.new != nil {
			pods = append(pods, n.new)
		}
	}
	probe := &dsNode{name: "<probe>"}
	s.budgets = readBudgetsFor(in, s.newPod(probe), pods, s.healthy)
	return s, nil
}

// readStrategy resolves maxSurge and maxUnavailable against the nodes
// that should run the pod (updatedDesiredNodeCounts: both round up; both
// 0 makes maxUnavailable 1). The API server defaults maxUnavailable to 1.
func (s *dsSim) readStrategy(desired int) error {
	ru := s.ds.Spec.UpdateStrategy.RollingUpdate
	unavail, surge := intstr.FromInt32(1), intstr.FromInt32(0)
	if ru != nil && ru.MaxUnavailable != nil {
		unavail = *ru.MaxUnavailable
	}
	if ru != nil && ru.MaxSurge != nil {
		surge = *ru.MaxSurge
	}
	var err error
	for _, f := range []struct {
		name string
		v    *intstr.IntOrString
		out  *int
	}{{"maxUnavailable", &unavail, &s.maxUnavail}, {"maxSurge", &surge, &s.maxSurge}} {
		*f.out, err = intstr.GetScaledValueFromIntOrPercent(f.v, desired, true)
		if err != nil || *f.out < 0 {
			return inputErr("daemonset %s: spec.updateStrategy.rollingUpdate.%s %q is not a non-negative integer or percentage (fix the file: the API server rejects it)", s.ds.Name, f.name, f.v.String())
		}
	}
	if s.maxSurge > 0 && !s.in.Rules.DaemonSet.Surge {
		s.warnings = append(s.warnings, fmt.Sprintf("maxSurge %s is ignored: the DaemonSetUpdateSurge gate is off in %s (the update deletes before it creates)", surge.String(), s.in.Rules.Version()))
		s.maxSurge = 0
	}
	if desired > 0 && s.maxSurge == 0 && s.maxUnavail == 0 {
		s.maxUnavail = 1
	}
	return nil
}

// readPods puts each pod of the DaemonSet on its node (getNodesToDaemonPods;
// a pending pod by its node affinity). Terminating and finished pods are
// gone by the time the controller acts.
func (s *dsSim) readPods(byNode map[string]*dsNode) (gone []*corev1.Pod) {
	for _, p := range s.in.Pods {
		c := metav1.GetControllerOf(p)
		if p.Namespace != s.ds.Namespace || c == nil || c.UID != s.ds.UID {
			continue
		}
		if p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			gone = append(gone, p)
			continue
		}
		n := byNode[targetNode(p)]
		if n == nil {
			s.warnings = append(s.warnings, fmt.Sprintf("pod %s is on %q, which no longer qualifies for the DaemonSet (its taints, labels or affinity) or is not in the input: the manage loop, not the update, deals with it (not modelled)", p.Name, targetNode(p)))
			s.certain = false
			continue
		}
		avail := podutils.IsPodAvailable(p, s.ds.Spec.MinReadySeconds, metav1.NewTime(s.in.Now))
		isNew := s.newHash != "" && p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] == s.newHash
		switch {
		case isNew && n.new == nil:
			n.new, n.newAvail = p, avail
		case !isNew && n.old == nil:
			n.old, n.oldAvail = p, avail
		default:
			s.warnings = append(s.warnings, fmt.Sprintf("node %s runs more than one pod of the DaemonSet: the manage loop deletes the extra ones first (not modelled)", n.name))
			s.certain = false
		}
	}
	return gone
}

// targetNode is the node a daemon pod is for: its nodeName, or the
// metadata.name its node affinity requires while pending (GetTargetNodeName).
func targetNode(p *corev1.Pod) string {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName
	}
	if a := p.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
			for _, f := range t.MatchFields {
				if f.Key == metav1.ObjectNameField && f.Operator == corev1.NodeSelectorOpIn && len(f.Values) == 1 {
					return f.Values[0]
				}
			}
		}
	}
	return ""
}

// newPod is the controller's pod for a node (NewPod and CreatePodTemplate):
// the new template, the daemon tolerations, the revision's hash label and
// a node affinity to that node alone.
func (s *dsSim) newPod(n *dsNode) *corev1.Pod {
	t := s.template
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: s.ds.Name + "-new-" + n.name, Namespace: s.ds.Namespace, UID: types.UID(s.ds.Name + "-new-" + n.name),
		Labels: maps.Clone(t.Labels), Annotations: maps.Clone(t.Annotations), CreationTimestamp: metav1.NewTime(s.in.Now.Truncate(time.Second)),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: s.ds.Name, UID: s.ds.UID, Controller: ptrTrue()}}},
		Spec: *t.Spec.DeepCopy(), Status: corev1.PodStatus{Phase: corev1.PodPending}}
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	p.Labels[appsv1.DefaultDaemonSetUniqueLabelKey] = "new"
	p.Spec.Tolerations = daemonTolerations(&p.Spec)
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &corev1.Affinity{}
	}
	p.Spec.Affinity.NodeAffinity = nodeNameAffinity(p.Spec.Affinity.NodeAffinity, n.name)
	return p
}

// nodeNameAffinity is ReplaceDaemonSetPodNodeNameNodeAffinity: the
// required terms become metadata.name In [node]; preferences stay.
func nodeNameAffinity(a *corev1.NodeAffinity, node string) *corev1.NodeAffinity {
	out := &corev1.NodeAffinity{}
	if a != nil {
		out.PreferredDuringSchedulingIgnoredDuringExecution = a.PreferredDuringSchedulingIgnoredDuringExecution
	}
	out.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchFields: []corev1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}}}}}
	return out
}

// healthy counts the DaemonSet's pods b selects that are healthy (old:
// Ready; new: available).
func (s *dsSim) healthy(b *disruption.Budget) int32 {
	var c int32
	for _, n := range s.nodes {
		if n.old != nil && disruption.IsReady(n.old) && b.EvictionSelects(n.old) {
			c++
		}
		if n.new != nil && n.newAvail && b.EvictionSelects(n.new) {
			c++
		}
	}
	return c
}

// availableNow counts the DaemonSet's available pods.
func (s *dsSim) availableNow() int32 {
	var c int32
	for _, n := range s.nodes {
		if n.old != nil && n.oldAvail {
			c++
		}
		if n.new != nil && n.newAvail {
			c++
		}
	}
	return c
}

// oldPods are the old pods still there.
func (s *dsSim) oldPods() []string {
	var out []string
	for _, n := range s.nodes {
		if n.old != nil {
			out = append(out, podName(n.old))
		}
	}
	return out
}

// done: every node runs a new pod and no old one, and the rollout's new
// pods are available.
func (s *dsSim) done() bool {
	return !slices.ContainsFunc(s.nodes, func(n *dsNode) bool { return n.old != nil || n.new == nil || (n.fresh && !n.newAvail) })
}
