package e2e

// Watching: the scale-in and the deletions the controllers make.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

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
	var rsDone <-chan struct{}
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
