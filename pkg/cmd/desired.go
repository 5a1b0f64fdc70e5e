package cmd

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/scale-preview/scale-preview/pkg/desired"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/printer"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/source"
	"github.com/scale-preview/scale-preview/pkg/workload"
)

// desiredOptions: with --desired, -f holds the desired state (as for
// `kubectl diff -f`) and the pods come from the cluster.
type desiredOptions struct {
	Desired bool
	Watch   bool // --watch (watch.go)

	enforceNamespace bool // -n given: a manifest for another namespace is refused, as kubectl does

	// A template change's rollout reads the cluster once (desired_rollout.go).
	rolloutCluster *source.Cluster
	quotasRead     map[string]bool
}

func (o *Options) addDesiredFlags(fl *pflag.FlagSet) {
	fl.BoolVar(&o.Desired, "desired", false, "Read the workloads' desired state from -f (as kubectl diff -f does) and preview the scale-in that applying it causes, with the pods from the cluster.")
}

// completeDesired: no object argument, no --replicas (the manifests say
// both), the files and the namespace as kubectl diff takes them.
func (o *Options) completeDesired(args []string) error {
	switch {
	case len(args) > 0:
		return withCode(ExitUsage, "--desired takes the workloads from -f; name no object (got %s)", strings.Join(args, " "))
	case len(o.Filenames) == 0:
		return withCode(ExitUsage, "--desired needs the desired manifests: -f FILE or -f DIRECTORY, e.g. kubectl scale-preview --desired -f deploy.yaml")
	case o.replicasSet:
		return withCode(ExitUsage, "--replicas cannot be used with --desired: the replica counts come from the manifests")
	case len(o.Spare)+len(o.Target) > 0 || o.TargetNode != "":
		return withCode(ExitUsage, "--spare, --target and --target-node name one workload's pods; preview that workload alone to steer it")
	}
	if err := o.completePrinter(); err != nil {
		return err
	}
	ns, explicit, err := o.configFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil || ns == "" {
		ns = "default"
	}
	o.ref.Namespace, o.enforceNamespace = ns, explicit
	if o.files, err = expandFiles(o.Filenames, o.Recursive); err != nil {
		return err
	}
	return o.completeRules()
}

// readManifests reads the desired objects with kubectl's resource builder
// (Lists flattened, several documents per file). An object without a
// namespace gets -n's (or the context's); one with another namespace than
// an explicit -n is refused with kubectl's own check and words.
func (o *Options) readManifests() ([]*unstructured.Unstructured, error) {
	b := resource.NewLocalBuilder().Unstructured()
	var paths []string
	for _, f := range o.files {
		if f == "-" {
			b = b.Stream(o.In, "STDIN")
		} else {
			paths = append(paths, f)
		}
	}
	if len(paths) > 0 {
		b = b.FilenameParam(false, &resource.FilenameOptions{Filenames: paths})
	}
	infos, err := b.Flatten().Do().Infos()
	if err != nil {
		return nil, &source.FileError{Name: strings.Join(o.Filenames, ", "), Err: err}
	}
	var out []*unstructured.Unstructured
	seen := map[string]bool{}
	for _, info := range infos {
		u, ok := info.Object.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		if o.enforceNamespace {
			if err := resource.RequireNamespace(o.ref.Namespace)(info, nil); err != nil {
				return nil, withCode(ExitUsage, "%v", err)
			}
		}
		if u.GetNamespace() == "" {
			u.SetNamespace(o.ref.Namespace)
		}
		key := u.GroupVersionKind().GroupKind().String() + " " + u.GetNamespace() + "/" + u.GetName()
		if seen[key] {
			return nil, &source.FileError{Name: info.Source, Err: fmt.Errorf("%s is given twice: give each object once", key)}
		}
		seen[key] = true
		out = append(out, u)
	}
	return out, nil
}

