package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
)

const (
	kindDeployment = "Deployment"
	kindRS         = "ReplicaSet"
	kindRC         = "ReplicationController"
	kindSTS        = "StatefulSet"

	workloadName = "web"
)

// scenario describes one scale-in against the real controllers.
type scenario struct {
	name     string
	kind     string
	replicas int32 // initial spec.replicas
	target   int32 // spec.replicas after the scale-in
	// states are applied to the initial pods in index order (pods sorted by
	// name, StatefulSet pods by ordinal). Missing entries mean "ready on
	// node-a for 1h".
	states []podState
	// extraStates are applied, in order, to pods created later (rollout,
	// replacement of a terminating pod). Missing entries leave the new pod
	// unbound and Pending.
	extraStates []podState
	sidecar     bool

	// Deployment
	maxSurge, maxUnavailable *intstr.IntOrString
	rollout                  bool // change the pod template once the initial pods have their states
	// paused pauses the Deployment (after the rollout started): the scale
	// then only splits the replicas, the rollout does not continue.
	paused bool
	// growFrom creates the workload with this many replicas first, waits
	// growDelay, then grows it to replicas: pods get different creation times.
	growFrom  int32
	growDelay time.Duration

	// StatefulSet
	parallel     bool
	startOrdinal *int32

	// orphan is a pod created (with this state) before an RS/RC, matching
	// its selector, so that the controller adopts it.
	orphan *podState
	// terminate lists pod indexes deleted (gracefully: they stay
	// Terminating, being bound) before the prediction.
	terminate []int

	// expect is a hand-written expectation checked against the real
	// controllers, independent of the plugin.
	expect func(r *scenarioRun) error
	// quiet is how long nothing must change before the controllers are
	// considered done after the scale. Default per kind.
	quiet time.Duration
	// stableMargin overrides E2E_STABLE_MARGIN for this scenario.
	stableMargin time.Duration
}

// scenarioRun is the state of one scenario.
type scenarioRun struct {
	sc     *scenario
	seq    int
	ns     string
	notes  []string
	states map[string]podState // pod name -> state applied
	// prepared pods, in state-index order
	initial  []string
	orphan   string
	prepErr  error
	prepTime time.Duration

	pred       *prediction
	predRun    *pluginRun
	predReason string // why there is no prediction

	before     []*corev1.Pod // snapshot just before the scale
	beforeByN  map[string]*corev1.Pod
	scaleTime  time.Time
	deleted    []string // snapshot pods that got a deletionTimestamp or vanished, in order
	forced     []string // pods force-deleted by the runner (StatefulSet OrderedReady)
	created    []string // pods created after the scale
	observeDur time.Duration
	oracle     *oracleResult

	// Deployments: what happened to the ReplicaSets, for the step checks.
	rsBefore   []appsv1.ReplicaSet // listed just before the scale
	rsEvents   []rsMark            // every ReplicaSet watch event after it
	deletedAt  map[string]podMark  // deleted pod -> owner and resourceVersion
	createdAt  []podMark           // pods created after the scale
	stepReport *stepReport         // filled by checkRollout
}

// podMark is a pod deletion or creation seen by the watch: the owning
// controller and the resourceVersion (the etcd revision) of the event.
type podMark struct {
	name  string
	owner string
	rv    uint64
}

// rsMark is one ReplicaSet watch event.
type rsMark struct {
	name     string
	uid      types.UID
	rv       uint64
	gen      int64
	replicas int32
	obsGen   int64
	revision string
	desired  string // the deployment.kubernetes.io/desired-replicas annotation
}

var nsSeq atomic.Int64

func slug(s string) string {
	s = strings.ToLower(regexp.MustCompile(`[^a-zA-Z0-9]+`).ReplaceAllString(s, "-"))
	s = strings.Trim(s, "-")
	if len(s) > 40 {
		s = strings.Trim(s[:40], "-")
	}
	return s
}

func newRun(sc *scenario) *scenarioRun {
	seq := int(nsSeq.Add(1))
	return &scenarioRun{sc: sc, seq: seq, ns: fmt.Sprintf("e2e-%03d-%s", seq, slug(sc.name)), states: map[string]podState{}}
}

