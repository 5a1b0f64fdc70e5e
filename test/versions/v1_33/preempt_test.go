package v1_33

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/scale-preview/scale-preview/test/versions/oraclegen/preemptgen"
)

func TestPreemptionOracle(t *testing.T) {
	preemptgen.Run(t, preemptgen.Version{Minor: 33, Kubernetes: "v1.33.13", Preempt: preempt})
}

// recorder is DefaultPreemption as the Evaluator's Interface, with the
// candidate offset fixed and each dry-run candidate kept.
type recorder struct {
	*defaultpreemption.DefaultPreemption
	offset     int32
	mu         sync.Mutex
	candidates map[string]*extenderv1.Victims
}

func (r *recorder) GetOffsetAndNumCandidates(n int32) (int32, int32) {
	_, num := r.DefaultPreemption.GetOffsetAndNumCandidates(n)
	return r.offset, num
}

func (r *recorder) SelectVictimsOnNode(ctx context.Context, state *framework.CycleState, pod *corev1.Pod,
	ni *framework.NodeInfo, pdbs []*policyv1.PodDisruptionBudget) ([]*corev1.Pod, int, *framework.Status) {
	pods, violations, st := r.DefaultPreemption.SelectVictimsOnNode(ctx, state, pod, ni, pdbs)
	if st.IsSuccess() {
		r.mu.Lock()
		r.candidates[ni.Node().Name] = &extenderv1.Victims{Pods: pods, NumPDBViolations: int64(violations)}
		r.mu.Unlock()
	}
	return pods, violations, st
}

func names(candidates map[string]*extenderv1.Victims) map[string][]string {
	out := map[string][]string{}
	for node, v := range candidates {
		for _, p := range v.Pods {
			out[node] = append(out[node], p.Name)
		}
	}
	return out
}

type candidate struct {
	name    string
	victims *extenderv1.Victims
}

func (c candidate) Name() string                 { return c.name }
func (c candidate) Victims() *extenderv1.Victims { return c.victims }

type noActivator struct{}

func (noActivator) Activate(klog.Logger, map[string]*corev1.Pod) {}

// preempt runs 1.33's default profile's Filter phase with nominated pods
// and, if no node fits, its DefaultPreemption PostFilter once per offset.
func preempt(sc *preemptgen.Scenario) (*preemptgen.Case, error) {
	schedmetrics.Register()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := klog.FromContext(ctx)

	visible, _, _ := sc.Visible()
	nodes, errNodes := preemptgen.Decode[corev1.Node](sc.Nodes)
	pods, errPods := preemptgen.Decode[corev1.Pod](visible)
	pdbs, errPDBs := preemptgen.Decode[policyv1.PodDisruptionBudget](sc.PDBs)
	if err := errors.Join(errNodes, errPods, errPDBs); err != nil {
		return &preemptgen.Case{Skipped: err.Error()}, nil
	}
	pre := pods[len(pods)-1]
	pods = pods[:len(pods)-1]
	objs := []runtime.Object{pre}
	for _, n := range nodes {
		objs = append(objs, n)
	}
	for _, p := range pods {
		objs = append(objs, p)
	}
	for _, b := range pdbs {
		objs = append(objs, b)
	}
	client := fake.NewClientset(objs...)
	// Victims stay: every offset sees the same cluster.
	client.PrependReactor("delete", "pods", func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, nil })
	factory := informers.NewSharedInformerFactory(client, 0)

	cfg, err := latest.Default()
	if err != nil {
		return nil, err
	}
	cache := internalcache.New(ctx, 0)
	for _, n := range nodes {
		cache.AddNode(logger, n.DeepCopy())
	}
	for _, p := range pods {
		if p.Spec.NodeName != "" {
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
	factory.Core().V1().Pods().Informer()
	factory.Policy().V1().PodDisruptionBudgets().Informer()
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	for _, p := range pods {
		if p.Spec.NodeName == "" {
			queue.Add(logger, p.DeepCopy())
		}
	}
	registry := plugins.NewInTreeRegistry()
	f, err := frameworkruntime.NewFramework(ctx, registry, &cfg.Profiles[0],
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithEventRecorder(events.NewFakeRecorder(1000)),
		frameworkruntime.WithPodNominator(queue),
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()),
		frameworkruntime.WithPodActivator(noActivator{}),
		frameworkruntime.WithParallelism(1),
		frameworkruntime.WithLogger(logger),
	)
	if err != nil {
		return nil, err
	}
	plugin, err := registry[defaultpreemption.Name](ctx, &config.DefaultPreemptionArgs{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}, f)
	if err != nil {
		return nil, err
	}
	pl := plugin.(*defaultpreemption.DefaultPreemption)
	rec := &recorder{DefaultPreemption: pl}
	pl.Evaluator = preemption.NewEvaluator(defaultpreemption.Name, f, rec, false)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())

	out := &preemptgen.Case{}
	state := framework.NewCycleState()
	statuses := framework.NewDefaultNodeToStatus()
	nodeInfos, err := snapshot.NodeInfos().List()
	if err != nil {
		return nil, err
	}
	preRes, s, _ := f.RunPreFilterPlugins(ctx, state, pre)
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
				statuses.Set(name, framework.NewStatus(framework.UnschedulableAndUnresolvable, "filtered by PreFilter"))
				continue
			}
			st := f.RunFilterPluginsWithNominatedPods(ctx, state, pre, ni)
			if st.IsSuccess() {
				out.FitsOn = append(out.FitsOn, name)
				continue
			}
			if !st.IsRejected() {
				return nil, st.AsError()
			}
			statuses.Set(name, st)
		}
	}
	if len(out.FitsOn) > 0 {
		slices.Sort(out.FitsOn)
		return out, nil
	}
	for _, ni := range nodeInfos {
		if statuses.Get(ni.Node().Name).Code() == framework.Unschedulable {
			out.Potential++
		}
	}
	_, numCandidates := pl.GetOffsetAndNumCandidates(int32(max(out.Potential, 1)))
	return out, out.RunOffsets(int(numCandidates), func(offset int) (preemptgen.Nomination, error) {
		rec.offset, rec.candidates = int32(offset), map[string]*extenderv1.Victims{}
		res, st := pl.PostFilter(ctx, state, pre, statuses)
		if st.Code() == framework.Error {
			return preemptgen.Nomination{}, fmt.Errorf("PostFilter: %v", st.AsError())
		}
		n := preemptgen.Nomination{Victims: names(rec.candidates), Pick: func(a, b string) string {
			return pl.Evaluator.SelectCandidate(ctx, []preemption.Candidate{candidate{a, rec.candidates[a]}, candidate{b, rec.candidates[b]}}).Name()
		}}
		if res != nil && res.NominatingInfo != nil {
			n.Winner = res.NominatedNodeName
		}
		return n, nil
	})
}
