package inprocess

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/dynamicresources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/util/assumecache"

	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/scheduling"
)

// scoreReal is the real scheduler's Filter and Score phases for one pod:
// the feasible nodes in snapshot order and each one's total score.
type scoreReal struct {
	feasible []string
	scores   map[string]int64
}

func (r *scoreReal) top() []string {
	var best int64 = -1
	var out []string
	for _, n := range r.feasible {
		switch s := r.scores[n]; {
		case s > best:
			best, out = s, []string{n}
		case s == best:
			out = append(out, n)
		}
	}
	return out
}

// scoreRunReal runs kube-scheduler 1.37's default profile (PreFilter,
// Filter, PreScore, Score with NormalizeScore and weights) on the cluster,
// as schedulePod does before it pops the best node.
func scoreRunReal(sc *scoreScenario) (*scoreReal, error) {
	schedmetrics.Register()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logger := klog.FromContext(ctx)
	var objs []runtime.Object
	for _, n := range sc.nodes {
		objs = append(objs, n.DeepCopy())
	}
	for _, p := range append(slices.Clone(sc.pods), sc.pod) {
		objs = append(objs, p.DeepCopy())
	}
	for _, rs := range sc.rss {
		objs = append(objs, rs.DeepCopy())
	}
	for _, svc := range sc.svcs {
		objs = append(objs, svc.DeepCopy())
	}
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	cfg, err := latest.Default()
	if err != nil {
		return nil, err
	}
	cache := internalcache.New(ctx, nil, false, false)
	for _, n := range sc.nodes {
		cache.AddNode(logger, n.DeepCopy())
	}
	for _, p := range sc.pods {
		if err := cache.AddPod(logger, p.DeepCopy()); err != nil {
			return nil, err
		}
	}
	snapshot := internalcache.NewEmptySnapshot()
	if err := cache.UpdateSnapshot(logger, snapshot); err != nil {
		return nil, err
	}
	queue := internalqueue.NewSchedulingQueue((&queuesort.PrioritySort{}).Less, factory)
	claims := assumecache.NewAssumeCache(logger, factory.Resource().V1().ResourceClaims().Informer(), "ResourceClaim", "", nil)
	slices_, err := resourceslicetracker.StartTracker(ctx, resourceslicetracker.Options{SliceInformer: factory.Resource().V1().ResourceSlices(), KubeClient: client})
	if err != nil {
		return nil, err
	}
	f, err := frameworkruntime.NewFramework(ctx, plugins.NewInTreeRegistry(), &cfg.Profiles[0],
		frameworkruntime.WithClientSet(client), frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithEventRecorder(events.NewFakeRecorder(100)), frameworkruntime.WithPodNominator(queue),
		frameworkruntime.WithSnapshotSharedLister(snapshot), frameworkruntime.WithMutableSnapshotLister(snapshot),
		frameworkruntime.WithWaitingPods(frameworkruntime.NewWaitingPodsMap()), frameworkruntime.WithPodsInPreBind(frameworkruntime.NewPodsInPreBindMap()),
		frameworkruntime.WithPodActivator(preemptActivator{}), frameworkruntime.WithLogger(logger),
		frameworkruntime.WithSharedDRAManager(dynamicresources.NewDRAManager(ctx, claims, slices_, factory)),
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())))
	if err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return scoreRunPhases(ctx, f, snapshot, sc.pod.DeepCopy())
}

func scoreRunPhases(ctx context.Context, f framework.Framework, snapshot *internalcache.Snapshot, pod *corev1.Pod) (*scoreReal, error) {
	state := framework.NewCycleState()
	out := &scoreReal{scores: map[string]int64{}}
	all, err := snapshot.NodeInfos().List()
	if err != nil {
		return nil, err
	}
	preRes, s, _ := f.RunPreFilterPlugins(ctx, state, pod)
	if !s.IsSuccess() {
		return out, nil
	}
	var feasible = all[:0:0]
	for _, ni := range all {
		if preRes != nil && !preRes.AllNodes() && !preRes.NodeNames.Has(ni.Node().Name) {
			continue
		}
		if f.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni).IsSuccess() {
			feasible = append(feasible, ni)
			out.feasible = append(out.feasible, ni.Node().Name)
		}
	}
	if len(feasible) < 2 {
		return out, nil
	}
	if st := f.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
		return nil, st.AsError()
	}
	scores, st := f.RunScorePlugins(ctx, state, pod, feasible)
	if !st.IsSuccess() {
		return nil, st.AsError()
	}
	for _, ns := range scores {
		out.scores[ns.Name] = ns.TotalScore
	}
	return out, nil
}

// TestScoreAgainstScheduler places a pod on seeded random clusters with
// the plugin's model of the Score phase and with the real kube-scheduler
// 1.37 framework: where the plugin answers (nothing unmodelled), its top
// set must be the real one, and every node's total score the same. Some
// clusters have a Service, which the real scheduler reads and the plugin
// does not: it must then answer only where the Service cannot matter.
func TestScoreAgainstScheduler(t *testing.T) {
	t.Parallel()
	seeds := envInt("SCORE_SEEDS", 2000)
	if testing.Short() {
		seeds = envInt("SCORE_SEEDS", 60)
	}
	base := uint64(envInt("SCORE_SEED", 1))
	var scored, ties, unmodelled int
	for i := range seeds {
		sc := scoreGenerate(base*100003 + uint64(i))
		real, err := scoreRunReal(sc)
		if err != nil {
			t.Fatalf("seed %d: real scheduler: %v", sc.seed, err)
		}
		pl, ch, err := scorePredict(sc)
		if err != nil {
			t.Fatalf("seed %d: predict: %v", sc.seed, err)
		}
		if !slices.Equal(pl.Feasible, real.feasible) {
			t.Errorf("seed %d: feasible %v, the scheduler's %v", sc.seed, pl.Feasible, real.feasible)
			continue
		}
		if len(real.feasible) < 2 {
			continue
		}
		if len(ch.Unmodelled) > 0 {
			unmodelled++
			continue
		}
		scored++
		if len(ch.Top) > 1 {
			ties++
		}
		if !slices.Equal(ch.Top, real.top()) {
			t.Errorf("seed %d: top %v, the scheduler's %v (scores %v, the scheduler's %v)", sc.seed, ch.Top, real.top(), ch.Scores, real.scores)
			continue
		}
		for k, n := range real.feasible {
			if ch.Scores[k] != real.scores[n] {
				t.Errorf("seed %d: node %s scores %d, the scheduler's %d", sc.seed, n, ch.Scores[k], real.scores[n])
			}
		}
	}
	t.Logf("%d scenarios: %d scored and compared (%d with a tie at the top), %d left uncertain", seeds, scored, ties, unmodelled)
}

func scorePredict(sc *scoreScenario) (scheduling.Placement, scheduling.Choice, error) {
	v, err := scheduling.NewView(sc.nodes, sc.pods, nil, rules.Scheduler(rules.Newest, nil))
	if err != nil {
		return scheduling.Placement{}, scheduling.Choice{}, err
	}
	return v.Choose(sc.pod, scheduling.ScoreInput{OwnerSelector: sc.owner})
}