func (r *scenarioRun) notef(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

func (r *scenarioRun) stateful() bool { return r.sc.kind == kindSTS }
func (r *scenarioRun) orderedReady() bool {
	return r.sc.kind == kindSTS && !r.sc.parallel
}

func (sc *scenario) selectorLabels() map[string]string { return map[string]string{"app": workloadName} }

// ---------------------------------------------------------------- setup

func (r *scenarioRun) createWorkload(ctx context.Context, replicas int32) error {
	c := env.cp.admin
	lbl := r.sc.selectorLabels()
	meta := metav1.ObjectMeta{Name: workloadName, Namespace: r.ns}
	tmpl := podTemplate(lbl, r.sc.sidecar)
	var err error
	switch r.sc.kind {
	case kindDeployment:
		d := &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
			Replicas: ptrTo(replicas), Selector: &metav1.LabelSelector{MatchLabels: lbl}, Template: tmpl,
		}}
		if r.sc.maxSurge != nil || r.sc.maxUnavailable != nil {
			d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: r.sc.maxSurge, MaxUnavailable: r.sc.maxUnavailable}}
		}
		_, err = c.AppsV1().Deployments(r.ns).Create(ctx, d, metav1.CreateOptions{})
	case kindRS:
		rs := &appsv1.ReplicaSet{ObjectMeta: meta, Spec: appsv1.ReplicaSetSpec{
			Replicas: ptrTo(replicas), Selector: &metav1.LabelSelector{MatchLabels: lbl}, Template: tmpl,
		}}
		_, err = c.AppsV1().ReplicaSets(r.ns).Create(ctx, rs, metav1.CreateOptions{})
	case kindRC:
		rc := &corev1.ReplicationController{ObjectMeta: meta, Spec: corev1.ReplicationControllerSpec{
			Replicas: ptrTo(replicas), Selector: lbl, Template: &tmpl,
		}}
		_, err = c.CoreV1().ReplicationControllers(r.ns).Create(ctx, rc, metav1.CreateOptions{})
	case kindSTS:
		s := &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{
			Replicas: ptrTo(replicas), Selector: &metav1.LabelSelector{MatchLabels: lbl}, Template: tmpl,
			ServiceName: workloadName, PodManagementPolicy: appsv1.OrderedReadyPodManagement,
		}}
		if r.sc.parallel {
			s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
		}
		if r.sc.startOrdinal != nil {
			s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: *r.sc.startOrdinal}
		}
		_, err = c.AppsV1().StatefulSets(r.ns).Create(ctx, s, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("unknown kind %q", r.sc.kind)
	}
	return err
}

// setReplicas scales the workload as admin by patching spec.replicas.
func (r *scenarioRun) setReplicas(ctx context.Context, n int32) error {
	c := env.cp.admin
	patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, n))
	var err error
	switch r.sc.kind {
	case kindDeployment:
		_, err = c.AppsV1().Deployments(r.ns).Patch(ctx, workloadName, types.MergePatchType, patch, metav1.PatchOptions{})
	case kindRS:
		_, err = c.AppsV1().ReplicaSets(r.ns).Patch(ctx, workloadName, types.MergePatchType, patch, metav1.PatchOptions{})
	case kindRC:
		_, err = c.CoreV1().ReplicationControllers(r.ns).Patch(ctx, workloadName, types.MergePatchType, patch, metav1.PatchOptions{})
	case kindSTS:
		_, err = c.AppsV1().StatefulSets(r.ns).Patch(ctx, workloadName, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	return err
}

func (r *scenarioRun) listPods(ctx context.Context) ([]*corev1.Pod, string, error) {
	list, err := env.cp.admin.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, "", err
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		pods = append(pods, &list.Items[i])
	}
	return pods, list.ResourceVersion, nil
}

func unapplied(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if _, ok := p.Annotations[appliedAnnotation]; !ok && !isTerminating(p) {
			out = append(out, p)
		}
	}
	return out
}

