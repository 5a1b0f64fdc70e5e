package rollout

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/scheduling"
)

// place runs the scheduler's filters and scores for a new pod: a
// determined node binds it there; otherwise the pod holds no node here,
// its candidates are listed and the answer is uncertain.
func (s *sim) place(m *member) {
	p := chooseAndBind(s.view, m.pod, s.ownerSelector(m.rs), s.unboundNew())
	m.fitError, m.candidates = p.fitError, p.candidates
	s.warnings, s.certain = append(s.warnings, p.warnings...), s.certain && p.certain
}

// chooseAndBind is choose, then the pod bound in the view to the node it
// determines (if any), so that later placements see it.
func chooseAndBind(v *scheduling.View, pod *corev1.Pod, owner *metav1.LabelSelector, unbound bool) placed {
	p := choose(v, pod, owner, unbound)
	if p.node != "" {
		pod.Spec.NodeName = p.node
		_ = v.Add(pod)
	}
	return p
}

// placed is where the scheduler puts one new pod.
type placed struct {
	node       string   // determined
	candidates []string // when not determined
	fitError   string
	warnings   []string
	certain    bool
}

// choose runs the scheduler's filters and, among several feasible
// nodes, its scores (pkg/scheduling) for a new pod of a controller with
// the given selector. unbound: an earlier new pod's node is undetermined,
// so the scores here, which leave it out, decide nothing.
func choose(v *scheduling.View, pod *corev1.Pod, owner *metav1.LabelSelector, unbound bool) placed {
	pl, ch, err := v.Choose(pod, scheduling.ScoreInput{OwnerSelector: owner})
	if err != nil {
		return placed{fitError: err.Error(), certain: true}
	}
	out := placed{certain: true}
	for _, u := range pl.Unmodelled {
		out.warnings = append(out.warnings, fmt.Sprintf("the new pods use %s, which the filters here do not model: where they fit is uncertain", u))
		out.certain = false
	}
	switch {
	case len(pl.Feasible) == 0:
		out.fitError = pl.FitError
	case ch.Determined() && (!unbound || len(pl.Feasible) == 1):
		out.node = ch.Node
	case unbound:
		out.certain, out.candidates = false, pl.Feasible
		out.warnings = append(out.warnings, "an earlier new pod's node is undetermined, and the scores of the next new pods depend on it: "+
			"any node that passes the filters may win")
	default:
		out.certain = false
		out.candidates, out.warnings = undetermined(pl, ch, out.warnings)
	}
	return out
}

// undetermined: the nodes a new pod may go to when the scores do not
// decide, and why.
func undetermined(pl scheduling.Placement, ch scheduling.Choice, warnings []string) ([]string, []string) {
	switch {
	case len(ch.Unmodelled) > 0:
		for _, u := range ch.Unmodelled {
			warnings = append(warnings, "the scheduler's scoring of the new pods needs input the snapshot lacks ("+u+"): any node that passes the filters may win")
		}
		return pl.Feasible, warnings
	case ch.Sampled:
		return pl.Feasible, append(warnings, fmt.Sprintf("%d nodes pass the filters for the new pods, more than the scheduler scores on a cluster of this size "+
			"(it scores the first it finds from a rotating start): any of them may win", len(pl.Feasible)))
	case ch.Chance > 0:
		return ch.Top, append(warnings, fmt.Sprintf("%d nodes tie at the top score for the new pods (%s): the scheduler picks one at random, %.0f%% each", len(ch.Top), short(ch.Top), 100*ch.Chance))
	}
	return ch.Top, append(warnings, fmt.Sprintf("%d nodes tie at the top score for the new pods (%s): the scheduler takes the first in its evaluation order, "+
		"which the plugin cannot see: which one is undetermined", len(ch.Top), short(ch.Top)))
}

// markTerminating: a deleted pod keeps its node's resources until it is
// gone, but the scheduler's topology spreading no longer counts it.
func (s *sim) markTerminating(m *member) {
	if m.pod.Spec.NodeName == "" || m.pod.DeletionTimestamp != nil {
		return
	}
	s.view.Remove(m.pod)
	p := m.pod.DeepCopy()
	p.DeletionTimestamp = &metav1.Time{Time: s.in.Now}
	m.pod = p
	_ = s.view.Add(p)
}

// retryPlacement: the scheduler retries pending pods once room is freed.
func (s *sim) retryPlacement(st *stepRun) {
	for _, m := range s.unplaced() {
		s.place(m)
		if m.scheduled() {
			c := created(m)
			c.Reason = "pending until now: " + c.Reason
			st.out.Created = append(st.out.Created, c)
		}
	}
}

// finishTerminations: the pods deleted in the step are gone and free
// their node.
func (s *sim) finishTerminations() {
	for _, m := range s.terminat {
		s.view.Remove(m.pod)
		s.release(m.pod)
	}
	s.terminat = nil
}

// created is a new pod's row: its node, or its candidates, or why it fits
// nowhere.
func created(m *member) prediction.RolloutCreate {
	c := prediction.RolloutCreate{Node: m.pod.Spec.NodeName, Candidates: m.candidates}
	switch {
	case m.fitError != "":
		c.Reason = m.fitError
	case len(m.candidates) > 0:
		c.Reason = fmt.Sprintf("the scheduler's scoring leaves %d nodes (%s) undetermined", len(m.candidates), short(m.candidates))
	}
	return c
}

func short(nodes []string) string {
	if len(nodes) > 4 {
		return strings.Join(nodes[:4], ", ") + ", ..."
	}
	return strings.Join(nodes, ", ")
}

// newHash is the pod-template-hash the new ReplicaSet's pods carry: its
// own when it exists, else a value no pod has (the controller's hash of
// the template; only that it differs from the others' matters here).
func (s *sim) newHash(rs string) string {
	if o := s.objs[rs]; o != nil {
		if h, ok := o.Spec.Template.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; ok {
			return h
		}
		return o.Labels[appsv1.DefaultDeploymentUniqueLabelKey]
	}
	return "scale-preview-new"
}

// ownerSelector is the new ReplicaSet's selector, which the scheduler's
// default topology spreading counts pods by: the Deployment's, with the
// ReplicaSet's pod-template-hash.
func (s *sim) ownerSelector(rs string) *metav1.LabelSelector {
	if o := s.objs[rs]; o != nil && o.Spec.Selector != nil {
		return o.Spec.Selector
	}
	sel := s.in.Deployment.Spec.Selector.DeepCopy()
	if sel == nil {
		return nil
	}
	if sel.MatchLabels == nil {
		sel.MatchLabels = map[string]string{}
	}
	sel.MatchLabels[appsv1.DefaultDeploymentUniqueLabelKey] = s.newHash(rs)
	return sel
}
