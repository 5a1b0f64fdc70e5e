package v1_29

// The node-pressure eviction oracle of Kubernetes 1.29, from its own
// k8s.io/kubernetes pkg/kubelet/eviction (see ../oraclegen/evictgen and
// test/conformance/eviction_versions_test.go).

import (
	"context"
	"flag"
	"fmt"
	"io"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	kubeeviction "k8s.io/kubernetes/pkg/kubelet/eviction"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/scale-preview/scale-preview/test/versions/oraclegen/evictgen"
)

// KubeletSeparateDiskGC is alpha (off): off, a kubelet with a separate
// container filesystem evicts nothing.
var evictionCombos = []map[string]bool{
	{},
	{"KubeletSeparateDiskGC": true},
}

func TestEvictionOracle(t *testing.T) {
	quietKlog()
	evictgen.Record(t, evictgen.Version{
		Minor:      29,
		Kubernetes: "v1.29.14",
		Combos:     evictionCombos,
		SetGates: func(t *testing.T, gates map[string]bool) {
			for name, v := range gates {
				// 1.29's helper returns the restore function.
				t.Cleanup(featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, featuregate.Feature(name), v))
			}
		},
		Enabled: enabled, // oracle_test.go
		Decode:  evictgen.Reencode[v1.Pod, statsapi.Summary],
		Run:     run,
	})
}

func quietKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("stderrthreshold", "FATAL")
	klog.SetOutput(io.Discard)
}

// run drives the real eviction manager through one run of s.
func run(s *evictgen.Scenario, n uint64) (map[string]evictgen.Kill, error) {
	kubeletPods, err := evictgen.StrictAll[v1.Pod](s.KubeletPods())
	if err != nil {
		return nil, err
	}
	clock := testingclock.NewFakeClock(evictgen.Start)
	d := evictgen.NewDriver(s, n, clock.Step)
	c := s.Config()
	thresholds, err := kubeeviction.ParseThresholdConfig(c.EnforceNodeAllocatable, c.Hard, c.Soft, c.Grace, c.MinReclaim)
	if err != nil {
		return nil, fmt.Errorf("%s: the kubelet rejects the thresholds: %v", s, err)
	}
	evictgen.FixOrder(thresholds, func(t evictionapi.Threshold) string { return fmt.Sprint(t.Signal, t.GracePeriod) })
	provider := summaryFunc(func() (*statsapi.Summary, error) { return evictgen.Strict[statsapi.Summary](d.Summary(clock.Now)) })
	kill := func(pod *v1.Pod, _ bool, grace *int64, _ func(*v1.PodStatus)) error {
		d.Kill(pod.Name, *grace)
		return nil
	}
	cfg := kubeeviction.Config{PressureTransitionPeriod: 5 * time.Minute, MaxPodGracePeriodSeconds: c.MaxPodGrace, Thresholds: thresholds}
	mgr, _ := kubeeviction.NewManager(provider, cfg, kill, noGC{}, containerGC{c.SplitContainerFs}, &record.FakeRecorder{},
		&v1.ObjectReference{Kind: "Node", Name: evictgen.NodeName}, clock, true)
	podFunc := func() []*v1.Pod { return evictgen.Pick(kubeletPods, d.Running()) }
	mgr.Start(disks{c.ImageFs}, podFunc, func(*v1.Pod) bool { return true }, 20*time.Microsecond)
	if err := d.Wait(60*time.Second, clock.HasWaiters); err != nil {
		return nil, err
	}
	return d.Kills(), nil
}

type summaryFunc func() (*statsapi.Summary, error)

func (f summaryFunc) Get(context.Context, bool) (*statsapi.Summary, error)            { return f() }
func (f summaryFunc) GetCPUAndMemoryStats(context.Context) (*statsapi.Summary, error) { return f() }

type noGC struct{}

func (noGC) DeleteUnusedImages(context.Context) error        { return nil }
func (noGC) DeleteAllUnusedContainers(context.Context) error { return nil }

type containerGC struct{ split bool }

func (containerGC) DeleteAllUnusedContainers(context.Context) error { return nil }

// Until 1.32 the container GC, not the disk provider, tells a separate
// container filesystem.
func (g containerGC) IsContainerFsSeparateFromImageFs(context.Context) bool { return g.split }

type disks struct{ imageFs bool }

func (d disks) HasDedicatedImageFs(context.Context) (bool, error) { return d.imageFs, nil }