// prepare builds the scenario up to the moment before the prediction.
func (r *scenarioRun) prepare(ctx context.Context) (err error) {
	start := time.Now()
	defer func() {
		r.prepTime = time.Since(start)
		if err != nil {
			r.prepErr = err
		}
	}()
	c := env.cp.admin
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if r.sc.orphan != nil {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: r.ns, Labels: r.sc.selectorLabels()},
			Spec: podTemplate(nil, r.sc.sidecar).Spec}
		created, err := c.CoreV1().Pods(r.ns).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if err := applyPodState(ctx, c, created, *r.sc.orphan, time.Now()); err != nil {
			return err
		}
		r.orphan = created.Name
		r.states[created.Name] = *r.sc.orphan
	}
	initial := r.sc.replicas
	if r.sc.growFrom > 0 {
		initial = r.sc.growFrom
	}
	if err := r.createWorkload(ctx, initial); err != nil {
		return fmt.Errorf("create %s: %w", r.sc.kind, err)
	}
	if r.sc.growFrom > 0 {
		if err := r.waitPodCount(ctx, int(initial), r.orderedReady()); err != nil {
			return err
		}
		time.Sleep(r.sc.growDelay)
		if err := r.setReplicas(ctx, r.sc.replicas); err != nil {
			return err
		}
	}
	if err := r.waitPodCount(ctx, int(r.sc.replicas), r.orderedReady()); err != nil {
		return err
	}

	// Apply the states of the initial pods, in index order.
	pods, _, err := r.listPods(ctx)
	if err != nil {
		return err
	}
	var owned []*corev1.Pod
	for _, p := range pods {
		if p.Name != r.orphan {
			owned = append(owned, p)
		}
	}
	sortPodsForStates(owned, r.stateful())
	now := time.Now()
	for i, p := range owned {
		st := running("node-a", time.Hour)
		if i < len(r.sc.states) {
			st = r.sc.states[i]
		}
		if err := applyPodState(ctx, c, p, st, now); err != nil {
			return err
		}
		r.states[p.Name] = st
		r.initial = append(r.initial, p.Name)
	}
	if err := r.settle(ctx, 800*time.Millisecond, 60*time.Second, false); err != nil {
		return fmt.Errorf("initial settle: %w", err)
	}

	extra := 0
	applyNew := func() error {
		// Pods created since (rollout, replacements) get the extra states.
		for round := 0; round < 6; round++ {
			if err := r.settle(ctx, 800*time.Millisecond, 60*time.Second, false); err != nil {
				return err
			}
			pods, _, err := r.listPods(ctx)
			if err != nil {
				return err
			}
			todo := unapplied(pods)
			if len(todo) == 0 {
				return nil
			}
			sortPodsForStates(todo, r.stateful())
			now := time.Now()
			for _, p := range todo {
				st := podState{Phase: corev1.PodPending}
				if extra < len(r.sc.extraStates) {
					st = r.sc.extraStates[extra]
				}
				extra++
				if err := applyPodState(ctx, c, p, st, now); err != nil {
					return err
				}
				r.states[p.Name] = st
				r.notef("later pod %s got state: %s", p.Name, st)
			}
		}
		return nil
	}

	if r.sc.rollout {
		patch := []byte(`{"spec":{"template":{"metadata":{"annotations":{"e2e.scale-preview.io/revision":"2"}}}}}`)
		if _, err := c.AppsV1().Deployments(r.ns).Patch(ctx, workloadName, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("start rollout: %w", err)
		}
		r.notef("changed the pod template: rollout started")
		if err := applyNew(); err != nil {
			return err
		}
	}
	if r.sc.paused {
		if _, err := c.AppsV1().Deployments(r.ns).Patch(ctx, workloadName, types.MergePatchType, []byte(`{"spec":{"paused":true}}`), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("pause: %w", err)
		}
		r.notef("paused the Deployment")
	}
	for _, i := range r.sc.terminate {
		name := r.initial[i]
		if err := c.CoreV1().Pods(r.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("delete %s: %w", name, err)
		}
		r.notef("deleted pod %s before the scale (bound: stays Terminating)", name)
	}
	if len(r.sc.terminate) > 0 {
		if err := applyNew(); err != nil {
			return err
		}
	}
	return r.settle(ctx, time.Second, 60*time.Second, false)
}

// waitPodCount waits until n pods exist. For OrderedReady StatefulSets the
// controller creates one pod at a time and waits for it to be Running and
// Ready, so each new pod is made ready at once (bound to the node its final
// state names).
func (r *scenarioRun) waitPodCount(ctx context.Context, n int, driveReady bool) error {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	err := pollUntil(ctx, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		pods, _, err := r.listPods(ctx)
		if err != nil {
			return false, nil
		}
		count := 0
		for _, p := range pods {
			if isTerminating(p) {
				continue
			}
			count++
			if driveReady && !isReady(p) {
				ord := statefulOrdinal(p.Name) - int(deref0(r.sc.startOrdinal))
				node := "node-a"
				if ord >= 0 && ord < len(r.sc.states) {
					node = r.sc.states[ord].Node
				}
				if err := applyPodState(ctx, env.cp.admin, p, running(node, time.Hour), time.Now()); err != nil && !apierrors.IsConflict(err) {
					return false, err
				}
			}
		}
		return count >= n, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d pods in %s: %w", n, r.ns, err)
	}
	return nil
}

