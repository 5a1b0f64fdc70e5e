package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/scale-preview/scale-preview/pkg/desired"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rollout"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/source"
)

// desiredRollout previews the rollout that a template change starts, with
// the manifest's replicas, strategy and template applied: the model of
// `rollout TYPE/NAME`, whose first sync also makes the scaling event
// (deployment controller) or whose rolling update follows the created
// ordinals (after the condemned ones, highest first). It returns nil
// where that model does not run and the scale-in's preview stays: a
// Deployment left paused (no rollout until it is resumed), a StatefulSet
// that updates OnDelete.
func (o *Options) desiredRollout(ctx context.Context, m desired.Manifest, want int32, lastApplied map[string]any, info prediction.RulesInfo) (*prediction.Prediction, error) {
	if m.Ref.Kind != snapshot.Deployment && m.Ref.Kind != snapshot.StatefulSet {
		return nil, nil
	}
	cl, err := o.desiredCluster(ctx, m.Ref.Namespace)
	if err != nil {
		return nil, err
	}
	rs, err := rules.For(o.minor, o.gates)
	if err != nil {
		return nil, withCode(ExitUsage, "%v", err)
	}
	in := rollout.Input{ReplicaSets: cl.Workloads.ReplicaSets, Pods: cl.Pods, Nodes: cl.Nodes, Namespaces: cl.Namespaces,
		PDBs: cl.PDBs, Quotas: cl.Quotas, Workloads: cl.Workloads, Change: rollout.Change{Kind: rollout.ChangeDesired},
		Rules: rs, Scheduler: rules.Scheduler(o.minor, o.gates), Now: o.now}
	target, ok, err := desiredTarget(cl, desiredChange{m, want, lastApplied}, &in)
	if err != nil {
		return nil, &source.FileError{Name: strings.Join(o.Filenames, ", "), Err: fmt.Errorf("%s %s: %v", m.Ref.Kind, m.Ref.Name, err)}
	}
	if !ok {
		return nil, nil
	}
	res, err := rollout.Predict(in)
	if err != nil {
		return nil, rolloutError(err)
	}
	pred := rolloutPrediction(res, target.rolloutTarget, rs, info, o.now)
	pred.CurrentReplicas = target.current
	pred.Warnings = append(append(pred.Warnings, clusterWarnings(cl)...), cl.Notes...)
	return pred, nil
}

// desiredCluster reads what a rollout reads, once for all manifests, and
// each namespace's ResourceQuotas once.
func (o *Options) desiredCluster(ctx context.Context, ns string) (*source.Cluster, error) {
	if o.rolloutCluster == nil {
		cl, err := source.ReadDrainCluster(ctx, o.client)
		var pe *source.PermissionError
		if errors.As(err, &pe) {
			pe.Purpose = "predicting the rollout of a template change"
			return nil, withCode(ExitForbidden, "%s", pe.Error())
		}
		if err != nil {
			return nil, err
		}
		o.rolloutCluster, o.quotasRead = cl, map[string]bool{}
	}
	if !o.quotasRead[ns] {
		quotas, err := o.listQuotas(ctx, ns)
		if err != nil {
			return nil, err
		}
		o.rolloutCluster.Quotas = append(o.rolloutCluster.Quotas, quotas...)
		o.quotasRead[ns] = true
	}
	return o.rolloutCluster, nil
}

// desiredChange is one manifest and what kubectl apply makes of it.
type desiredChange struct {
	m           desired.Manifest
	want        int32 // the replicas after the apply
	lastApplied map[string]any
}

// desiredTarget puts the live workload, with the manifest applied as
// kubectl apply merges it, into the rollout's input; false where the
// rollout model does not run.
func desiredTarget(cl *source.Cluster, c desiredChange, in *rollout.Input) (desiredRolloutTarget, bool, error) {
	ref := c.m.Ref
	if ref.Kind == snapshot.StatefulSet {
		for _, s := range cl.Workloads.StatefulSets {
			if s.Name != ref.Name || s.Namespace != ref.Namespace {
				continue
			}
			after := &appsv1.StatefulSet{}
			if err := desired.Applied(c.m.Object, s, c.lastApplied, after); err != nil {
				return desiredRolloutTarget{}, false, err
			}
			if after.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
				return desiredRolloutTarget{}, false, nil
			}
			after.Spec.Replicas = &c.want
			in.StatefulSet = after
			return desiredRolloutTarget{rolloutTarget{"StatefulSet", s.Namespace, s.Name, c.want}, replicasOrOne(s.Spec.Replicas)}, true, nil
		}
		return desiredRolloutTarget{}, false, nil
	}
	for _, d := range cl.Workloads.Deployments {
		if d.Name != ref.Name || d.Namespace != ref.Namespace {
			continue
		}
		after := &appsv1.Deployment{}
		if err := desired.Applied(c.m.Object, d, c.lastApplied, after); err != nil {
			return desiredRolloutTarget{}, false, err
		}
		if after.Spec.Paused {
			return desiredRolloutTarget{}, false, nil
		}
		if t := rollbackTemplate(d, cl.Workloads.ReplicaSets, c.m); t != nil {
			after.Spec.Template = *t
		}
		after.Spec.Replicas = &c.want
		in.Deployment = after
		return desiredRolloutTarget{rolloutTarget{"Deployment", d.Namespace, d.Name, c.want}, replicasOrOne(d.Spec.Replicas)}, true, nil
	}
	return desiredRolloutTarget{}, false, nil
}

// desiredRolloutTarget is the workload rolled out and its replicas now.
type desiredRolloutTarget struct {
	rolloutTarget
	current int32
}

// rolloutChange is the workload's line for its rollout's item.
func rolloutChange(ch prediction.WorkloadChange, pred *prediction.Prediction) prediction.WorkloadChange {
	if pred == nil {
		return ch
	}
	cur, want := *ch.CurrentReplicas, *ch.DesiredReplicas
	switch {
	case want < cur:
		ch.Change, ch.Message = prediction.ChangeScaleIn, fmt.Sprintf("%d -> %d replicas and a new pod template: %s", cur, want, pred.Message)
	case want > cur:
		ch.Change, ch.Message = prediction.ChangeScaleUp, fmt.Sprintf("%d -> %d replicas and a new pod template: %s", cur, want, pred.Message)
	default:
		ch.Change, ch.Message = prediction.ChangeNone, fmt.Sprintf("%d replicas, a new pod template: %s", cur, pred.Message)
	}
	return ch
}