// runDesired previews every workload of the manifests and prints them.
func (o *Options) runDesired(ctx context.Context) error {
	objs, err := o.readManifests()
	if err != nil {
		return err
	}
	manifests, others := desired.Workloads(objs)
	list := &prediction.List{Certain: true}
	if len(manifests) == 0 {
		return o.printDesired(list, fmt.Sprintf("no Deployment, ReplicaSet, StatefulSet, ReplicationController or HorizontalPodAutoscaler in the manifests (%d other object(s)): nothing is scaled", others))
	}
	info, err := o.liveRules(ctx)
	if err != nil {
		return err
	}
	for _, m := range manifests {
		ch, pred, err := o.previewDesired(ctx, m, info)
		if err != nil {
			return fmt.Errorf("%s %s/%s: %w", m.Ref.Kind, m.Ref.Namespace, m.Ref.Name, err)
		}
		if pred != nil {
			i := len(list.Items)
			ch.Item, ch.Deleted, ch.Certain = &i, len(pred.Victims), pred.Certain
			list.Items = append(list.Items, *pred)
			list.Deleted += len(pred.Victims)
			list.Certain = list.Certain && pred.Certain
		}
		list.Workloads = append(list.Workloads, ch)
	}
	if err := o.printDesired(list, ""); err != nil {
		return err
	}
	if o.FailIfUncertain && !list.Certain {
		return errUncertain
	}
	return nil
}

// previewDesired is one workload's change, and its prediction when it
// shrinks.
func (o *Options) previewDesired(ctx context.Context, m desired.Manifest, info prediction.RulesInfo) (prediction.WorkloadChange, *prediction.Prediction, error) {
	ch := prediction.WorkloadChange{Target: prediction.Target{Kind: m.Ref.Kind, Namespace: m.Ref.Namespace, Name: m.Ref.Name}, Certain: true}
	if m.Ref.Kind == snapshot.HorizontalPodAutoscaler {
		return o.previewAutoscaler(ctx, m, info, ch)
	}
	live, err := o.getLive(ctx, m.Ref)
	if apierrors.IsNotFound(err) {
		ch.Change, ch.Message = prediction.ChangeCreate, "does not exist yet: applying creates it, no pod is deleted"
		return ch, nil, nil
	}
	if err != nil {
		return ch, nil, err
	}
	lastApplied := desired.ParseLastApplied(live.meta.GetAnnotations())
	reps, err := desired.DesiredReplicas(m.Object, live.replicas, lastApplied)
	if err != nil {
		return ch, nil, &source.FileError{Name: strings.Join(o.Filenames, ", "), Err: fmt.Errorf("%s %s: %v", m.Ref.Kind, m.Ref.Name, err)}
	}
	changed, err := desired.TemplateChanged(m.Ref.Kind, m.Object.Object, live.object, lastApplied)
	if err != nil {
		return ch, nil, &source.FileError{Name: strings.Join(o.Filenames, ", "), Err: fmt.Errorf("%s %s: %v", m.Ref.Kind, m.Ref.Name, err)}
	}
	cur, want := live.replicas, reps.Value
	ch.CurrentReplicas, ch.DesiredReplicas, ch.TemplateChanged = &cur, &want, changed
	if changed {
		if pred, err := o.desiredRollout(ctx, m, want, lastApplied, info); err != nil || pred != nil {
			return rolloutChange(ch, pred), pred, err
		}
	}
	rollout := rolloutWords(m.Ref.Kind, changed)
	switch {
	case want == cur:
		ch.Change, ch.Message = prediction.ChangeNone, fmt.Sprintf("%d replicas, unchanged: no scale-in%s", cur, rollout)
		return ch, nil, nil
	case want > cur:
		ch.Change, ch.Message = prediction.ChangeScaleUp, fmt.Sprintf("%d -> %d replicas: a scale-up, no scale-in%s", cur, want, rollout)
		return ch, nil, nil
	}
	ch.Change = prediction.ChangeScaleIn
	snap, err := (&source.Live{Client: o.client}).Load(ctx, m.Ref)
	if err != nil {
		return ch, nil, err
	}
	if m.Ref.Kind == snapshot.Deployment && (changed || hasAny(m.Object, "strategy", "paused", "minReadySeconds")) {
		if err := applyToDeployment(snap, m, changed); err != nil {
			return ch, nil, &source.FileError{Name: strings.Join(o.Filenames, ", "), Err: err}
		}
	}
	pred, err := o.predict(snap, info, m.Ref, want)
	if err != nil {
		return ch, nil, err
	}
	if reps.Dropped {
		uncertain(pred, fmt.Sprintf("the manifest drops spec.replicas, which the last kubectl apply set: client-side kubectl apply removes it and the API server defaults it to 1 (previewed here); a server-side apply by another field manager may keep %d", cur))
	}
	if changed {
		templateChange(pred, m.Ref)
	}
	ch.Message = fmt.Sprintf("%d -> %d replicas: %s%s", cur, want, pred.Message, rolloutWords(m.Ref.Kind, changed))
	return ch, pred, nil
}

