package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// watchQuiet is how long the watch waits after a change for the next one
// before it predicts again: a rollout step or a scale moves many pods in a
// burst, and one prediction after the burst is enough. watchMaxDelay
// bounds the wait when changes never stop. (Variables: tests shorten them.)
var watchQuiet, watchMaxDelay = 500 * time.Millisecond, 5 * time.Second

func (o *Options) addWatchFlags(fl *pflag.FlagSet) {
	fl.BoolVarP(&o.Watch, "watch", "w", false, "Keep the prediction current: watch the workload and its pods, and print it again (with the time and what changed) whenever its victims or their certainty change, until Ctrl-C.")
}

// validateWatchKind refuses a watch of what is not a workload's scale-in:
// node, pod and Job previews answer once.
func (o *Options) validateWatchKind() error {
	switch k := o.ref.Kind; {
	case !o.Watch:
		return nil
	case k == snapshot.Node || k == kindPod || k == snapshot.Job:
		return withCode(ExitUsage, "--watch follows a workload's scale-in (deploy, rs, rc, sts, hpa); run %s/NAME without it", strings.ToLower(k))
	}
	return nil
}

// validateWatch refuses what has no meaning in a watch.
func (o *Options) validateWatch() error {
	switch {
	case !o.Watch:
		return nil
	case len(o.Filenames) > 0 && !o.Desired:
		return withCode(ExitUsage, "--watch watches the cluster; it cannot be used with -f files (an offline snapshot does not change)")
	case o.Desired:
		return withCode(ExitUsage, "--watch previews one workload: name it as TYPE/NAME --replicas=N instead of --desired")
	case o.Now != "":
		return withCode(ExitUsage, "--watch predicts at the current time at each change; it cannot be used with --now")
	case o.FailIfUncertain:
		return withCode(ExitUsage, "--watch runs until Ctrl-C and has no single answer for --fail-if-uncertain")
	}
	return nil
}

// runWatch prints the prediction, then again whenever the victims or their
// certainty change, until ctx ends (Ctrl-C): that is a clean stop.
func (o *Options) runWatch(ctx context.Context) error {
	snap, info, err := o.load(ctx)
	if err != nil {
		return err
	}
	pred, err := o.predict(snap, info, o.ref, o.Replicas)
	if err != nil {
		return err
	}
	sel, err := watchSelector(snap, o.ref)
	if err != nil {
		return err
	}
	w := &watchLoop{
		client: o.client, ref: o.ref, pods: sel, quiet: watchQuiet, maxDelay: watchMaxDelay,
		predict: func(ctx context.Context) (*prediction.Prediction, error) {
			o.now = time.Now()
			snap, info, err := o.load(ctx)
			if err != nil {
				return nil, err
			}
			return o.predict(snap, info, o.ref, o.Replicas)
		},
		emit: o.emitWatched,
		warn: func(err error) {
			_, msg := classify(err)
			fmt.Fprintf(o.ErrOut, "%s: %s (the watch goes on)\n", time.Now().UTC().Format(time.RFC3339), msg)
		},
	}
	if err := o.emitWatched(pred, []string{"first prediction"}, o.now); err != nil {
		return err
	}
	return w.run(ctx, pred)
}

// emitWatched prints one prediction of the watch. Tables get a line with
// the time and what changed; documents (-o json, yaml, name, ...) follow
// each other on stdout and the line goes to stderr, so that stdout stays a
// stream of documents.
func (o *Options) emitWatched(pred *prediction.Prediction, changes []string, at time.Time) error {
	line := fmt.Sprintf("=== %s: %s ===", at.UTC().Format(time.RFC3339), strings.Join(changes, "; "))
	switch {
	case o.printer != nil || *o.PrintFlags.OutputFormat == "name":
		fmt.Fprintln(o.ErrOut, line)
	default:
		fmt.Fprintln(o.Out, line)
	}
	if err := o.print(pred); err != nil {
		return err
	}
	if o.printer == nil && *o.PrintFlags.OutputFormat != "name" {
		fmt.Fprintln(o.Out)
	}
	return nil
}

