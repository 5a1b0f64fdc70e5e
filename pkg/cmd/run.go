package cmd

import (
	"context"
	"errors"

	"github.com/scale-preview/scale-preview/pkg/complete"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/printer"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/runbook"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/source"
	"github.com/scale-preview/scale-preview/pkg/workload"
)

// Run reads the snapshot, predicts and prints.
func (o *Options) Run(ctx context.Context) error {
	if o.Desired {
		return o.runDesired(ctx)
	}
	if o.Watch {
		return o.runWatch(ctx)
	}
	if o.ref.Kind == snapshot.Node {
		return o.runNode(ctx)
	}
	if o.ref.Kind == kindPod {
		return o.runPod(ctx) // the scheduler's preemption (pod.go)
	}
	snap, info, err := o.load(ctx)
	if err != nil {
		return err
	}
	defer tightenGC()()
	pred, err := o.predict(snap, info, o.ref, o.Replicas)
	if err != nil {
		return err
	}
	if err := o.print(pred); err != nil {
		return err
	}
	if o.FailIfUncertain && !pred.Certain {
		return uncertainError(pred)
	}
	return nil
}

// predict runs the model for ref at replicas on snap, with the checks,
// the runbook answers and the steering around it.
func (o *Options) predict(snap *snapshot.Snapshot, info prediction.RulesInfo, ref snapshot.Ref, replicas int32) (*prediction.Prediction, error) {
	check, err := complete.Check(snap, ref, !o.offline())
	if err != nil {
		return nil, err
	}
	rs, err := rules.For(o.minor, o.gates)
	if err != nil {
		return nil, withCode(ExitUsage, "%v", err)
	}
	wo := workload.Options{Rules: rs, Now: o.now, Seed: 1, JobCompletions: o.jobCompletions()}
	pred, err := workload.Predict(snap, ref, replicas, wo)
	if err != nil {
		return nil, err
	}
	check.Apply(pred)
	runbook.Analyze(snap, ref, pred)
	if req := (runbook.Request{Spare: o.Spare, Target: o.Target, TargetNode: o.TargetNode}); !req.Empty() {
		if pred.Steering, err = runbook.Steer(snap, ref, replicas, wo, pred, req); err != nil {
			return nil, withCode(ExitUsage, "%v", err) // a *runbook.RequestError
		}
	}
	pred.Rules.VersionSource, pred.Rules.VersionDetail = info.VersionSource, info.VersionDetail
	pred.Warnings = workload.Dedupe(append(pred.Warnings, snap.Notes...))
	return pred, nil
}

func (o *Options) print(pred *prediction.Prediction) error {
	pred.Normalize()
	if o.printJobNote(o.Out, pred) {
		return nil
	}
	return o.printWith(pred, func() error {
		return printer.Table(o.Out, pred, printer.TableOptions{Wide: *o.PrintFlags.OutputFormat == "wide", Width: o.width(o.Out)})
	})
}

// printWith prints pred with -o's printer (json, yaml, jsonpath...), as
// names, or as the mode's table.
func (o *Options) printWith(pred *prediction.Prediction, table func() error) error {
	switch {
	case o.printer != nil:
		return o.printer.PrintObj(pred, o.Out)
	case *o.PrintFlags.OutputFormat == "name":
		return o.printNames(pred)
	}
	return table()
}

// load reads the files, or the cluster, and says where the rules' version
// comes from.
func (o *Options) load(ctx context.Context) (*snapshot.Snapshot, prediction.RulesInfo, error) {
	flagInfo := prediction.RulesInfo{VersionSource: "flag", VersionDetail: "--kube-version " + o.KubeVersion}
	if o.offline() {
		snap, err := source.ReadFiles(o.files, o.In, o.ref.Namespace)
		if err != nil {
			return nil, flagInfo, err
		}
		if o.minor != 0 {
			return snap, flagInfo, nil
		}
		o.minor = rules.Newest
		return snap, prediction.RulesInfo{VersionSource: "default", VersionDetail: "offline: the newest supported version; choose with --kube-version"}, nil
	}
	info, err := o.liveRules(ctx)
	if err != nil {
		return nil, info, err
	}
	live := &source.Live{Client: o.client}
	snap, err := live.Load(ctx, o.ref)
	return snap, info, err
}

// liveRules connects and decides the rules' version: the flag's, or the
// cluster's. It asks the cluster once per run.
func (o *Options) liveRules(ctx context.Context) (prediction.RulesInfo, error) {
	info := prediction.RulesInfo{VersionSource: "flag", VersionDetail: "--kube-version " + o.KubeVersion}
	if err := o.connect(); err != nil {
		return info, err
	}
	if o.detected != nil {
		return *o.detected, nil
	}
	if o.minor == 0 {
		kv, err := source.DetectVersion(ctx, o.client)
		if err != nil {
			return info, err
		}
		if o.minor, err = rules.ParseMinor(kv.Version); err != nil {
			return info, err
		}
		info = prediction.RulesInfo{VersionSource: kv.Source, VersionDetail: kv.Detail}
		if o.minor < rules.Oldest || o.minor > rules.Newest {
			return info, withCode(ExitUsage, "the cluster runs Kubernetes %s, outside the supported 1.%d-1.%d; choose the rules explicitly with --kube-version", kv.Version, rules.Oldest, rules.Newest)
		}
	}
	o.detected = &info
	return info, nil
}

// printNames prints -o name: kubectl's pod/NAME, when every victim is in
// the namespace the command ran in. Otherwise the form would name pods in
// the wrong namespace: refused, with what to use instead.
func (o *Options) printNames(preds ...*prediction.Prediction) error {
	err := printer.Names(o.Out, o.ref.Namespace, preds...)
	var ne *printer.NamespaceError
	if !errors.As(err, &ne) {
		return err
	}
	if o.Desired {
		return withCode(ExitUsage, "%v: read each item's target.namespace with its victims from -o json, or preview one namespace at a time with -n", err)
	}
	return withCode(ExitUsage, "%v: use -o jsonpath='{range .victims[*]}{@}{\"\\n\"}{end}', which prints namespace/name", err)
}