// rolloutWords is what a template change does besides the replica count.
func rolloutWords(kind string, changed bool) string {
	switch {
	case !changed:
		return ""
	case kind == snapshot.Deployment || kind == snapshot.StatefulSet:
		return "; the pod template changes: a rollout replaces the pods (not a scale-in)"
	}
	return "; the pod template changes: only pods created later get it"
}

func hasAny(m *unstructured.Unstructured, fields ...string) bool {
	spec, _, _ := unstructured.NestedMap(m.Object, "spec")
	for _, f := range fields {
		if _, ok := spec[f]; ok {
			return true
		}
	}
	return false
}

// applyToDeployment puts the manifest's template and rollout settings on
// the snapshot's Deployment.
func applyToDeployment(snap *snapshot.Snapshot, m desired.Manifest, changed bool) error {
	for i, d := range snap.Deployments {
		if d.Name != m.Ref.Name || d.Namespace != m.Ref.Namespace {
			continue
		}
		after, err := manifestDeployment(d, snap.ReplicaSets, m, changed)
		if err != nil {
			return err
		}
		snap.Deployments[i] = after
	}
	return nil
}

// manifestDeployment is d with the manifest's template and rollout
// settings (a rollback's template where it is one).
func manifestDeployment(d *appsv1.Deployment, replicaSets []*appsv1.ReplicaSet, m desired.Manifest, changed bool) (*appsv1.Deployment, error) {
	var tmpl = &d.Spec.Template
	if changed {
		var err error
		if tmpl, err = desired.ManifestTemplate(m.Object); err != nil {
			return nil, err
		}
		if t := rollbackTemplate(d, replicaSets, m); t != nil {
			tmpl = t
		}
	}
	return desired.DeploymentAfter(d, m.Object, tmpl)
}

// rollbackTemplate is the template of d's ReplicaSet that the manifest's
// equals (a rollback), so that the model finds that ReplicaSet as the new
// one, as the controller does; nil when none does.
func rollbackTemplate(d *appsv1.Deployment, replicaSets []*appsv1.ReplicaSet, m desired.Manifest) *corev1.PodTemplateSpec {
	for _, rs := range replicaSets {
		if c := metav1.GetControllerOf(rs); c == nil || c.UID != d.UID {
			continue
		}
		t := rs.Spec.Template.DeepCopy()
		delete(t.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&appsv1.ReplicaSet{Spec: appsv1.ReplicaSetSpec{Template: *t}})
		if err != nil {
			continue
		}
		if differs, err := desired.TemplateChanged(snapshot.ReplicaSet, m.Object.Object, u, nil); err == nil && !differs {
			return t
		}
	}
	return nil
}

// templateChange says what a template change adds to a scale-in where the
// rollout model does not run (desiredRollout): a paused Deployment starts
// no rollout; a StatefulSet that updates OnDelete replaces no pod.
func templateChange(pred *prediction.Prediction, ref snapshot.Ref) {
	switch ref.Kind {
	case snapshot.Deployment:
		pred.Warnings = append(pred.Warnings, "the pod template changes, but the Deployment is paused: no rollout until it is resumed")
	case snapshot.StatefulSet:
		pred.Warnings = append(pred.Warnings, "the pod template changes; updateStrategy OnDelete: pods get it only when deleted")
	default:
		pred.Warnings = append(pred.Warnings, "the pod template changes: a "+ref.Kind+" does not replace its pods; only pods created later get it")
	}
}

