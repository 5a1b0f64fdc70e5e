// Package workload models what each controller considers on a scale-in:
// which pods are candidates, how many go, their ranks, and (for
// Deployments) how the cut is split between ReplicaSets. It turns a
// snapshot into a prediction, using the engine for the ordering.
package workload

import (
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// Options are the inputs besides the snapshot.
type Options struct {
	Rules rules.RuleSet
	Now   time.Time
	Seed  uint64
	// JobCompletions is a Job's new completions (nil: unchanged); its new
	// parallelism is the replicas argument.
	JobCompletions *int32
	// branchOnly: a Deployment interleaving explored only for its fates;
	// stableUntil is left to the full run of the most likely one.
	branchOnly bool
	// joint: open groups list their joint outcomes (a Deployment's later
	// steps depend on which members went).
	joint bool
	// reference: a Deployment's simulations share no work (the memo off),
	// for the test that checks the memo changes nothing.
	reference bool
}

// NotFoundError: the target is not in the snapshot.
type NotFoundError struct{ Ref snapshot.Ref }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s %q not found in namespace %q", e.Ref.Kind, e.Ref.Name, e.Ref.Namespace)
}

// ErrUnsupported marks kinds the plugin does not model.
var ErrUnsupported = errors.New("unsupported kind")

// Predict predicts the scale-in of ref to replicas.
func Predict(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, o Options) (*prediction.Prediction, error) {
	var pred *prediction.Prediction
	var err error
	switch ref.Kind {
	case snapshot.ReplicaSet, snapshot.ReplicationController:
		pred, err = predictReplicaSet(s, ref, replicas, o)
	case snapshot.Deployment:
		pred, err = predictDeployment(s, ref, replicas, o)
	case snapshot.StatefulSet:
		pred, err = predictStatefulSet(s, ref, replicas, o)
	case snapshot.HorizontalPodAutoscaler:
		pred, err = predictAutoscaler(s, ref, replicas, o)
	case snapshot.Job:
		pred, err = predictJob(s, ref, replicas, o)
	default:
		return nil, fmt.Errorf("%w: %s", ErrUnsupported, ref.Kind)
	}
	if pred != nil {
		pred.Warnings = Dedupe(pred.Warnings)
	}
	return pred, err
}

