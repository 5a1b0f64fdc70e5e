//go:build kubelet

package inprocess

// The kubelet's own code, live: its threshold parsing, the /configz
// documents of its scheme, and its real eviction manager (k8s.io/kubernetes
// pkg/kubelet/eviction, 1.37) driven through seeded runs.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletscheme "k8s.io/kubernetes/pkg/kubelet/apis/config/scheme"
	kubeeviction "k8s.io/kubernetes/pkg/kubelet/eviction"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/scale-preview/scale-preview/test/versions/oraclegen/evictgen"
)

// evictKubeletParse is the kubelet's parsing of d, and for a configuration
// it accepts, the /configz document a kubelet running with it serves.
func evictKubeletParse(t *testing.T, i int, d evictDraw) (kubeletAnswer, bool) {
	t.Helper()
	a := kubeletAnswer{Key: strconv.Itoa(i), Input: evictFingerprint(t, d)}
	ths, err := kubeeviction.ParseThresholdConfig(d.Alloc, d.Hard, d.Soft, d.Grace, d.MinReclaim)
	if err != nil {
		a.Error = err.Error()
		return evictLiveAnswer(t, sectionThresholds, a)
	}
	for _, th := range ths {
		a.Parsed = append(a.Parsed, evictKubeletThreshold(th))
	}
	slices.Sort(a.Parsed)
	a.InForce = evictInForce(ths, evictDisks{d.ImageFs, d.Split})
	a.Configz = evictConfigz(t, kubeletconfig.KubeletConfiguration{EvictionHard: d.Hard, EvictionSoft: d.Soft, EvictionSoftGracePeriod: d.Grace,
		EvictionMinimumReclaim: d.MinReclaim, EnforceNodeAllocatable: d.Alloc, EvictionMaxPodGracePeriod: d.MaxPodGrace})
	return evictLiveAnswer(t, sectionThresholds, a)
}

// evictInForce are the thresholds the running kubelet holds for the
// layout (UpdateContainerFsThresholds), without its inert copies of
// missing thresholds, sorted.
func evictInForce(ths []evictionapi.Threshold, d evictDisks) []string {
	ths, _ = kubeeviction.UpdateContainerFsThresholds(slices.Clone(ths), d.imageFs, d.split)
	var out []string
	for _, th := range ths {
		if th.Operator != "" {
			out = append(out, evictKubeletThreshold(th))
		}
	}
	slices.Sort(out)
	return out
}

func evictKubeletThreshold(th evictionapi.Threshold) string {
	mr := "-"
	if th.MinReclaim != nil {
		mr = evictValue(th.MinReclaim.Quantity, th.MinReclaim.Quantity == nil, th.MinReclaim.Percentage)
	}
	return fmt.Sprintf("%s grace=%v value=%s minReclaim=%s", th.Signal, th.GracePeriod, evictValue(th.Value.Quantity, th.Value.Quantity == nil, th.Value.Percentage), mr)
}

var evictKubeletScheme = sync.OnceValues(func() (*runtime.Scheme, error) {
	s, _, err := kubeletscheme.NewSchemeAndCodecs()
	return s, err
})

// evictConfigz is kc as a kubelet serves it at /configz: converted to
// v1beta1 by its scheme, then JSON-encoded.
func evictConfigz(t *testing.T, kc kubeletconfig.KubeletConfiguration) json.RawMessage {
	t.Helper()
	sch, err := evictKubeletScheme()
	if err != nil {
		t.Fatal(err)
	}
	var versioned kubeletconfigv1beta1.KubeletConfiguration
	if err := sch.Convert(&kc, &versioned, nil); err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(map[string]any{"kubeletconfig": &versioned})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// evictKubeletScenario is the kubelet's thresholds for s and the outcomes
// of runs runs of its eviction manager.
func evictKubeletScenario(t *testing.T, s *evictgen.Scenario, runs int) (kubeletAnswer, bool) {
	t.Helper()
	a := kubeletAnswer{Key: strconv.FormatUint(s.Seed, 10), Input: evictScenarioInput(t, s, runs)}
	c := s.Config()
	ths, err := kubeeviction.ParseThresholdConfig(c.EnforceNodeAllocatable, c.Hard, c.Soft, c.Grace, c.MinReclaim)
	if err != nil {
		t.Fatalf("%s: the kubelet rejects the thresholds: %v", s, err)
	}
	a.InForce = evictInForce(ths, evictDisks{c.ImageFs, c.SplitContainerFs})
	kills := make([]map[string]evictgen.Kill, runs)
	for run := range runs {
		kills[run] = evictRun(t, s, uint64(run))
	}
	a.Outcomes = evictGroup(kills)
	return evictLiveAnswer(t, sectionScenarios, a)
}

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