// uncertain marks the whole prediction uncertain for why.
func uncertain(pred *prediction.Prediction, why string) {
	pred.Certain = false
	pred.Warnings = append(pred.Warnings, "UNCERTAIN: "+why)
}

// liveObject is the workload as the cluster has it now.
type liveObject struct {
	meta     metav1.Object
	object   map[string]any // unstructured, for the template comparison
	replicas int32
}

func (o *Options) getLive(ctx context.Context, ref snapshot.Ref) (*liveObject, error) {
	ns, apps := ref.Namespace, o.client.AppsV1()
	var obj interface {
		metav1.Object
		runtime.Object
	}
	var replicas *int32
	var err error
	switch ref.Kind {
	case snapshot.Deployment:
		var d *appsv1.Deployment
		if d, err = apps.Deployments(ns).Get(ctx, ref.Name, metav1.GetOptions{}); err == nil {
			obj, replicas = d, d.Spec.Replicas
		}
	case snapshot.ReplicaSet:
		var rs *appsv1.ReplicaSet
		if rs, err = apps.ReplicaSets(ns).Get(ctx, ref.Name, metav1.GetOptions{}); err == nil {
			obj, replicas = rs, rs.Spec.Replicas
		}
	case snapshot.StatefulSet:
		var st *appsv1.StatefulSet
		if st, err = apps.StatefulSets(ns).Get(ctx, ref.Name, metav1.GetOptions{}); err == nil {
			obj, replicas = st, st.Spec.Replicas
		}
	case snapshot.ReplicationController:
		rc, e := o.client.CoreV1().ReplicationControllers(ns).Get(ctx, ref.Name, metav1.GetOptions{})
		if err = e; err == nil {
			obj, replicas = rc, rc.Spec.Replicas
		}
	default:
		return nil, fmt.Errorf("%w: %s", workload.ErrUnsupported, ref.Kind)
	}
	if err != nil {
		return nil, err
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	r := int32(1)
	if replicas != nil {
		r = *replicas
	}
	return &liveObject{meta: obj, object: u, replicas: r}, nil
}

// previewAutoscaler previews an autoscaler whose bounds change, or a new
// one: its next step under the manifest's minReplicas and maxReplicas.
func (o *Options) previewAutoscaler(ctx context.Context, m desired.Manifest, info prediction.RulesInfo, ch prediction.WorkloadChange) (prediction.WorkloadChange, *prediction.Prediction, error) {
	fileErr := func(err error) error {
		return &source.FileError{Name: strings.Join(o.Filenames, ", "), Err: fmt.Errorf("%s %s: %v", m.Ref.Kind, m.Ref.Name, err)}
	}
	bounds, err := desired.AutoscalerBounds(m.Object)
	if err != nil {
		return ch, nil, fileErr(err)
	}
	live, err := o.client.AutoscalingV2().HorizontalPodAutoscalers(m.Ref.Namespace).Get(ctx, m.Ref.Name, metav1.GetOptions{})
	var h *autoscalingv2.HorizontalPodAutoscaler
	switch {
	case apierrors.IsNotFound(err):
		if h, err = desired.NewAutoscaler(m.Object); err != nil {
			return ch, nil, fileErr(err)
		}
		h.Namespace = m.Ref.Namespace
	case err != nil:
		return ch, nil, err
	default:
		minR := int32(1)
		if live.Spec.MinReplicas != nil {
			minR = *live.Spec.MinReplicas
		}
		if minR == bounds.Min && live.Spec.MaxReplicas == bounds.Max {
			ch.Change, ch.Message = prediction.ChangeNone, fmt.Sprintf("minReplicas %d and maxReplicas %d unchanged: no scale-in from the autoscaler's bounds", minR, bounds.Max)
			return ch, nil, nil
		}
		h = live.DeepCopy()
		h.Spec.MinReplicas, h.Spec.MaxReplicas = &bounds.Min, bounds.Max
	}
	target, ok := snapshot.AutoscalerTarget(h)
	if !ok {
		return ch, nil, fmt.Errorf("%w: it scales %s %s, which scale-preview does not model", workload.ErrUnsupported, h.Spec.ScaleTargetRef.Kind, h.Spec.ScaleTargetRef.Name)
	}
	snap, err := (&source.Live{Client: o.client}).Load(ctx, target)
	if apierrors.IsNotFound(err) {
		ch.Change, ch.Message = prediction.ChangeNoTarget, fmt.Sprintf("its target %s %s does not exist yet: no pod is deleted", target.Kind, target.Name)
		return ch, nil, nil
	}
	if err != nil {
		return ch, nil, err
	}
	snap.HPAs = slices.DeleteFunc(snap.HPAs, func(x *autoscalingv2.HorizontalPodAutoscaler) bool { return x.Name == h.Name })
	snap.HPAs = append(snap.HPAs, h)
	pred, err := o.predict(snap, info, m.Ref, workload.UseRecommendation)
	if err != nil {
		return ch, nil, err
	}
	cur, want := pred.CurrentReplicas, pred.DesiredReplicas
	ch.CurrentReplicas, ch.DesiredReplicas = &cur, &want
	bnd := fmt.Sprintf("minReplicas %d, maxReplicas %d", bounds.Min, bounds.Max)
	if len(pred.Victims) == 0 && pred.Certain {
		ch.Change, ch.Message = prediction.ChangeAutoscale, fmt.Sprintf("with %s the autoscaler scales %s %s to %d (now %d): no scale-in", bnd, target.Kind, target.Name, want, cur)
		return ch, nil, nil
	}
	ch.Change, ch.Message = prediction.ChangeScaleIn, fmt.Sprintf("with %s: %s", bnd, pred.Message)
	return ch, pred, nil
}

// printDesired prints the list: one full table per workload that shrinks,
// then a line per workload (the one line when nothing shrinks).
func (o *Options) printDesired(list *prediction.List, only string) error {
	list.Normalize()
	if o.printer != nil {
		return o.printer.PrintObj(list, o.Out)
	}
	if *o.PrintFlags.OutputFormat == "name" {
		items := make([]*prediction.Prediction, len(list.Items))
		for i := range list.Items {
			items[i] = &list.Items[i]
		}
		return o.printNames(items...)
	}
	if only != "" {
		_, err := fmt.Fprintln(o.Out, only)
		return err
	}
	opt := printer.TableOptions{Wide: *o.PrintFlags.OutputFormat == "wide", Width: o.width(o.Out)}
	for i := range list.Items {
		p := &list.Items[i]
		fmt.Fprintf(o.Out, "=== %s %s/%s ===\n", p.Target.Kind, p.Target.Namespace, p.Target.Name)
		print := func() error { return printer.Table(o.Out, p, opt) }
		if p.Rollout != nil {
			print = func() error { return printer.RolloutTable(o.Out, p, opt) }
		}
		if err := print(); err != nil {
			return err
		}
		fmt.Fprintln(o.Out)
	}
	return desiredSummary(o.Out, list, opt.Width)
}

// desiredSummary is one line per workload of the manifests, wrapped at
// the width.
func desiredSummary(w io.Writer, list *prediction.List, width int) error {
	what := "no pod is deleted"
	if list.Deleted > 0 {
		what = fmt.Sprintf("%d pod(s) deleted", list.Deleted)
		if !list.Certain {
			what += ", not all of them certain"
		}
	}
	lines := []string{fmt.Sprintf("Applying the manifests: %s.", what)}
	for _, c := range list.Workloads {
		lines = append(lines, fmt.Sprintf("  %s %s/%s: %s", c.Target.Kind, c.Target.Namespace, c.Target.Name, c.Message))
	}
	return printer.Lines(w, lines, "    ", width)
}
