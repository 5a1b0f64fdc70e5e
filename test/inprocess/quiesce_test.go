package inprocess

import (
	"reflect"
	"sync"
	"time"
	"unsafe"

	"k8s.io/apimachinery/pkg/api/meta"
	appsinformers "k8s.io/client-go/informers/apps/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// quiescence tells when the controllers of one cluster can do nothing more
// by themselves: every write has reached each of their event handlers, no
// work is queued or being done, and no retry is waiting. A settle on wall
// time alone (no write for 400 ms) ended a starved run between a sync whose
// scale-down conflicted (the deployment controller drops that error and
// writes its status; rolling.go reconcileOldReplicaSets) and the sync that
// repeats it; this condition does not depend on how fast the runs go.
type quiescence struct {
	mu       sync.Mutex
	activity int64 // bumped by every enqueue, hand-out and finish of work
	queues   []*watchedQueue
	views    []*handlerView
}

// watchedQueue is a controller's work queue as the controller sees it,
// counting what is owed to it. Delays are served here (the rate limiter is
// the controllers' default one) so that every key reaches the real queue
// through Add.
type watchedQueue struct {
	workqueue.TypedRateLimitingInterface[string]
	q          *quiescence
	limiter    workqueue.TypedRateLimiter[string]
	owed       map[string]bool // added, not yet handed to a worker
	processing map[string]int
	retries    int // rate-limited retries not yet due
	timers     map[*time.Timer]bool
}

// watchQueue replaces ctrl's unexported field "queue" (the deployment and
// ReplicaSet controllers of 1.37 both have one) by a watched wrapper. It
// must run before the informers start.
func (q *quiescence) watchQueue(ctrl any) {
	f := reflect.ValueOf(ctrl).Elem().FieldByName("queue")
	f = reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem()
	w := &watchedQueue{
		TypedRateLimitingInterface: f.Interface().(workqueue.TypedRateLimitingInterface[string]),
		q:                          q,
		limiter:                    workqueue.DefaultTypedControllerRateLimiter[string](),
		owed:                       map[string]bool{},
		processing:                 map[string]int{},
		timers:                     map[*time.Timer]bool{},
	}
	f.Set(reflect.ValueOf(workqueue.TypedRateLimitingInterface[string](w)))
	q.queues = append(q.queues, w)
}

func (w *watchedQueue) Add(key string) {
	w.q.mu.Lock()
	defer w.q.mu.Unlock()
	w.addLocked(key)
}

func (w *watchedQueue) addLocked(key string) {
	w.owed[key] = true
	w.q.activity++
	w.TypedRateLimitingInterface.Add(key)
}

func (w *watchedQueue) Get() (string, bool) {
	key, shutdown := w.TypedRateLimitingInterface.Get()
	w.q.mu.Lock()
	defer w.q.mu.Unlock()
	if !shutdown {
		w.processing[key]++
		delete(w.owed, key)
		w.q.activity++
	}
	return key, shutdown
}

func (w *watchedQueue) Done(key string) {
	w.q.mu.Lock()
	defer w.q.mu.Unlock()
	w.TypedRateLimitingInterface.Done(key) // may hand the key back to the queue
	if w.processing[key]--; w.processing[key] <= 0 {
		delete(w.processing, key)
	}
	w.q.activity++
}

// AddRateLimited is a retry after an error: awaited.
func (w *watchedQueue) AddRateLimited(key string) {
	w.later(key, w.limiter.When(key), true)
}

// AddAfter is a check planned on the clock (a progress deadline, a pod's
// minReadySeconds): not awaited, the runs judge the reaction to the scale.
func (w *watchedQueue) AddAfter(key string, d time.Duration) {
	w.later(key, d, false)
}

func (w *watchedQueue) later(key string, d time.Duration, awaited bool) {
	if d <= 0 {
		w.Add(key)
		return
	}
	w.q.mu.Lock()
	defer w.q.mu.Unlock()
	if awaited {
		w.retries++
	}
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		w.q.mu.Lock()
		defer w.q.mu.Unlock()
		if !w.timers[t] {
			return // stopped at shutdown
		}
		delete(w.timers, t)
		if awaited {
			w.retries--
		}
		w.addLocked(key)
	})
	w.timers[t] = true
}

func (w *watchedQueue) Forget(key string) {
	w.limiter.Forget(key)
	w.TypedRateLimitingInterface.Forget(key)
}

func (w *watchedQueue) NumRequeues(key string) int { return w.limiter.NumRequeues(key) }