// Dedupe drops repeated lines, keeping the first of each: a model that
// meets the same condition in every simulated step says it once.
func Dedupe(lines []string) []string {
	seen := make(map[string]bool, len(lines))
	out := lines[:0]
	for _, l := range lines {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

func newPrediction(ref snapshot.Ref, current, desired int32, o Options) *prediction.Prediction {
	return &prediction.Prediction{
		APIVersion:      prediction.APIVersion,
		Kind:            prediction.Kind,
		Target:          prediction.Target{Kind: ref.Kind, Namespace: ref.Namespace, Name: ref.Name},
		CurrentReplicas: current,
		DesiredReplicas: desired,
		ReferenceTime:   o.Now,
		Victims:         []string{},
		Pods:            []prediction.Pod{},
		Certain:         true,
		Rules: prediction.RulesInfo{
			KubernetesVersion: o.Rules.Version(),
			FeatureGates:      o.Rules.GatesOf(gateKinds(ref.Kind)...),
			Overridden:        o.Rules.Overridden,
		},
	}
}

// isActive is controller.IsPodActive.
func isActive(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil
}

// isTerminating is controller.IsPodTerminating.
func isTerminating(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp != nil
}

func ownerText(p *corev1.Pod) string {
	if c := controllerOf(p); c != nil {
		return c.Kind + "/" + c.Name
	}
	return ""
}

// controllerOf is metav1.GetControllerOf without the copy and the
// interface call: it runs for every pod in every round.
func controllerOf(p *corev1.Pod) *metav1.OwnerReference {
	for i := range p.OwnerReferences {
		if r := &p.OwnerReferences[i]; r.Controller != nil && *r.Controller {
			return r
		}
	}
	return nil
}

// claimed is the outcome of PodControllerRefManager.ClaimPods for one
// controller over the pods of its namespace.
type claimed struct {
	active      []*corev1.Pod // owned or adopted active pods: the candidates
	adopted     map[string]bool
	terminating []*corev1.Pod // owned, matching, already terminating
	foreign     []*corev1.Pod // matching the selector but controlled by another object
	released    []*corev1.Pod // controlled but no longer matching: released, not counted
}

func claim(pods []*corev1.Pod, namespace, uid string, sel labels.Selector) claimed {
	out := claimed{adopted: map[string]bool{}}
	for _, p := range pods {
		if p.Namespace != namespace {
			continue
		}
		matches := sel.Matches(labels.Set(p.Labels))
		ctrl := controllerOf(p)
		switch {
		case ctrl != nil && string(ctrl.UID) == uid:
			switch {
			case !matches:
				out.released = append(out.released, p)
			case isActive(p):
				out.active = append(out.active, p)
			case isTerminating(p):
				out.terminating = append(out.terminating, p)
			}
		case ctrl != nil:
			if matches && isActive(p) {
				out.foreign = append(out.foreign, p)
			}
		case matches && isActive(p):
			// Orphans are adopted in the same sync and count at once.
			out.active = append(out.active, p)
			out.adopted[p.Name] = true
		}
	}
	return out
}

// gateKinds names the controllers whose gates decide a prediction for this
// kind of target.
func gateKinds(kind string) []string {
	switch kind {
	case snapshot.StatefulSet:
		return []string{rules.KindStatefulSet, rules.KindPods}
	case snapshot.Deployment:
		return []string{rules.KindComparator, rules.KindReplicaSet, rules.KindDeployment, rules.KindPods}
	case snapshot.Job:
		return []string{rules.KindJob}
	}
	return []string{rules.KindComparator, rules.KindReplicaSet}
}

// findNamed is the object of list named as ref, the last one where a
// file holds duplicates; nil when there is none.
func findNamed[T metav1.Object](list []T, ref snapshot.Ref) T {
	var found T
	for _, x := range list {
		if x.GetName() == ref.Name && x.GetNamespace() == ref.Namespace {
			found = x
		}
	}
	return found
}

// Reasons of the pods a controller's claim sets aside.
const (
	reasonForeign  = "matches the selector but is controlled by %s: never counted or deleted"
	reasonReleased = "labels no longer match the selector: the controller releases it"
)

// setAside are the entries of pods the controller never deletes: already
// terminating (in the controller's words), controlled by another object,
// and released. The Job controller releases none it could see here.
func (c claimed) setAside(c0 *engine.Comparator, terminating string) []prediction.Pod {
	var out []prediction.Pod
	add := func(pods []*corev1.Pod, fate, reason func(*corev1.Pod) string) {
		for _, p := range pods {
			pp := podEntry(ptr.To(engine.FromPod(p)), c0)
			pp.Fate, pp.Certain, pp.Reason = fate(p), true, reason(p)
			out = append(out, pp)
		}
	}
	fixed := func(s string) func(*corev1.Pod) string { return func(*corev1.Pod) string { return s } }
	add(c.terminating, fixed(prediction.FateTerminating), fixed(terminating))
	add(c.foreign, fixed(prediction.FateIgnored), func(p *corev1.Pod) string { return fmt.Sprintf(reasonForeign, ownerText(p)) })
	add(c.released, fixed(prediction.FateIgnored), fixed(reasonReleased))
	return out
}

// contenderGroups are the engine's open groups in the JSON's words.
func contenderGroups(groups []engine.Contenders) []prediction.ContenderGroup {
	out := make([]prediction.ContenderGroup, 0, len(groups))
	for _, g := range groups {
		out = append(out, prediction.ContenderGroup{Pods: g.Pods, Delete: g.Delete, Rule: g.Rule.ID(), Reason: g.Reason, Exact: g.Exact, Trials: g.Trials})
	}
	return out
}
