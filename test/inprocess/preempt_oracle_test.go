package inprocess

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	plfeature "k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"
)

// preemptReal is what the real scheduler did in one attempt.
type preemptReal struct {
	fitsOn    []string // nodes that passed Filter: no preemption
	nominated string
	deleted   []string // victims' names, sorted
}

type preemptActivator struct{}

func (preemptActivator) Activate(klog.Logger, map[string]*corev1.Pod) {}

// preemptRunReal runs the real kube-scheduler 1.37 Filter phase (the
// default profile, with nominated pods) and the DefaultPreemption
// PostFilter once on this cluster, on a fresh cache, snapshot and queue.
func preemptRunReal(sc *preemptScenario) (*preemptReal, error) {
	schedmetrics.Register() // the queue records metrics; Register is idempotent
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := klog.FromContext(ctx)

	var objs []runtime.Object
	for _, n := range sc.nodes {
		objs = append(objs, n.DeepCopy())
	}
	for _, p := range sc.pods {
		objs = append(objs, p.DeepCopy())
	}
	objs = append(objs, sc.preemptor.DeepCopy())
	for _, b := range sc.pdbs {
		objs = append(objs, b.DeepCopy())
	}
	client := fake.NewClientset(objs...)
	var mu sync.Mutex
	var deleted []string
	client.PrependReactor("delete", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		mu.Lock()
		deleted = append(deleted, a.(clienttesting.DeleteAction).GetName())
		mu.Unlock()
		return false, nil, nil
	})
	factory := informers.NewSharedInformerFactory(client, 0)

	cfg, err := latest.Default()
	if err != nil {
		return nil, err
	}
	profile := &cfg.Profiles[0]
	cache := internalcache.New(ctx, nil, false, false)
	for _, n := range sc.nodes {
		cache.AddNode(logger, n.DeepCopy())
	}
	for _, p := range sc.pods {
		if p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			if err := cache.AddPod(logger, p.DeepCopy()); err != nil {
				return nil, err
			}
		}
	}
	snapshot := internalcache.NewEmptySnapshot()
	if err := cache.UpdateSnapshot(logger, snapshot); err != nil {
		return nil, err
	}
	queue := internalqueue.NewSchedulingQueue((&queuesort.PrioritySort{}).Less, factory)
	// The nominator checks each pod against the informer's lister.
	factory.Core().V1().Pods().Informer()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	// Pending pods wait in the queue; those with a nomination are in its
	// nominator (which resolves them through the queue).
	for _, p := range sc.pods {
		if p.Spec.NodeName == "" && p.Status.Phase == corev1.PodPending {
			queue.Add(ctx, p.DeepCopy())
		}
	}
	// The DRA and CSI managers as scheduler.New builds them.
	claims := assumecache.NewAssumeCache(logger, factory.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
	slices_, err := resourceslicetracker.StartTracker(ctx, resourceslicetracker.Options{
		SliceInformer: factory.Resource().V1().ResourceSlices(), KubeClient: client})
	if err != nil {
		return nil, err
	}
	f, err := frameworkruntime.NewFramework(ctx, plugins.NewInTreeRegistry(), profile,
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithEventRecorder(events.NewFakeRecorder(1000)),
		frameworkruntime.WithPodNominator(queue),
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithMutableSnapshotLister(snapshot),
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
		frameworkruntime.WithPodsInPreBind(frameworkruntime.NewPodsInPreBindMap()),
		frameworkruntime.WithPodActivator(preemptActivator{}),
		frameworkruntime.WithLogger(logger),
		frameworkruntime.WithSharedDRAManager(dynamicresources.NewDRAManager(ctx, claims, slices_, factory)),
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())),
	)
	if err != nil {
		return nil, err
	}
	// Actuation is synchronous here so that the deletions are recorded when
	// PostFilter returns; the choice is the same with async preemption.
	fts := plfeature.NewSchedulerFeaturesFromGates(utilfeature.DefaultFeatureGate)
	fts.EnableAsyncPreemption = false
	pl, err := defaultpreemption.New(ctx, &config.DefaultPreemptionArgs{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}, f, fts)
	if err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())

	pod := sc.preemptor.DeepCopy()
	state := framework.NewCycleState()
	out := &preemptReal{}
	statuses := framework.NewDefaultNodeToStatus()
	nodeInfos, err := snapshot.NodeInfos().List()
	if err != nil {
		return nil, err
	}
	preRes, s, _ := f.RunPreFilterPlugins(ctx, state, pod)
	if !s.IsSuccess() {
		if !s.IsRejected() {
			return nil, s.AsError()
		}
		for _, ni := range nodeInfos {
			statuses.Set(ni.Node().Name, s)
		}
	} else {
		for _, ni := range nodeInfos {
			name := ni.Node().Name
			if preRes != nil && !preRes.AllNodes() && !preRes.NodeNames.Has(name) {
				statuses.Set(name, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "filtered by PreFilter"))
				continue
			}
			st := f.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
			if st.IsSuccess() {
				out.fitsOn = append(out.fitsOn, name)
				continue
			}
			if !st.IsRejected() {
				return nil, st.AsError()
			}
			statuses.Set(name, st)
		}
	}
	if len(out.fitsOn) > 0 {
		sort.Strings(out.fitsOn)
		return out, nil
	}
	res, st := pl.PostFilter(ctx, state, pod, statuses)
	if st.Code() == fwk.Error {
		return nil, fmt.Errorf("PostFilter: %v", st.AsError())
	}
	if res != nil && res.NominatingInfo != nil {
		out.nominated = res.NominatedNodeName
	}
	mu.Lock()
	out.deleted = slices.Sorted(slices.Values(deleted))
	mu.Unlock()
	return out, nil
}

func (r *preemptReal) String() string {
	if len(r.fitsOn) > 0 {
		return "fits on " + strings.Join(r.fitsOn, ",")
	}
	return fmt.Sprintf("nominated %q deleted %v", r.nominated, r.deleted)
}
