package workload

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// rsLike is what the ReplicaSet controller needs of an RS or an RC (the
// RC controller is the same code behind an adapter).
type rsLike struct {
	kind, name, namespace, uid string
	replicas                   int32
	selector                   labels.Selector
	selectorErr                error
	controllerUID              string // "" when it has no controller owner
	deleting                   bool
}

func fromRS(rs *appsv1.ReplicaSet) rsLike {
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	r := rsLike{kind: snapshot.ReplicaSet, name: rs.Name, namespace: rs.Namespace, uid: string(rs.UID),
		replicas: replicasOf(rs.Spec.Replicas), selector: sel, selectorErr: err, deleting: rs.DeletionTimestamp != nil}
	if c := metav1.GetControllerOf(rs); c != nil {
		r.controllerUID = string(c.UID)
	}
	return r
}

func fromRC(rc *corev1.ReplicationController) rsLike {
	// An RC's selector is a plain map; an empty one selects nothing here
	// (the API server defaults it from the template labels).
	sel := labels.Nothing()
	if len(rc.Spec.Selector) > 0 {
		sel = labels.SelectorFromSet(rc.Spec.Selector)
	}
	r := rsLike{kind: snapshot.ReplicationController, name: rc.Name, namespace: rc.Namespace, uid: string(rc.UID),
		replicas: replicasOf(rc.Spec.Replicas), selector: sel, deleting: rc.DeletionTimestamp != nil}
	if c := metav1.GetControllerOf(rc); c != nil {
		r.controllerUID = string(c.UID)
	}
	return r
}

func replicasOf(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}

func predictReplicaSet(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, o Options) (*prediction.Prediction, error) {
	var target *rsLike
	for _, rs := range s.ReplicaSets {
		if ref.Kind == snapshot.ReplicaSet && rs.Name == ref.Name && rs.Namespace == ref.Namespace {
			r := fromRS(rs)
			target = &r
		}
	}
	for _, rc := range s.ReplicationControllers {
		if ref.Kind == snapshot.ReplicationController && rc.Name == ref.Name && rc.Namespace == ref.Namespace {
			r := fromRC(rc)
			target = &r
		}
	}
	if target == nil {
		return nil, &NotFoundError{Ref: ref}
	}
	if target.selectorErr != nil {
		return nil, fmt.Errorf("%s %s has an invalid selector: %v", ref.Kind, ref.Name, target.selectorErr)
	}
	c := claim(s.Pods, target.namespace, target.uid, target.selector)
	pred := newPrediction(ref, int32(len(c.active)), replicas, o)
	if target.controllerUID != "" && ref.Kind == snapshot.ReplicaSet {
		pred.Warnings = append(pred.Warnings, fmt.Sprintf("%s is controlled by another object (ownerReference uid %s): scaling it by hand is reverted by its owner; scale the owner instead", ref.Name, target.controllerUID))
	}
	rr := runReplicaSet(s, *target, c, replicas, o)
	pred.Pods = rr.pods
	pred.Victims = append([]string{}, rr.victims...)
	pred.Contenders = rr.contenders
	pred.Certain = rr.certain
	pred.StableUntil, pred.StableUntilIsLowerBound = rr.stableUntil, rr.stableLowerBound
	pred.Warnings = append(pred.Warnings, rr.warnings...)
	pred.Message = summary(pred, target.deleting)
	return pred, nil
}

// rsRun is one ReplicaSet's scale-in, ready to merge into a prediction.
type rsRun struct {
	pods        []prediction.Pod
	victims     []string
	contenders  []prediction.ContenderGroup
	certain     bool
	stableUntil *time.Time
	// stableLowerBound: the search stopped before finding a change.
	stableLowerBound bool
	warnings         []string
	deleted          int
	survivors        []*corev1.Pod
	// open: the engine's open groups with their joint outcomes, for a
	// Deployment's later steps; rounds: the deletion rounds it took.
	open   []engine.Contenders
	rounds int
}

