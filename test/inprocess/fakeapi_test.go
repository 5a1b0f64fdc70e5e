package inprocess

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
)

// strictAPI is a fake API server stricter than client-go's tracker: every
// write gets a resourceVersion (the same number the tracker uses for its
// list and watch bookkeeping), an update with a stale resourceVersion
// conflicts, the main resource never changes status and the status
// subresource changes nothing else, and deleting a pod bound to a node
// only marks it terminating (no kubelet confirms). Writes are delayed by a
// random latency to vary the controllers' timing: before they enter the
// fake clientset (concurrentClient), or, with INPROCESS_SERIAL_API=1,
// inside its lock, so that calls run one at a time.
type strictAPI struct {
	clienttesting.ObjectTracker
	mu      sync.Mutex
	rv      map[schema.GroupVersionResource]int64
	rng     *rand.Rand
	rngMu   sync.Mutex
	latency time.Duration // under rngMu
	serial  bool          // the latency is slept inside the fake clientset's lock
	writes  atomic.Int64  // writes that were not events
	trace   []string      // INPROCESS_DEBUG: this API's writes, printed per run (under mu)
	// conflictIf, if set, makes an update conflict when it returns true
	// for the resource, subresource and writing code (writer); under mu.
	conflictIf func(resource, subresource, by string) bool
}

var podsGVR = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

func newStrictAPI(seed uint64, latency time.Duration) (*fake.Clientset, *strictAPI) {
	api := &strictAPI{
		ObjectTracker: clienttesting.NewObjectTracker(scheme.Scheme, scheme.Codecs.UniversalDecoder()),
		rv:            map[schema.GroupVersionResource]int64{},
		rng:           rand.New(rand.NewPCG(seed, 7)),
		latency:       latency,
		serial:        os.Getenv("INPROCESS_SERIAL_API") != "",
	}
	cs := &fake.Clientset{}
	cs.AddReactor("*", "*", clienttesting.ObjectReaction(api))
	cs.AddWatchReactor("*", func(action clienttesting.Action) (bool, watch.Interface, error) {
		var opts metav1.ListOptions
		if w, ok := action.(clienttesting.WatchActionImpl); ok {
			opts = w.ListOptions
		}
		w, err := api.Watch(action.GetResource(), action.GetNamespace(), opts)
		return err == nil, w, err
	})
	cs.PrependReactor("update", "*", api.update)
	cs.PrependReactor("delete", "pods", api.deletePod)
	return cs, api
}

// delay sleeps a random API latency inside the fake clientset's lock, in
// the serial mode only.
func (a *strictAPI) delay() {
	if a.serial {
		a.sleep()
	}
}

// delayCall sleeps a random API latency before a call enters the fake
// clientset (concurrentClient), unless the mode is serial.
func (a *strictAPI) delayCall() {
	if !a.serial {
		a.sleep()
	}
}

func (a *strictAPI) sleep() {
	a.rngMu.Lock()
	var d time.Duration
	if a.latency > 0 {
		d = time.Duration(a.rng.Int64N(int64(a.latency)))
	}
	a.rngMu.Unlock()
	time.Sleep(d)
}

// setLatency sets the bound of the random latency from now on.
func (a *strictAPI) setLatency(d time.Duration) {
	a.rngMu.Lock()
	defer a.rngMu.Unlock()
	a.latency = d
}

// debugWrites (INPROCESS_DEBUG=1) traces every write of a run, with the
// controller code that made it; ReplicaSet and Deployment writes, conflicts
// and pod deletions with a timestamp, size and status. A run prints its
// trace when it contradicts a certain fate (INPROCESS_DEBUG=all: every run).
var debugWrites = os.Getenv("INPROCESS_DEBUG") != ""

// tracef adds a line to the run's trace (a.mu held).
func (a *strictAPI) tracef(format string, args ...any) {
	a.trace = append(a.trace, time.Now().Format("15:04:05.000000")+" "+fmt.Sprintf(format, args...))
}

// takeTrace returns the trace so far and starts a new one.
func (a *strictAPI) takeTrace() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	t := a.trace
	a.trace = nil
	return t
}