// watchSelector is the label selector of the pods whose changes can change
// the prediction: the workload's pods, and for a ReplicaSet of a
// Deployment its siblings' too (they count toward ranks).
func watchSelector(s *snapshot.Snapshot, ref snapshot.Ref) (labels.Selector, error) {
	if ref.Kind == snapshot.HorizontalPodAutoscaler {
		for _, h := range s.HPAs {
			if h.Name == ref.Name {
				if t, ok := snapshot.AutoscalerTarget(h); ok {
					return watchSelector(s, t)
				}
			}
		}
		return labels.Everything(), nil
	}
	var ls *metav1.LabelSelector
	switch ref.Kind {
	case snapshot.Deployment:
		ls = selectorNamed(s.Deployments, ref.Name, func(d *appsv1.Deployment) *metav1.LabelSelector { return d.Spec.Selector })
	case snapshot.ReplicaSet:
		ls = selectorNamed(s.ReplicaSets, ref.Name, func(rs *appsv1.ReplicaSet) *metav1.LabelSelector { return rs.Spec.Selector })
	case snapshot.StatefulSet:
		ls = selectorNamed(s.StatefulSets, ref.Name, func(st *appsv1.StatefulSet) *metav1.LabelSelector { return st.Spec.Selector })
	case snapshot.ReplicationController:
		for _, rc := range s.ReplicationControllers {
			if rc.Name == ref.Name {
				return labels.SelectorFromSet(rc.Spec.Selector), nil
			}
		}
	}
	if ls == nil {
		return labels.Everything(), nil
	}
	sel, err := metav1.LabelSelectorAsSelector(ls)
	if err != nil {
		return nil, err
	}
	// Siblings differ only by pod-template-hash.
	reqs, _ := sel.Requirements()
	out := labels.NewSelector()
	for _, r := range reqs {
		if r.Key() == appsv1.DefaultDeploymentUniqueLabelKey && r.Operator() != selection.DoesNotExist {
			continue
		}
		out = out.Add(r)
	}
	return out, nil
}

// watchLoop re-predicts when the watched objects change. The informers
// only say when: each prediction reads the cluster afresh (source.Live,
// which re-reads until the workload held still), because the caches of
// different resources are never one consistent moment. Informers relist
// after a watch expires (410 Gone) and reconnect after errors, as client-go
// does for controllers. Their caches hold only each object's name and
// resourceVersion, so memory follows the number of pods, not the run time.
type watchLoop struct {
	client   kubernetes.Interface
	ref      snapshot.Ref
	pods     labels.Selector
	quiet    time.Duration
	maxDelay time.Duration
	predict  func(context.Context) (*prediction.Prediction, error)
	emit     func(p *prediction.Prediction, changes []string, at time.Time) error
	warn     func(error)
	now      func() time.Time // a test seam; time.Now by default
}

func (w *watchLoop) run(ctx context.Context, last *prediction.Prediction) error {
	if w.now == nil {
		w.now = time.Now
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	kick := make(chan struct{}, 1)
	var running sync.WaitGroup
	w.startInformers(ctx, kick, &running)
	defer func() { // wait for the informers, which stop with ctx
		cancel()
		running.Wait()
	}()
	for {
		if !w.wait(ctx, kick, last) {
			return nil
		}
		pred, err := w.predict(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			w.warn(err)
			continue
		}
		if changes := predictionChanges(last, pred); len(changes) > 0 {
			if err := w.emit(pred, changes, w.now()); err != nil {
				return err
			}
		}
		last = pred
	}
}

// startInformers starts the informers; every event kicks the loop. A
// watch that fails (forbidden, the server gone) says so once on stderr
// instead of client-go's log lines; expiry and EOF are the informer's
// routine and say nothing.
func (w *watchLoop) startInformers(ctx context.Context, kick chan struct{}, running *sync.WaitGroup) {
	signal := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	var mu sync.Mutex
	lastErr := ""
	infs := w.informers()
	for _, inf := range infs {
		_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || ctx.Err() != nil {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if err.Error() != lastErr {
				lastErr = err.Error()
				w.warn(fmt.Errorf("watch: %w", err))
			}
		})
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { signal() },
			UpdateFunc: func(any, any) { signal() },
			DeleteFunc: func(any) { signal() },
		})
	}
	for _, inf := range infs {
		running.Go(func() { inf.RunWithContext(ctx) })
	}
}

// wait blocks until something changed (and settled), or the answer's
// age-based rules change it at stableUntil with no object changing; false
// once ctx is done.
func (w *watchLoop) wait(ctx context.Context, kick <-chan struct{}, last *prediction.Prediction) bool {
	var stable <-chan time.Time
	if last != nil && last.StableUntil != nil {
		timer := time.NewTimer(max(last.StableUntil.Sub(w.now())+time.Second, 0))
		defer timer.Stop()
		stable = timer.C
	}
	select {
	case <-ctx.Done():
	case <-kick:
		w.settle(ctx, kick)
	case <-stable:
	}
	return ctx.Err() == nil
}

// settle waits until no change came for quiet, or maxDelay passed.
func (w *watchLoop) settle(ctx context.Context, kick <-chan struct{}) {
	deadline := time.NewTimer(w.maxDelay)
	defer deadline.Stop()
	for {
		quiet := time.NewTimer(w.quiet)
		select {
		case <-ctx.Done():
		case <-deadline.C:
		case <-quiet.C:
		case <-kick:
			quiet.Stop()
			continue
		}
		quiet.Stop()
		return
	}
}