func (w *watchedQueue) ShutDown() {
	w.q.mu.Lock()
	for t := range w.timers {
		t.Stop()
	}
	w.timers = map[*time.Timer]bool{}
	w.retries = 0
	w.q.mu.Unlock()
	w.TypedRateLimitingInterface.ShutDown()
}

// idle: nothing owed, handed out or due to retry (q.mu held).
func (w *watchedQueue) idle() bool {
	return len(w.owed) == 0 && len(w.processing) == 0 && w.retries == 0 && w.TypedRateLimitingInterface.Len() == 0
}

// handlerView is what one of a controller's event handlers has been told:
// each object's resourceVersion, recorded after the handler returned (so
// after any enqueue it made).
type handlerView struct {
	resource string
	seen     map[string]string
}

type viewedHandler struct {
	cache.ResourceEventHandler
	q *quiescence
	v *handlerView
}

func (h viewedHandler) OnAdd(obj any, initial bool) {
	h.ResourceEventHandler.OnAdd(obj, initial)
	h.record(obj, false)
}

func (h viewedHandler) OnUpdate(old, cur any) {
	h.ResourceEventHandler.OnUpdate(old, cur)
	h.record(cur, false)
}

func (h viewedHandler) OnDelete(obj any) {
	h.ResourceEventHandler.OnDelete(obj)
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	h.record(obj, true)
}

func (h viewedHandler) record(obj any, deleted bool) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return
	}
	key := m.GetNamespace() + "/" + m.GetName()
	h.q.mu.Lock()
	defer h.q.mu.Unlock()
	if deleted {
		delete(h.v.seen, key)
	} else {
		h.v.seen[key] = m.GetResourceVersion()
	}
}

// viewedInformer hands the controllers' handlers to the informer wrapped.
type viewedInformer struct {
	cache.SharedIndexInformer
	q        *quiescence
	resource string
}

func (i viewedInformer) wrap(h cache.ResourceEventHandler) cache.ResourceEventHandler {
	v := &handlerView{resource: i.resource, seen: map[string]string{}}
	i.q.mu.Lock()
	i.q.views = append(i.q.views, v)
	i.q.mu.Unlock()
	return viewedHandler{ResourceEventHandler: h, q: i.q, v: v}
}

func (i viewedInformer) AddEventHandler(h cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandler(i.wrap(h))
}

func (i viewedInformer) AddEventHandlerWithResyncPeriod(h cache.ResourceEventHandler, p time.Duration) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandlerWithResyncPeriod(i.wrap(h), p)
}

func (i viewedInformer) AddEventHandlerWithOptions(h cache.ResourceEventHandler, o cache.HandlerOptions) (cache.ResourceEventHandlerRegistration, error) {
	return i.SharedIndexInformer.AddEventHandlerWithOptions(i.wrap(h), o)
}

type viewedDeployments struct {
	appsinformers.DeploymentInformer
	q *quiescence
}

func (d viewedDeployments) Informer() cache.SharedIndexInformer {
	return viewedInformer{d.DeploymentInformer.Informer(), d.q, "deployments"}
}

type viewedReplicaSets struct {
	appsinformers.ReplicaSetInformer
	q *quiescence
}

func (r viewedReplicaSets) Informer() cache.SharedIndexInformer {
	return viewedInformer{r.ReplicaSetInformer.Informer(), r.q, "replicasets"}
}

type viewedPods struct {
	coreinformers.PodInformer
	q *quiescence
}

func (p viewedPods) Informer() cache.SharedIndexInformer {
	return viewedInformer{p.PodInformer.Informer(), p.q, "pods"}
}

// idleSince: every queue idle, and the activity count is still at (q.mu
// held).
func (q *quiescence) idleSince(activity int64) bool {
	if q.activity != activity {
		return false
	}
	for _, w := range q.queues {
		if !w.idle() {
			return false
		}
	}
	return true
}

// quiet reports whether the controllers can do nothing more: idle queues
// at the start and the end of the check with nothing handed out between
// (so no controller wrote meanwhile), and every handler told of the API's
// current state, which list returns (resource -> key -> resourceVersion).
func (q *quiescence) quiet(list func() (map[string]map[string]string, error)) bool {
	q.mu.Lock()
	start := q.activity
	idle := q.idleSince(start)
	q.mu.Unlock()
	if !idle {
		return false
	}
	state, err := list()
	if err != nil {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.idleSince(start) {
		return false
	}
	for _, v := range q.views {
		if !reflect.DeepEqual(v.seen, state[v.resource]) {
			return false
		}
	}
	return true
}
