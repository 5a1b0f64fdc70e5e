// The preemption oracle of kube-scheduler 1.29 (see ../oraclegen/preemptgen
// and test/conformance/preemption_versions_test.go).

package v1_29

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
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultpreemption"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"

	"github.com/scale-preview/scale-preview/test/versions/oraclegen/preemptgen"
)

func TestPreemptionOracle(t *testing.T) {
	preemptgen.Run(t, preemptgen.Version{Minor: 29, Kubernetes: "v1.29.14", Preempt: preempt})
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

// preempt builds 1.29's scheduler (default profile, parallelism 1) on a
// fake clientset, lets its event handlers fill the cache and the
// nominator, runs its own schedulePod (snapshot, PreFilter, Filter with
// nominated pods) and, if no node fits, the DefaultPreemption Evaluator
// as PostFilter builds it, once per offset.
func preempt(sc *preemptgen.Scenario) (*preemptgen.Case, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	visible, bound, pending := sc.Visible()
	nodes, errNodes := preemptgen.Decode[corev1.Node](sc.Nodes)
	pods, errPods := preemptgen.Decode[corev1.Pod](visible)
	pdbs, errPDBs := preemptgen.Decode[policyv1.PodDisruptionBudget](sc.PDBs)
	if err := errors.Join(errNodes, errPods, errPDBs); err != nil {
		return &preemptgen.Case{Skipped: err.Error()}, nil
	}
	pre := pods[len(pods)-1]
	client := fake.NewSimpleClientset(objects(nodes, pods, pdbs)...)
	// Victims stay: every offset sees the same cluster.
	client.PrependReactor("delete", "pods", func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, nil })
	factory := informers.NewSharedInformerFactory(client, 0)
	sched, err := scheduler.New(ctx, client, factory, nil,
		func(string) events.EventRecorder { return events.NewFakeRecorder(1000) },
		scheduler.WithParallelism(1))
	if err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	if err := preemptgen.WaitFor(func() bool {
		cached, _ := sched.Cache.PodCount()
		queued, _ := sched.SchedulingQueue.PendingPods()
		return sched.Cache.NodeCount() == len(nodes) && cached == bound && len(queued) == pending
	}); err != nil {
		return nil, err
	}

	fwk := sched.Profiles[corev1.DefaultSchedulerName]
	state := framework.NewCycleState()
	out := &preemptgen.Case{}
	_, err = sched.SchedulePod(ctx, fwk, state, pre)
	var fitErr *framework.FitError
	switch {
	case err == nil:
		return out, fitsOn(ctx, fwk, pre, out)
	case !errors.As(err, &fitErr):
		return nil, err
	}
	m := fitErr.Diagnosis.NodeToStatusMap
	for _, st := range m {
		if st.Code() == framework.Unschedulable {
			out.Potential++
		}
	}
	plugin, err := plugins.NewInTreeRegistry()[defaultpreemption.Name](ctx, &config.DefaultPreemptionArgs{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}, fwk)
	if err != nil {
		return nil, err
	}
	rec := &recorder{DefaultPreemption: plugin.(*defaultpreemption.DefaultPreemption)}
	ev := preemption.Evaluator{PluginName: defaultpreemption.Name, Handler: fwk,
		PodLister: factory.Core().V1().Pods().Lister(), PdbLister: factory.Policy().V1().PodDisruptionBudgets().Lister(),
		State: state, Interface: rec}
	_, numCandidates := rec.DefaultPreemption.GetOffsetAndNumCandidates(int32(max(out.Potential, 1)))
	return out, out.RunOffsets(int(numCandidates), func(offset int) (preemptgen.Nomination, error) {
		rec.offset, rec.candidates = int32(offset), map[string]*extenderv1.Victims{}
		res, st := ev.Preempt(ctx, pre, m)
		if st.Code() == framework.Error {
			return preemptgen.Nomination{}, fmt.Errorf("PostFilter: %v", st.AsError())
		}
		n := preemptgen.Nomination{Victims: names(rec.candidates), Pick: func(a, b string) string {
			return ev.SelectCandidate(ctx, []preemption.Candidate{candidate{a, rec.candidates[a]}, candidate{b, rec.candidates[b]}}).Name()
		}}
		if res != nil && res.NominatingInfo != nil {
			n.Winner = res.NominatedNodeName
		}
		return n, nil
	})
}

func objects(nodes []*corev1.Node, pods []*corev1.Pod, pdbs []*policyv1.PodDisruptionBudget) []runtime.Object {
	var objs []runtime.Object
	for _, n := range nodes {
		objs = append(objs, n)
	}
	for _, p := range pods {
		objs = append(objs, p)
	}
	for _, b := range pdbs {
		objs = append(objs, b)
	}
	return objs
}

// fitsOn lists every node that passes PreFilter and Filter with nominated
// pods (schedulePod stops at the nodes it needs and returns one).
func fitsOn(ctx context.Context, fwk framework.Framework, pre *corev1.Pod, out *preemptgen.Case) error {
	state := framework.NewCycleState()
	preRes, s := fwk.RunPreFilterPlugins(ctx, state, pre)
	if !s.IsSuccess() {
		return s.AsError()
	}
	nodeInfos, err := fwk.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return err
	}
	for _, ni := range nodeInfos {
		if preRes != nil && !preRes.AllNodes() && !preRes.NodeNames.Has(ni.Node().Name) {
			continue
		}
		if fwk.RunFilterPluginsWithNominatedPods(ctx, state, pre, ni).IsSuccess() {
			out.FitsOn = append(out.FitsOn, ni.Node().Name)
		}
	}
	slices.Sort(out.FitsOn)
	return nil
}