func deref0(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

// ---------------------------------------------------------------- settle

// settle waits until the workload's controllers have caught up with every
// change (observedGeneration, pod counts per ReplicaSet) and nothing in the
// namespace changed for quiet. With afterScale, StatefulSets only need the
// quiet period (an OrderedReady set may legitimately stall).
func (r *scenarioRun) settle(ctx context.Context, quiet, timeout time.Duration, afterScale bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	var since time.Time
	var lastWhy string
	err := pollUntil(ctx, 150*time.Millisecond, func(ctx context.Context) (bool, error) {
		fp, ok, why, err := r.fingerprint(ctx)
		if err != nil {
			lastWhy = err.Error()
			return false, nil
		}
		lastWhy = why
		if fp != last {
			last, since = fp, time.Now()
			return false, nil
		}
		return ok && time.Since(since) >= quiet, nil
	})
	if err != nil {
		return fmt.Errorf("controllers did not settle in %s (%s): %w", timeout, lastWhy, err)
	}
	return nil
}

// fingerprint summarises the namespace; ok says whether the controllers
// have observed the latest spec and the pod counts match it.
func (r *scenarioRun) fingerprint(ctx context.Context) (string, bool, string, error) {
	c := env.cp.admin
	pods, _, err := r.listPods(ctx)
	if err != nil {
		return "", false, "", err
	}
	var b strings.Builder
	activeBy := map[types.UID]int{}
	for _, p := range pods {
		fmt.Fprintf(&b, "%s/%s;", p.Name, p.ResourceVersion)
		if isActive(p) {
			activeBy[controllerUID(p)]++
		}
	}
	ok, why := true, ""
	checkRS := func(name string, uid types.UID, gen, observed int64, replicas int32) {
		if observed < gen {
			ok, why = false, fmt.Sprintf("%s observedGeneration %d < %d", name, observed, gen)
		} else if activeBy[uid] != int(replicas) {
			ok, why = false, fmt.Sprintf("%s has %d active pods, wants %d", name, activeBy[uid], replicas)
		}
	}
	switch r.sc.kind {
	case kindDeployment, kindRS:
		if r.sc.kind == kindDeployment {
			d, err := c.AppsV1().Deployments(r.ns).Get(ctx, workloadName, metav1.GetOptions{})
			if err != nil {
				return "", false, "", err
			}
			fmt.Fprintf(&b, "D%s;", d.ResourceVersion)
			if d.Status.ObservedGeneration < d.Generation {
				ok, why = false, "deployment not observed"
			}
		}
		rss, err := c.AppsV1().ReplicaSets(r.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", false, "", err
		}
		for _, rs := range rss.Items {
			fmt.Fprintf(&b, "RS%s/%s;", rs.Name, rs.ResourceVersion)
			checkRS(rs.Name, rs.UID, rs.Generation, rs.Status.ObservedGeneration, *rs.Spec.Replicas)
		}
	case kindRC:
		rc, err := c.CoreV1().ReplicationControllers(r.ns).Get(ctx, workloadName, metav1.GetOptions{})
		if err != nil {
			return "", false, "", err
		}
		fmt.Fprintf(&b, "RC%s;", rc.ResourceVersion)
		checkRS(rc.Name, rc.UID, rc.Generation, rc.Status.ObservedGeneration, *rc.Spec.Replicas)
	case kindSTS:
		s, err := c.AppsV1().StatefulSets(r.ns).Get(ctx, workloadName, metav1.GetOptions{})
		if err != nil {
			return "", false, "", err
		}
		fmt.Fprintf(&b, "STS%s;", s.ResourceVersion)
		if s.Status.ObservedGeneration < s.Generation {
			ok, why = false, "statefulset not observed"
		}
	}
	return b.String(), ok, why, nil
}

// ---------------------------------------------------------------- predict

// stableMargin: a prediction whose stableUntil is closer than this is
// redone after stableUntil has passed (log2 age buckets move with time).
func stableMargin() time.Duration { return envDuration("E2E_STABLE_MARGIN", 30*time.Second) }

func (r *scenarioRun) predict(ctx context.Context) error {
	if env.pluginPath == "" {
		r.predReason = env.pluginMissing
		return nil
	}
	for attempt := 0; ; attempt++ {
		long := (r.seq+attempt)%2 == 0
		pred, run, err := predict(ctx, r.sc.kind, r.ns, workloadName, r.sc.target, long)
		r.predRun = run
		if err != nil {
			if run != nil && run.exitCode == 0 && strings.TrimSpace(run.stdout) == "" && !requirePlugin() {
				r.predReason = "plugin printed nothing (not implemented yet?)"
				return nil
			}
			return err
		}
		r.pred = pred
		su, ok, _ := pred.stableUntilTime()
		if !ok {
			return nil
		}
		wait := time.Until(su)
		margin := stableMargin()
		if r.sc.stableMargin > 0 {
			margin = r.sc.stableMargin
		}
		if wait > margin || wait < -time.Hour || attempt >= 8 {
			return nil
		}
		if wait < 0 {
			wait = 0
		}
		r.notef("stableUntil %s is %s away: waiting past it and predicting again", su.Format(time.RFC3339), wait.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait + 1100*time.Millisecond):
		}
	}
}