// runReplicaSet predicts one RS/RC going to replicas, given its claimed pods.
// related counts are computed from the snapshot unless extraGone names pods
// already deleted earlier in a Deployment's sequence.
func runReplicaSet(s *snapshot.Snapshot, t rsLike, c claimed, replicas int32, o Options, gone ...map[string]bool) rsRun {
	out := rsRun{certain: true}
	var goneSet map[string]bool
	if len(gone) > 0 {
		goneSet = gone[0]
	}
	in := rsInput(s, t, c, replicas, o, goneSet)
	if t.deleting {
		out.warnings = append(out.warnings, fmt.Sprintf("%s %s is being deleted: its controller no longer manages replicas", t.kind, t.name))
	}
	res := engine.Predict(in)
	if !res.Certain {
		out.certain = false
	}
	out.open, out.rounds = res.Contenders, res.Rounds
	if in.Delete > 0 && !o.branchOnly {
		out.stableUntil, out.stableLowerBound = engine.StableUntil(in)
	}
	if res.Rounds > 1 {
		out.warnings = append(out.warnings, fmt.Sprintf("%s deletes at most 500 pods per sync: %d rounds, each re-sorted on what is left (the reference time is reused for later rounds)", t.name, res.Rounds))
	}
	c0 := &engine.Comparator{Rules: o.Rules, Now: o.Now}
	for _, pl := range res.Order {
		pp := podEntry(pl.Pod, c0)
		pp.Position = pl.Position
		pp.Rank = pl.Pod.Rank
		pp.Fate = prediction.FateKeep
		pp.Certain = pl.Certain
		pp.DeleteProbability = pl.Probability
		pp.Round = pl.Round
		if c.adopted[pl.Pod.Name] {
			pp.Reason = "orphan matching the selector: adopted and counted in the same sync"
		}
		if pl.Delete {
			pp.Fate = prediction.FateDelete
			out.victims = append(out.victims, pl.Pod.Name)
			out.deleted++
		} else {
			out.survivors = append(out.survivors, pl.Pod.Source)
		}
		if pl.Next != nil {
			pp.DecidedBy = decision(pl.Pod, pl.NextPod, *pl.Next)
		}
		if pl.Boundary != nil {
			if pl.Delete {
				pp.VsBoundary = decision(pl.Pod, pl.BoundaryPod, *pl.Boundary)
			} else {
				pp.VsBoundary = decision(pl.Pod, pl.BoundaryPod, flip(*pl.Boundary))
			}
		}
		if pl.Group >= 0 {
			g := pl.Group
			pp.ContenderGroup = &g
		}
		out.pods = append(out.pods, pp)
	}
	out.contenders = append(out.contenders, contenderGroups(res.Contenders)...)
	out.pods = append(out.pods, c.setAside(c0, "already terminating: not counted, never chosen again")...)
	return out
}

// rsInput is the engine's input for t's controller going to replicas.
func rsInput(s *snapshot.Snapshot, t rsLike, c claimed, replicas int32, o Options, gone map[string]bool) engine.Input {
	var cands []engine.Pod
	for _, p := range c.active {
		if gone[p.Name] {
			continue
		}
		cands = append(cands, engine.FromPod(p))
	}
	related := relatedCounts(s, t, o, gone)
	del := len(cands) - int(replicas)
	in := engine.Input{Candidates: cands, Related: related, Delete: del, Now: o.Now, Rules: o.Rules, Seed: o.Seed, Joint: o.joint}
	if t.deleting {
		in.Delete = 0
	}
	return in
}

// stableUntil is runReplicaSet's stableUntil alone (engine.Predict does
// not change its input).
func stableUntil(s *snapshot.Snapshot, t rsLike, c claimed, replicas int32, o Options, gone map[string]bool) (*time.Time, bool) {
	if in := rsInput(s, t, c, replicas, o, gone); in.Delete > 0 {
		return engine.StableUntil(in)
	}
	return nil, false
}

// relatedCounts: active pods matching the selector of any ReplicaSet with
// the same controller owner, per node (getIndirectlyRelatedPods).
func relatedCounts(s *snapshot.Snapshot, t rsLike, o Options, gone map[string]bool) map[string]int {
	if t.controllerUID == "" {
		return nil
	}
	var selectors []labels.Selector
	switch t.kind {
	case snapshot.ReplicaSet:
		for _, rs := range s.ReplicaSets {
			if c := metav1.GetControllerOf(rs); rs.Namespace == t.namespace && c != nil && string(c.UID) == t.controllerUID {
				sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
				if err != nil {
					if o.Rules.BadSiblingSelectorZeroesRanks {
						return map[string]int{} // 1.21-1.23: the lookup fails, every rank 0
					}
					continue // 1.24+: that ReplicaSet is skipped
				}
				selectors = append(selectors, sel)
			}
		}
	case snapshot.ReplicationController:
		if !o.Rules.RCRanks {
			return nil // 1.24+: the controllerUID index only knows ReplicaSets
		}
		for _, rc := range s.ReplicationControllers {
			if c := metav1.GetControllerOf(rc); rc.Namespace == t.namespace && c != nil && string(c.UID) == t.controllerUID && len(rc.Spec.Selector) > 0 {
				selectors = append(selectors, labels.SelectorFromSet(rc.Spec.Selector))
			}
		}
	}
	counts := map[string]int{}
	for _, p := range s.Pods {
		if p.Namespace != t.namespace || !isActive(p) || gone[p.Name] {
			continue
		}
		for _, sel := range selectors {
			if sel.Matches(labels.Set(p.Labels)) {
				counts[p.Spec.NodeName]++
				break
			}
		}
	}
	return counts
}