// writer names the controller functions (innermost three) that made the
// current call.
func writer() string {
	pcs := make([]uintptr, 64)
	frames := goruntime.CallersFrames(pcs[:goruntime.Callers(3, pcs)])
	var names []string
	for len(names) < 3 {
		f, more := frames.Next()
		if strings.Contains(f.Function, "k8s.io/kubernetes/pkg/controller") || strings.Contains(f.Function, "test/inprocess.") &&
			!strings.Contains(f.Function, "strictAPI") && !strings.Contains(f.Function, "concurrent") {
			names = append(names, fmt.Sprintf("%s:%d", f.Function[strings.LastIndex(f.Function, ".")+1:], f.Line))
		}
		if !more {
			break
		}
	}
	return strings.Join(names, "<")
}

func (a *strictAPI) touched(gvr schema.GroupVersionResource) {
	if debugWrites && gvr.Resource != "events" && gvr.Resource != "replicasets" && gvr.Resource != "deployments" {
		a.tracef("write %s by %s", gvr.Resource, writer())
	}
	if gvr.Resource != "events" {
		a.writes.Add(1)
	}
}

// nextRV is the version the tracker gives the next write of gvr.
func (a *strictAPI) nextRV(gvr schema.GroupVersionResource) string {
	v, ok := a.rv[gvr]
	if !ok {
		v = 1
	}
	v++
	a.rv[gvr] = v
	return strconv.FormatInt(v, 10)
}

// Create names objects with generateName, gives them a UID, a creation
// time, generation 1 and a resourceVersion.
func (a *strictAPI) Create(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.CreateOptions) error {
	a.delay()
	a.mu.Lock()
	defer a.mu.Unlock()
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	if m.GetName() == "" && m.GetGenerateName() != "" {
		m.SetName(m.GetGenerateName() + string(uuid.NewUUID())[:5])
	}
	if m.GetUID() == "" {
		m.SetUID(uuid.NewUUID())
	}
	if ts := m.GetCreationTimestamp(); ts.IsZero() {
		// Stored at whole seconds, as the API server serializes it.
		m.SetCreationTimestamp(metav1.Now().Rfc3339Copy())
	}
	m.SetGeneration(max(m.GetGeneration(), 1))
	if _, err := a.ObjectTracker.Get(gvr, ns, m.GetName()); err == nil {
		return apierrors.NewAlreadyExists(gvr.GroupResource(), m.GetName())
	}
	m.SetResourceVersion(a.nextRV(gvr))
	a.touched(gvr)
	return a.ObjectTracker.Create(gvr, obj, ns, opts...)
}

// Patch (adoption, release) gets a new resourceVersion.
func (a *strictAPI) Patch(gvr schema.GroupVersionResource, obj runtime.Object, ns string, opts ...metav1.PatchOptions) error {
	a.delay()
	a.mu.Lock()
	defer a.mu.Unlock()
	m, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	m.SetResourceVersion(a.nextRV(gvr))
	a.touched(gvr)
	return a.ObjectTracker.Patch(gvr, obj, ns, opts...)
}

