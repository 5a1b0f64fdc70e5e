package cmd

import (
	"context"
	"errors"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/printer"
	"github.com/scale-preview/scale-preview/pkg/rollout"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/source"
)

// Run reads the cluster (or the files), predicts and prints.
func (o *RolloutOptions) Run(ctx context.Context) error {
	cl, info, err := o.loadRolloutCluster(ctx)
	if err != nil {
		return err
	}
	rs, err := rules.For(o.minor, o.gates)
	if err != nil {
		return withCode(ExitUsage, "%v", err)
	}
	in := rollout.Input{ReplicaSets: cl.Workloads.ReplicaSets, Pods: cl.Pods, Nodes: cl.Nodes, Namespaces: cl.Namespaces,
		PDBs: cl.PDBs, Quotas: cl.Quotas, Workloads: cl.Workloads, Change: o.change, Rules: rs, Scheduler: rules.Scheduler(o.minor, o.gates), Now: o.now}
	target, err := o.findTarget(cl, &in)
	if err != nil {
		return err
	}
	if err := o.readRevisions(ctx, cl, &in); err != nil {
		return err
	}
	res, err := rollout.Predict(in)
	if err != nil {
		return rolloutError(err)
	}
	printTable := func(pred *prediction.Prediction) error {
		return o.printWith(pred, func() error {
			return printer.RolloutTable(o.Out, pred, printer.TableOptions{Wide: *o.PrintFlags.OutputFormat == "wide", Width: o.width(o.Out)})
		})
	}
	return o.finishCluster(rolloutPrediction(res, target, rs, info, o.now), cl, printTable,
		withCode(ExitUncertain, "some steps depend on a tie, the scheduler's scoring or timing (--fail-if-uncertain); see the warnings"))
}

// rolloutError gives the model's errors their exit codes.
func rolloutError(err error) error {
	var ce *rollout.ChangeError
	var ie *rollout.InputError
	var ue *rollout.UnsupportedError
	switch {
	case errors.As(err, &ue):
		return withCode(ExitUnsupported, "%v", ue)
	case errors.As(err, &ce):
		return withCode(ExitUsage, "%v", ce)
	case errors.As(err, &ie):
		return withCode(ExitBadFile, "%v", ie)
	}
	return err
}

// loadRolloutCluster reads what a rollout reads: the scheduler's view, the
// budgets and the owners (as a drain does).
func (o *RolloutOptions) loadRolloutCluster(ctx context.Context) (*source.Cluster, prediction.RulesInfo, error) {
	if !o.offline() {
		info, err := o.liveRules(ctx)
		if err != nil {
			return nil, info, err
		}
		cl, err := source.ReadDrainCluster(ctx, o.client)
		var pe *source.PermissionError
		if errors.As(err, &pe) {
			pe.Purpose = "predicting a rollout"
			return nil, info, withCode(ExitForbidden, "%s", pe.Error())
		}
		if err != nil {
			return nil, info, err
		}
		quotas, err := o.listQuotas(ctx, o.ref.Namespace)
		cl.Quotas = append(cl.Quotas, quotas...)
		return cl, info, err
	}
	info := prediction.RulesInfo{VersionSource: "flag", VersionDetail: "--kube-version " + o.KubeVersion}
	cl, err := source.ReadClusterFiles(o.files, o.In, o.ref.Namespace)
	if err != nil {
		return nil, info, err
	}
	if !cl.Kinds["Node"] {
		return nil, info, withCode(ExitBadFile, "the files hold no Node: a rollout places its new pods (add kubectl get nodes -o yaml)")
	}
	if o.minor == 0 {
		o.minor = rules.Newest
		info = prediction.RulesInfo{VersionSource: "default", VersionDetail: "offline: the newest supported version; choose with --kube-version"}
	}
	return cl, info, nil
}