// informers watch the pods (by the workload's selector), the workload
// itself and, for a Deployment, its ReplicaSets; for an autoscaler also
// the autoscaler.
func (w *watchLoop) informers() []cache.SharedIndexInformer {
	ns, ref, c := w.ref.Namespace, w.ref, w.client
	bySelector := func(o *metav1.ListOptions) { o.LabelSelector = w.pods.String() }
	byName := func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", ref.Name).String()
	}
	out := []cache.SharedIndexInformer{informerFor(c, c.CoreV1().Pods(ns), &corev1.Pod{}, bySelector)}
	switch ref.Kind {
	case snapshot.HorizontalPodAutoscaler:
		// The target's pods are watched; its spec moves with the autoscaler's status.
		out = append(out, informerFor(c, c.AutoscalingV2().HorizontalPodAutoscalers(ns), &autoscalingv2.HorizontalPodAutoscaler{}, byName))
	case snapshot.Deployment:
		out = append(out, informerFor(c, c.AppsV1().Deployments(ns), &appsv1.Deployment{}, byName),
			informerFor(c, c.AppsV1().ReplicaSets(ns), &appsv1.ReplicaSet{}, bySelector))
	case snapshot.ReplicaSet:
		out = append(out, informerFor(c, c.AppsV1().ReplicaSets(ns), &appsv1.ReplicaSet{}, byName))
	case snapshot.StatefulSet:
		out = append(out, informerFor(c, c.AppsV1().StatefulSets(ns), &appsv1.StatefulSet{}, byName))
	case snapshot.ReplicationController:
		out = append(out, informerFor(c, c.CoreV1().ReplicationControllers(ns), &corev1.ReplicationController{}, byName))
	}
	for _, inf := range out {
		// The caches exist to say that something changed: keep only each
		// object's name, namespace and resourceVersion.
		_ = inf.SetTransform(func(obj any) (any, error) {
			if m, err := metaOnly(obj); err == nil {
				return m, nil
			}
			return obj, nil
		})
	}
	return out
}

func metaOnly(obj any) (*metav1.PartialObjectMetadata, error) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		return m, nil
	}
	a, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("not an object")
	}
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: a.GetName(), Namespace: a.GetNamespace(), ResourceVersion: a.GetResourceVersion(), UID: a.GetUID()}}, nil
}

// predictionChanges says what differs between two predictions in what the
// watch reports: the victims (and their order) and the certainty, of the
// whole and of each pod's fate. Nil when nothing of that changed.
func predictionChanges(was, now *prediction.Prediction) []string {
	var out []string
	if was == nil {
		return []string{"first prediction"}
	}
	gone, added := diffNames(was.Victims, now.Victims)
	if len(added) > 0 {
		out = append(out, "now deleted: "+strings.Join(added, ", "))
	}
	if len(gone) > 0 {
		out = append(out, "no longer deleted: "+strings.Join(gone, ", "))
	}
	if len(out) == 0 && !slices.Equal(was.Victims, now.Victims) {
		out = append(out, "deletion order changed: "+strings.Join(now.Victims, ", "))
	}
	if was.Certain != now.Certain {
		out = append(out, fmt.Sprintf("certain: %v -> %v", was.Certain, now.Certain))
	}
	// A pod whose fate stayed but whose certainty moved.
	before := make(map[string]int, len(was.Pods))
	for i := range was.Pods {
		before[was.Pods[i].Name] = i
	}
	var moved []string
	for _, pod := range now.Pods {
		if i, ok := before[pod.Name]; ok && was.Pods[i].Fate == pod.Fate && was.Pods[i].Certain != pod.Certain {
			moved = append(moved, pod.Name+" "+certainWord(pod.Certain))
		}
	}
	if len(moved) > 0 {
		out = append(out, "certainty changed: "+strings.Join(moved, ", "))
	}
	return out
}

func certainWord(c bool) string {
	if c {
		return "now certain"
	}
	return "now left to chance"
}

func diffNames(a, b []string) (onlyA, onlyB []string) {
	inA, inB := make(map[string]bool, len(a)), make(map[string]bool, len(b))
	for _, x := range a {
		inA[x] = true
	}
	for _, x := range b {
		inB[x] = true
		if !inA[x] {
			onlyB = append(onlyB, x)
		}
	}
	for _, x := range a {
		if !inB[x] {
			onlyA = append(onlyA, x)
		}
	}
	return onlyA, onlyB
}

// selectorNamed is the selector of the last object of list named name
// (nil when none is).
func selectorNamed[T metav1.Object](list []T, name string, selector func(T) *metav1.LabelSelector) *metav1.LabelSelector {
	var ls *metav1.LabelSelector
	for _, x := range list {
		if x.GetName() == name {
			ls = selector(x)
		}
	}
	return ls
}
