//go:debug randseednop=0

package v1_21

import (
	"context"
	"errors"
	"math/rand"
	"slices"
	"testing"
	"time"

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

	"github.com/scale-preview/scale-preview/test/versions/oraclegen/preemptgen"
)

// 1.21 draws the candidate offset from math/rand's global source inside
// FindCandidates; the test seeds that source (randseednop=0 above lets
// rand.Seed work) with a seed that draws the offset wanted.
func TestPreemptionOracle(t *testing.T) {
	preemptgen.Run(t, preemptgen.Version{Minor: 21, Kubernetes: "v1.21.14", Preempt: preempt})
}

type candidate struct {
	name    string
	victims *extenderv1.Victims
}

func (c candidate) Name() string                 { return c.name }
func (c candidate) Victims() *extenderv1.Victims { return c.victims }

// preempt builds 1.21's scheduler (default profile, parallelism 1) on a
// fake clientset, lets its event handlers fill the cache and the
// nominator, runs its generic scheduler's Schedule (snapshot, PreFilter,
// Filter with nominated pods) and, if no node fits, the steps of
// DefaultPreemption.preempt that decide (eligibility, FindCandidates,
// SelectCandidate; 1.21 has no Evaluator to hand an offset to), once per
// offset.
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
	sched, err := scheduler.New(client, factory,
		func(string) events.EventRecorder { return events.NewFakeRecorder(1000) }, ctx.Done(),
		scheduler.WithParallelism(1))
	if err != nil {
		return nil, err
	}
	fwk := sched.Profiles[corev1.DefaultSchedulerName]
	plugin, err := plugins.NewInTreeRegistry()[defaultpreemption.Name](&config.DefaultPreemptionArgs{MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}, fwk)
	if err != nil {
		return nil, err
	}
	pl := plugin.(*defaultpreemption.DefaultPreemption)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	if err := preemptgen.WaitFor(func() bool {
		cached, _ := sched.SchedulerCache.PodCount()
		return sched.SchedulerCache.NodeCount() == len(nodes) && cached == bound && len(sched.SchedulingQueue.PendingPods()) == pending
	}); err != nil {
		return nil, err
	}
	// The informers' reflectors draw their watch timeouts from the same
	// global source when they start watching: let them.
	time.Sleep(50 * time.Millisecond)

	state := framework.NewCycleState()
	out := &preemptgen.Case{}
	_, err = sched.Algorithm.Schedule(ctx, fwk, state, pre)
	var fitErr *framework.FitError
	switch {
	case err == nil:
		return out, fitsOn(ctx, fwk, pre, out)
	case !errors.As(err, &fitErr):
		return nil, err
	}
	m := fitErr.Diagnosis.NodeToStatusMap
	nodeInfos := fwk.SnapshotSharedLister().NodeInfos()
	all, err := nodeInfos.List()
	if err != nil {
		return nil, err
	}
	for _, ni := range all {
		if m[ni.Node().Name].Code() != framework.UnschedulableAndUnresolvable {
			out.Potential++
		}
	}
	numCandidates := out.Potential // calculateNumCandidates, unexported in 1.21
	if out.Potential > 100 {
		numCandidates = max(out.Potential/10, 100)
	}
	eligible := defaultpreemption.PodEligibleToPreemptOthers(pre, nodeInfos, m[pre.Status.NominatedNodeName])
	return out, out.RunOffsets(numCandidates, func(offset int) (preemptgen.Nomination, error) {
		if !eligible {
			return preemptgen.Nomination{}, nil
		}
		if out.Potential > 0 {
			rand.Seed(seedFor(offset, out.Potential))
		}
		candidates, _, st := pl.FindCandidates(ctx, state, pre, m)
		if !st.IsSuccess() {
			return preemptgen.Nomination{}, st.AsError()
		}
		if len(candidates) == 0 {
			return preemptgen.Nomination{}, nil
		}
		victims := map[string]*extenderv1.Victims{}
		n := preemptgen.Nomination{Winner: defaultpreemption.SelectCandidate(candidates).Name(), Victims: map[string][]string{}}
		for _, c := range candidates {
			victims[c.Name()] = c.Victims()
			for _, p := range c.Victims().Pods {
				n.Victims[c.Name()] = append(n.Victims[c.Name()], p.Name)
			}
		}
		n.Pick = func(a, b string) string {
			return defaultpreemption.SelectCandidate([]defaultpreemption.Candidate{candidate{a, victims[a]}, candidate{b, victims[b]}}).Name()
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

// seedFor returns a seed whose first Int31n(n) is offset.
func seedFor(offset, n int) int64 {
	for s := int64(1); ; s++ {
		if int(rand.New(rand.NewSource(s)).Int31n(int32(n))) == offset {
			return s
		}
	}
}

// fitsOn lists every node that passes PreFilter and Filter with nominated
// pods (Schedule stops at the nodes it needs and returns one).
func fitsOn(ctx context.Context, fwk framework.Framework, pre *corev1.Pod, out *preemptgen.Case) error {
	state := framework.NewCycleState()
	if s := fwk.RunPreFilterPlugins(ctx, state, pre); !s.IsSuccess() {
		return s.AsError()
	}
	nodeInfos, err := fwk.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return err
	}
	for _, ni := range nodeInfos {
		if fwk.RunFilterPluginsWithNominatedPods(ctx, state, pre, ni).IsSuccess() {
			out.FitsOn = append(out.FitsOn, ni.Node().Name)
		}
	}
	slices.Sort(out.FitsOn)
	return nil
}