// listQuotas lists a namespace's ResourceQuotas (a surge pod over quota
// is a FailedCreate).
func (o *Options) listQuotas(ctx context.Context, ns string) ([]*corev1.ResourceQuota, error) {
	list, err := o.client.CoreV1().ResourceQuotas(ns).List(ctx, metav1.ListOptions{})
	if apierrors.IsForbidden(err) {
		return nil, withCode(ExitForbidden, "%s", (&source.PermissionError{What: "list resourcequotas", Err: err, Purpose: "predicting a rollout"}).Error())
	}
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.ResourceQuota, len(list.Items))
	for i := range list.Items {
		out[i] = &list.Items[i]
	}
	return out, nil
}

func (o *RolloutOptions) findDeployment(cl *source.Cluster) (*appsv1.Deployment, error) {
	for _, d := range cl.Workloads.Deployments {
		if d.Name == o.name && d.Namespace == o.ref.Namespace {
			if !cl.Kinds["ReplicaSet"] && len(cl.Workloads.ReplicaSets) == 0 && d.Status.Replicas > 0 {
				return nil, withCode(ExitBadFile, "the files hold no ReplicaSet: a rollout needs deployment %s's ReplicaSets (add kubectl get rs -o yaml)", d.Name)
			}
			return d, nil
		}
	}
	return nil, withCode(ExitNotFound, "deployment %q not found in namespace %q (check the name and -n NAMESPACE)", o.name, o.ref.Namespace)
}

// rolloutTarget is the workload rolled out.
type rolloutTarget struct {
	kind, namespace, name string
	replicas              int32
}

// findTarget sets the workload in the rollout's input.
func (o *RolloutOptions) findTarget(cl *source.Cluster, in *rollout.Input) (rolloutTarget, error) {
	if o.kind == "DaemonSet" {
		return o.findDaemonSet(cl, in)
	}
	if o.kind == "StatefulSet" {
		for _, s := range cl.Workloads.StatefulSets {
			if s.Name == o.name && s.Namespace == o.ref.Namespace {
				in.StatefulSet = s
				return rolloutTarget{"StatefulSet", s.Namespace, s.Name, replicasOrOne(s.Spec.Replicas)}, nil
			}
		}
		return rolloutTarget{}, withCode(ExitNotFound, "statefulset %q not found in namespace %q (check the name and -n NAMESPACE)", o.name, o.ref.Namespace)
	}
	d, err := o.findDeployment(cl)
	if err != nil {
		return rolloutTarget{}, err
	}
	in.Deployment = d
	return rolloutTarget{"Deployment", d.Namespace, d.Name, replicasOrOne(d.Spec.Replicas)}, nil
}

// rolloutPrediction is the plugin's document for a rollout.
func rolloutPrediction(res *rollout.Result, t rolloutTarget, rs rules.RuleSet, info prediction.RulesInfo, now time.Time) *prediction.Prediction {
	info.KubernetesVersion = rs.Version()
	r := res.Rollout
	p := &prediction.Prediction{APIVersion: prediction.APIVersion, Kind: prediction.Kind,
		Target: prediction.Target{Kind: t.kind, Namespace: t.namespace, Name: t.name}, ReferenceTime: now, Rules: info,
		CurrentReplicas: t.replicas, DesiredReplicas: t.replicas,
		Certain: res.Certain, Victims: res.Victims, Rollout: &r, Warnings: res.Warnings, Contenders: res.Contenders}
	p.Message = rolloutMessage(r, len(res.Victims))
	return p
}

func rolloutMessage(r prediction.Rollout, victims int) string {
	switch r.Outcome {
	case prediction.RolloutCompletes:
		return fmt.Sprintf("the rollout completes in %d step(s); %d old pod(s) deleted", len(r.Steps), victims)
	case prediction.RolloutStalls:
		return fmt.Sprintf("the rollout stalls at step %d; %d old pod(s) deleted, %d left", max(len(r.Steps), 1), victims, len(r.Remaining))
	}
	return "the rollout does not start: " + r.Reason
}

func replicasOrOne(p *int32) int32 {
	if p == nil {
		return 1
	}
	return *p
}