// update is the update verb, with and without the status subresource.
func (a *strictAPI) update(action clienttesting.Action) (bool, runtime.Object, error) {
	ua := action.(clienttesting.UpdateAction)
	gvr, ns := action.GetResource(), action.GetNamespace()
	a.delay()
	a.mu.Lock()
	defer a.mu.Unlock()
	obj := ua.GetObject().DeepCopyObject()
	m, err := meta.Accessor(obj)
	if err != nil {
		return true, nil, err
	}
	cur, err := a.ObjectTracker.Get(gvr, ns, m.GetName())
	if err != nil {
		return true, nil, err
	}
	cm, _ := meta.Accessor(cur)
	if a.conflictIf != nil && a.conflictIf(gvr.Resource, action.GetSubresource(), writer()) {
		return true, nil, apierrors.NewConflict(gvr.GroupResource(), m.GetName(), fmt.Errorf("injected conflict"))
	}
	if m.GetResourceVersion() != "" && m.GetResourceVersion() != cm.GetResourceVersion() {
		if debugWrites {
			a.tracef("conflict %s/%s %s (rv %s, stored %s) by %s", gvr.Resource, action.GetSubresource(), m.GetName(), m.GetResourceVersion(), cm.GetResourceVersion(), writer())
		}
		return true, nil, apierrors.NewConflict(gvr.GroupResource(), m.GetName(),
			fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
	}
	// As the registry strategies do: the status subresource keeps the
	// stored spec (and a Deployment's labels, a pod's ownerReferences);
	// the main resource keeps the stored status and bumps the generation
	// on a spec change (a Deployment's also on an annotation change).
	out := obj
	om, _ := meta.Accessor(out)
	if action.GetSubresource() == "status" {
		setField(out, "Spec", field(cur, "Spec"))
		switch gvr.Resource {
		case "deployments":
			om.SetLabels(cm.GetLabels())
		case "pods":
			om.SetOwnerReferences(cm.GetOwnerReferences())
		}
	} else {
		setField(out, "Status", field(cur, "Status"))
		om.SetGeneration(cm.GetGeneration())
		specChanged := field(cur, "Spec").IsValid() && !apiequality.Semantic.DeepEqual(field(cur, "Spec").Interface(), field(out, "Spec").Interface())
		if specChanged || (gvr.Resource == "deployments" && !apiequality.Semantic.DeepEqual(cm.GetAnnotations(), om.GetAnnotations())) {
			om.SetGeneration(cm.GetGeneration() + 1)
		}
	}
	om.SetUID(cm.GetUID())
	om.SetCreationTimestamp(cm.GetCreationTimestamp())
	om.SetDeletionTimestamp(cm.GetDeletionTimestamp())
	om.SetResourceVersion(a.nextRV(gvr))
	a.touched(gvr)
	if debugWrites {
		// The sizes and statuses, to follow which view each sync read.
		switch x := out.(type) {
		case *appsv1.ReplicaSet:
			a.tracef("rs %s subresource=%q rv=%s gen=%d spec=%d status.replicas=%d status.available=%d observedGeneration=%d by %s",
				x.Name, action.GetSubresource(), x.ResourceVersion, x.Generation, ptrOr(x.Spec.Replicas), x.Status.Replicas, x.Status.AvailableReplicas, x.Status.ObservedGeneration, writer())
		case *appsv1.Deployment:
			a.tracef("deployment %s subresource=%q rv=%s gen=%d spec=%d status.replicas=%d status.available=%d observedGeneration=%d by %s",
				x.Name, action.GetSubresource(), x.ResourceVersion, x.Generation, ptrOr(x.Spec.Replicas), x.Status.Replicas, x.Status.AvailableReplicas, x.Status.ObservedGeneration, writer())
		}
	}
	if err := a.ObjectTracker.Update(gvr, out, ns); err != nil {
		return true, nil, err
	}
	return true, out.DeepCopyObject(), nil
}

// deletePod: a pod bound to a node stays terminating; an unbound one goes.
func (a *strictAPI) deletePod(action clienttesting.Action) (bool, runtime.Object, error) {
	da := action.(clienttesting.DeleteAction)
	a.delay()
	a.mu.Lock()
	defer a.mu.Unlock()
	cur, err := a.ObjectTracker.Get(podsGVR, da.GetNamespace(), da.GetName())
	if err != nil {
		return true, nil, err
	}
	pod := cur.DeepCopyObject()
	m, _ := meta.Accessor(pod)
	if m.GetDeletionTimestamp() != nil {
		return true, nil, nil
	}
	now := metav1.Now().Rfc3339Copy()
	m.SetDeletionTimestamp(&now)
	m.SetDeletionGracePeriodSeconds(ptrTo(int64(30)))
	m.SetResourceVersion(a.nextRV(podsGVR))
	a.touched(podsGVR)
	if debugWrites {
		a.tracef("delete pod %s by %s", da.GetName(), writer())
	}
	if err := a.ObjectTracker.Update(podsGVR, pod, da.GetNamespace()); err != nil {
		return true, nil, err
	}
	if field(pod, "Spec").FieldByName("NodeName").String() != "" {
		return true, nil, nil
	}
	return true, nil, a.ObjectTracker.Delete(podsGVR, da.GetNamespace(), da.GetName())
}

func field(obj runtime.Object, name string) reflect.Value {
	return reflect.ValueOf(obj).Elem().FieldByName(name)
}

func setField(obj runtime.Object, name string, v reflect.Value) {
	if f := field(obj, name); f.IsValid() && v.IsValid() {
		f.Set(v)
	}
}

func ptrTo[T any](v T) *T { return &v }

func ptrOr[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