// ---------------------------------------------------------------- scale & observe

type observer struct {
	mu        sync.Mutex
	r         *scenarioRun
	seen      map[string]bool
	deleted   []string
	created   []string
	forced    []string
	errs      []error
	deletedAt map[string]podMark
	createdAt []podMark
	rsEvents  []rsMark
}

func parseRV(s string) uint64 {
	n, _ := strconv.ParseUint(s, 10, 64)
	return n
}

func ownerName(p metav1.Object) string {
	if ref := metav1.GetControllerOf(p); ref != nil {
		return ref.Name
	}
	return ""
}

// handleRS records a ReplicaSet event (Deployments only).
func (o *observer) handleRS(ev watch.Event) {
	rs, ok := ev.Object.(*appsv1.ReplicaSet)
	if !ok || (ev.Type != watch.Added && ev.Type != watch.Modified) {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.rsEvents = append(o.rsEvents, rsMark{name: rs.Name, uid: rs.UID, rv: parseRV(rs.ResourceVersion), gen: rs.Generation,
		replicas: deref0(rs.Spec.Replicas), obsGen: rs.Status.ObservedGeneration, revision: rs.Annotations[revisionAnnotation],
		desired: rs.Annotations[desiredReplicasAnnotaton]})
}

func (o *observer) handle(ctx context.Context, ev watch.Event) {
	pod, ok := ev.Object.(*corev1.Pod)
	if !ok {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	before, known := o.r.beforeByN[pod.Name]
	if known && before.UID != pod.UID {
		known = false // a StatefulSet pod recreated under the same name
	}
	if !known {
		if ev.Type == watch.Added && !slices.Contains(o.created, pod.Name) {
			o.created = append(o.created, pod.Name)
			o.createdAt = append(o.createdAt, podMark{name: pod.Name, owner: ownerName(pod), rv: parseRV(pod.ResourceVersion)})
		}
		return
	}
	if isTerminating(before) {
		return
	}
	gone := ev.Type == watch.Deleted || isTerminating(pod)
	if !gone || o.seen[pod.Name] {
		return
	}
	o.seen[pod.Name] = true
	o.deleted = append(o.deleted, pod.Name)
	o.deletedAt[pod.Name] = podMark{name: pod.Name, owner: ownerName(before), rv: parseRV(pod.ResourceVersion)}
	// An OrderedReady StatefulSet waits for the condemned pod to disappear;
	// without a kubelet, bound pods never do. Play kubelet: remove it.
	if o.r.orderedReady() && ev.Type != watch.Deleted && pod.Spec.NodeName != "" {
		if err := forceDelete(ctx, env.cp.admin, pod.Namespace, pod.Name); err != nil && !apierrors.IsNotFound(err) {
			o.errs = append(o.errs, fmt.Errorf("force delete %s: %w", pod.Name, err))
		} else {
			o.forced = append(o.forced, pod.Name)
		}
	}
}

// watchFrom runs a watch from rv until ctx ends, resuming from the last
// resourceVersion when the server closes it early. The returned channel is
// closed when it has stopped.
func watchFrom(ctx context.Context, rv string, open func(context.Context, string) (watch.Interface, error),
	handle func(watch.Event), fail func(error)) (<-chan struct{}, error) {
	w, err := open(ctx, rv)
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					continue
				}
				if m, ok := ev.Object.(metav1.Object); ok {
					rv = m.GetResourceVersion()
				}
				handle(ev)
			}
			if ctx.Err() != nil {
				return
			}
			var err error
			if w, err = open(ctx, rv); err != nil {
				fail(fmt.Errorf("re-watch: %w", err))
				return
			}
		}
	}()
	return done, nil
}

