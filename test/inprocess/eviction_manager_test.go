package inprocess

// The kubelet's real eviction manager (k8s.io/kubernetes
// pkg/kubelet/eviction, 1.37) on seeded random nodes
// (test/versions/oraclegen/evictgen, the generator the recorded older
// releases use too), judged against the plugin's pkg/eviction prediction
// made beforehand by test/internal/evictjudge.

import (
	"context"
	"testing"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	kubeeviction "k8s.io/kubernetes/pkg/kubelet/eviction"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/scale-preview/scale-preview/pkg/eviction"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/test/internal/evictjudge"
	"github.com/scale-preview/scale-preview/test/versions/oraclegen/evictgen"
)

// evictRun drives the real eviction manager through run number run of s
// (the pod list in that run's seeded order, the thresholds in the
// kubelet's own map order) and returns what it killed.
func evictRun(t *testing.T, s *evictgen.Scenario, run uint64) map[string]evictgen.Kill {
	t.Helper()
	kubeletPods, err := evictgen.StrictAll[v1.Pod](s.KubeletPods())
	if err != nil {
		t.Fatal(err)
	}
	c := s.Config()
	hard, err := kubeeviction.ParseThresholdConfig(c.EnforceNodeAllocatable, c.Hard, c.Soft, c.Grace, c.MinReclaim)
	if err != nil {
		t.Fatalf("%s: the kubelet rejects the thresholds: %v", s, err)
	}
	cfg := kubeeviction.Config{PressureTransitionPeriod: 5 * time.Minute, MaxPodGracePeriodSeconds: c.MaxPodGrace, Thresholds: hard}
	return evictRunNode(t, s, kubeletPods, cfg, evictDisks{c.ImageFs, c.SplitContainerFs}, run, func(p *v1.Pod) string { return p.Name })
}

// evictRunNode runs the real eviction manager with cfg on node n, whose
// pods the kubelet holds as kubeletPods (in n's PodNames order), and
// returns what it killed, each pod named by name.
func evictRunNode(t *testing.T, n evictgen.Node, kubeletPods []*v1.Pod, cfg kubeeviction.Config, disks evictDisks, run uint64, name func(*v1.Pod) string) map[string]evictgen.Kill {
	t.Helper()
	clock := testingclock.NewFakeClock(evictgen.Start)
	d := evictgen.NewNodeDriver(n, run, clock.Step)
	provider := evictSummaryFunc(func() (*statsapi.Summary, error) { return evictgen.Strict[statsapi.Summary](d.Summary(clock.Now)) })
	kill := func(pod *v1.Pod, _ bool, grace *int64, _ func(*v1.PodStatus)) error {
		d.Kill(name(pod), *grace)
		return nil
	}
	mgr, _ := kubeeviction.NewManager(provider, cfg, kill, evictNoGC{}, evictNoGC{}, &record.FakeRecorder{},
		&v1.ObjectReference{Kind: "Node", Name: evictgen.NodeName}, clock, true)
	ctx, cancel := context.WithCancel(klog.NewContext(context.Background(), logr.Discard()))
	defer cancel()
	podFunc := func() []*v1.Pod { return evictgen.Pick(kubeletPods, d.Running()) }
	mgr.Start(ctx, disks, podFunc, func(*v1.Pod) bool { return true }, 20*time.Microsecond)
	if err := d.Wait(60*time.Second, clock.HasWaiters); err != nil {
		t.Fatal(err)
	}
	return d.Kills()
}

type evictSummaryFunc func() (*statsapi.Summary, error)

func (f evictSummaryFunc) Get(context.Context, bool) (*statsapi.Summary, error) { return f() }
func (f evictSummaryFunc) GetCPUAndMemoryStats(context.Context) (*statsapi.Summary, error) {
	return f()
}

type evictNoGC struct{}

func (evictNoGC) DeleteUnusedImages(context.Context) error        { return nil }
func (evictNoGC) DeleteAllUnusedContainers(context.Context) error { return nil }

type evictDisks struct{ imageFs, split bool }

func (d evictDisks) HasDedicatedImageFs(context.Context) (bool, error)     { return d.imageFs, nil }
func (d evictDisks) HasDedicatedContainerFs(context.Context) (bool, error) { return d.split, nil }

// evictPredict is the plugin's answer for 1.37 from the API's view of the
// node and its summary before the first eviction.
func evictPredict(t *testing.T, s *evictgen.Scenario) *eviction.Result {
	t.Helper()
	r, err := rules.For(37, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := evictjudge.Predict(r, s.Config(), s.APIPods(), s.Summary(s.AllRunning(), evictgen.Start))
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return res
}

func TestEvictionAgainstKubelet(t *testing.T) {
	t.Parallel()
	scenarios, maxPods, runs := 300, 24, 60
	if testing.Short() {
		scenarios, maxPods, runs = 30, 8, 24
	}
	var tally evictjudge.Tally
	classes := map[string]int{}
	for i := range scenarios {
		s := evictgen.GenerateWith(uint64(i+1), maxPods, 37, evictgen.AllDraws)
		for _, c := range evictgen.DrawnClasses(s) {
			classes[c]++
		}
		pred := evictPredict(t, s)
		evictjudge.JudgeFreshSummary(pred, s.String(), t.Errorf)
		c := s.Config()
		kths, err := kubeeviction.ParseThresholdConfig(c.EnforceNodeAllocatable, c.Hard, c.Soft, c.Grace, c.MinReclaim)
		if err != nil {
			t.Fatalf("%s: the kubelet rejects the thresholds: %v", s, err)
		}
		evictCompareThresholds(t, s.String(), kths, evictDisks{c.ImageFs, c.SplitContainerFs}, pred)
		n := 1
		if !pred.Certain {
			n = runs
		}
		outcomes := make([]evictjudge.Outcome, n)
		for run := range n {
			outcomes[run] = evictjudge.Outcome{Kills: evictRun(t, s, uint64(run)), Runs: 1}
		}
		tally.Add(evictjudge.Judge(pred, outcomes, s.String(), true, t.Errorf))
	}
	t.Logf("%d scenarios (of which %v): %d determined fates compared, %d probabilities judged, %d off beyond chance", scenarios, classes, tally.Determined, tally.Judged, tally.Off)
}