func (r *scenarioRun) scaleAndObserve(ctx context.Context) error {
	c := env.cp.admin
	o := &observer{r: r, seen: map[string]bool{}, deletedAt: map[string]podMark{}}
	failf := func(err error) {
		o.mu.Lock()
		o.errs = append(o.errs, err)
		o.mu.Unlock()
	}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	// Deployments: the ReplicaSets' sizes through the scale, from a list
	// taken before the pods' (both resourceVersions are etcd revisions).
	rsDone := make(<-chan struct{})
	if r.sc.kind == kindDeployment {
		rss, err := c.AppsV1().ReplicaSets(r.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		r.rsBefore = rss.Items
		rsDone, err = watchFrom(wctx, rss.ResourceVersion, func(ctx context.Context, rv string) (watch.Interface, error) {
			return c.AppsV1().ReplicaSets(r.ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		}, o.handleRS, failf)
		if err != nil {
			return fmt.Errorf("watch replicasets: %w", err)
		}
	} else {
		closed := make(chan struct{})
		close(closed)
		rsDone = closed
	}
	pods, rv, err := r.listPods(ctx)
	if err != nil {
		return err
	}
	r.before = pods
	r.beforeByN = map[string]*corev1.Pod{}
	for _, p := range pods {
		r.beforeByN[p.Name] = p
	}
	watchDone, err := watchFrom(wctx, rv, func(ctx context.Context, rv string) (watch.Interface, error) {
		return c.CoreV1().Pods(r.ns).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
	}, func(ev watch.Event) { o.handle(wctx, ev) }, failf)
	if err != nil {
		return fmt.Errorf("watch pods: %w", err)
	}

	r.oracle = computeOracle(r)
	r.scaleTime = time.Now()
	if err := r.setReplicas(ctx, r.sc.target); err != nil {
		stopWatch()
		<-watchDone
		<-rsDone
		return fmt.Errorf("scale to %d: %w", r.sc.target, err)
	}
	quiet := r.sc.quiet
	if quiet == 0 {
		quiet = 2 * time.Second
		if r.sc.kind == kindDeployment || r.sc.kind == kindSTS {
			quiet = 3 * time.Second
		}
	}
	settleErr := r.settle(ctx, quiet, 120*time.Second, true)
	r.observeDur = time.Since(r.scaleTime)
	// Let the watch deliver what the last list already showed.
	time.Sleep(300 * time.Millisecond)
	stopWatch()
	<-watchDone
	<-rsDone
	o.mu.Lock()
	defer o.mu.Unlock()
	r.deleted, r.created, r.forced = o.deleted, o.created, o.forced
	r.deletedAt, r.createdAt, r.rsEvents = o.deletedAt, o.createdAt, o.rsEvents
	if len(o.errs) > 0 {
		return fmt.Errorf("observer: %v", o.errs)
	}
	return settleErr
}

// ---------------------------------------------------------------- run & compare

// run executes a prepared scenario as a (sub)test.
func (r *scenarioRun) run(t *testing.T) {
	t.Helper()
	if err := env.cp.crashed(); err != nil {
		t.Fatalf("control plane is down: %v", err)
	}
	t.Logf("scenario %q: %s %s/%s %d -> %d (namespace %s)", r.sc.name, r.sc.kind, r.ns, workloadName, r.sc.replicas, r.sc.target, r.ns)
	if r.prepErr != nil {
		r.dumpNamespace(t)
		t.Fatalf("prepare: %v", r.prepErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	// A plugin error is reported at the end: the controllers' behaviour is
	// still observed and checked.
	predErr := r.predict(ctx)
	if predErr != nil {
		r.pred = nil
	}
	err := r.scaleAndObserve(ctx)
	for _, n := range r.notes {
		t.Log("  " + n)
	}
	t.Logf("  prepared in %s; pods before the scale:", r.prepTime.Round(time.Millisecond))
	for _, p := range sortedByName(r.before) {
		t.Logf("    %s", describePod(p))
	}
	if r.pred != nil {
		t.Logf("  plugin (%s): victims=%v stableUntil=%v version=%s", r.predRun.duration.Round(time.Millisecond), r.pred.Victims, deref(r.pred.StableUntil), r.pred.Rules.KubernetesVersion)
	}
	t.Logf("  controllers deleted (in order): %v; force-deleted: %v; created after the scale: %v; settled %s after the scale",
		r.deleted, r.forced, r.created, r.observeDur.Round(time.Millisecond))
	if err != nil {
		r.dumpNamespace(t)
		t.Fatalf("scale/observe: %v", err)
	}

	// Hand-written expectation about the real controllers.
	if r.sc.expect != nil {
		if err := r.sc.expect(r); err != nil {
			t.Errorf("real controllers: %v", err)
		} else {
			t.Logf("  hand-written expectation met")
		}
	}
	// The real comparator, run on the snapshot.
	r.checkOracle(t)

	if predErr != nil {
		env.stats.pluginError(r.sc.name)
		t.Errorf("plugin: %v", predErr)
		r.dumpOnFailure(t)
		return
	}
	if r.pred == nil {
		r.dumpOnFailure(t)
		t.Skipf("plugin comparison skipped: %s (harness checks ran)", r.predReason)
	}
	r.compare(t)
	r.dumpOnFailure(t)
}

func (r *scenarioRun) dumpOnFailure(t *testing.T) {
	if !t.Failed() {
		return
	}
	if r.predRun != nil {
		t.Logf("plugin output:\n%s", r.predRun.stdout)
	}
	t.Logf("controller-manager log lines for %s:\n%s", r.ns, env.cp.grepLog("kube-controller-manager", r.ns, 40))
}

func (r *scenarioRun) dumpNamespace(t *testing.T) {
	pods, _, err := r.listPods(context.Background())
	if err != nil {
		t.Logf("list pods: %v", err)
		return
	}
	for _, p := range sortedByName(pods) {
		t.Logf("    %s", describePod(p))
	}
	t.Logf("controller-manager log lines for %s:\n%s", r.ns, env.cp.grepLog("kube-controller-manager", r.ns, 40))
}

func sortedByName(pods []*corev1.Pod) []*corev1.Pod {
	out := slices.Clone(pods)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// compare checks the plugin's prediction against what the controllers did.
func (r *scenarioRun) compare(t *testing.T) {
	p := r.pred
	// currentReplicas is the workload's spec.replicas before the scale.
	if err := p.validate(r.sc.kind, r.ns, workloadName, r.sc.replicas, r.sc.target); err != nil {
		t.Errorf("plugin JSON breaks the contract: %v", err)
	}
	deleted := map[string]bool{}
	for _, n := range r.deleted {
		deleted[n] = true
	}
	checked, disagree := 0, 0
	var msgs []string
	for _, pp := range p.Pods {
		if !pp.Certain {
			continue
		}
		before := r.beforeByN[pp.Name]
		var bad string
		switch pp.Fate {
		case "delete":
			if !deleted[pp.Name] {
				bad = "predicted delete (certain), but the controllers kept it"
			}
		case "keep", "blocked", "ignored":
			if deleted[pp.Name] {
				bad = fmt.Sprintf("predicted %s (certain), but the controllers deleted it", pp.Fate)
			}
		case "recreate":
			if !deleted[pp.Name] {
				bad = "predicted recreate (certain), but the controllers kept it"
			}
		default:
			// Not a contract fate (validate reports it); anything but
			// "delete" must at least mean "not deleted".
			if deleted[pp.Name] {
				bad = fmt.Sprintf("predicted %q (certain), but the controllers deleted it", pp.Fate)
			}
		case "terminating":
			if before == nil || !isTerminating(before) {
				bad = "predicted terminating, but it was not terminating before the scale"
			}
		}
		if before == nil && pp.Fate != "terminating" {
			bad = "plugin listed a pod that did not exist before the scale"
		}
		checked++
		if bad != "" {
			disagree++
			msgs = append(msgs, fmt.Sprintf("%s: %s (step %q, p=%v)", pp.Name, bad, pp.Step, deref(pp.DeleteProbability)))
		}
	}
	listed := map[string]bool{}
	for _, pp := range p.Pods {
		listed[pp.Name] = true
	}
	for _, n := range r.deleted {
		if !listed[n] {
			msgs = append(msgs, fmt.Sprintf("%s: deleted by the controllers but absent from the plugin's pods", n))
			disagree++
		}
	}
	allCertain := p.allCertain()
	if allCertain {
		got := slices.Clone(r.deleted)
		want := slices.Clone(p.Victims)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			disagree++
			msgs = append(msgs, fmt.Sprintf("all pods certain: victims %v, but the controllers deleted %v", p.Victims, r.deleted))
		} else if r.orderedReady() && !slices.Equal(r.deleted, p.Victims) {
			disagree++
			msgs = append(msgs, fmt.Sprintf("StatefulSet deletion order: predicted %v, observed %v", p.Victims, r.deleted))
		}
	}
	env.stats.add(r.sc.name, checked, disagree)
	if r.sc.kind == kindDeployment {
		r.checkRollout(t)
	}
	if disagree > 0 {
		t.Errorf("plugin disagrees with the real controllers (%d of %d certain pods, all-certain=%v):\n  %s",
			disagree, checked, allCertain, strings.Join(msgs, "\n  "))
		return
	}
	t.Logf("  AGREEMENT: %d/%d certain pods matched (all certain: %v; victims %v; observed %v)",
		checked, checked, allCertain, p.Victims, r.deleted)
}

// ---------------------------------------------------------------- stats

type agreementStats struct {
	mu            sync.Mutex
	scenarios     int
	certainPods   int
	disagreements int
	failed        []string
	pluginErrors  []string

	// Deployments (checkRollout): ReplicaSet sizes, victims' steps, creates.
	deployments int
	steps       stepReport
	stepFailed  []string
}

func (s *agreementStats) addSteps(name string, r *stepReport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deployments++
	t := &s.steps
	t.splitChecked += r.splitChecked
	t.splitBad += r.splitBad
	t.finalChecked += r.finalChecked
	t.finalBad += r.finalBad
	t.stepChecked += r.stepChecked
	t.stepBad += r.stepBad
	t.stepUnverifiable += r.stepUnverifiable
	t.createsChecked += r.createsChecked
	t.createsBad += r.createsBad
	if r.splitBad+r.finalBad+r.stepBad+r.createsBad > 0 {
		s.stepFailed = append(s.stepFailed, name)
	}
}

func (s *agreementStats) pluginError(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pluginErrors = append(s.pluginErrors, name)
}

func (s *agreementStats) add(name string, checked, disagree int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scenarios++
	s.certainPods += checked
	s.disagreements += disagree
	if disagree > 0 {
		s.failed = append(s.failed, name)
	}
}

func (s *agreementStats) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	line := fmt.Sprintf("e2e agreement: %d scenarios, %d certain pods checked, %d disagreements", s.scenarios, s.certainPods, s.disagreements)
	if len(s.failed) > 0 {
		line += " (in: " + strings.Join(s.failed, ", ") + ")"
	}
	if len(s.pluginErrors) > 0 {
		line += fmt.Sprintf("; the plugin FAILED on %d scenarios: %s", len(s.pluginErrors), strings.Join(s.pluginErrors, ", "))
	}
	if s.deployments > 0 {
		t := s.steps
		line += fmt.Sprintf("\ne2e deployment steps: %d Deployments; afterScale %d checked, %d wrong; final %d checked, %d wrong; "+
			"victim steps %d checked, %d wrong, %d unverifiable (merged ReplicaSet syncs, or an open choice); creates %d checked, %d wrong",
			s.deployments, t.splitChecked, t.splitBad, t.finalChecked, t.finalBad, t.stepChecked, t.stepBad, t.stepUnverifiable,
			t.createsChecked, t.createsBad)
		if len(s.stepFailed) > 0 {
			line += " (in: " + strings.Join(s.stepFailed, ", ") + ")"
		}
	}
	return line
}

// ---------------------------------------------------------------- helpers for expectations

// deletedIdx returns the state indexes of the deleted initial pods.
func (r *scenarioRun) deletedIdx() []int {
	var out []int
	for _, n := range r.deleted {
		if i := slices.Index(r.initial, n); i >= 0 {
			out = append(out, i)
		}
	}
	sort.Ints(out)
	return out
}

func expectDeletedIdx(want ...int) func(r *scenarioRun) error {
	return func(r *scenarioRun) error {
		got := r.deletedIdx()
		if !slices.Equal(got, want) || len(r.deleted) != len(want) {
			return fmt.Errorf("deleted pod indexes %v (%v), want %v", got, r.deleted, want)
		}
		return nil
	}
}

func expectDeletedOrder(names ...string) func(r *scenarioRun) error {
	return func(r *scenarioRun) error {
		if !slices.Equal(r.deleted, names) {
			return fmt.Errorf("deletion order %v, want %v", r.deleted, names)
		}
		return nil
	}
}

func expectDeletedSet(names ...string) func(r *scenarioRun) error {
	return func(r *scenarioRun) error {
		got := slices.Clone(r.deleted)
		slices.Sort(got)
		want := slices.Clone(names)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			return fmt.Errorf("deleted %v, want the set %v", r.deleted, want)
		}
		return nil
	}
}

func selectorMatches(sel map[string]string, p *corev1.Pod) bool {
	return labels.SelectorFromSet(sel).Matches(labels.Set(p.Labels))
}

func mustJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
