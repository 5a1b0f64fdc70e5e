package v1_21

// The node-pressure eviction oracle of Kubernetes 1.21, from its own
// k8s.io/kubernetes pkg/kubelet/eviction (see ../oraclegen/evictgen and
// test/conformance/eviction_versions_test.go).

import (
	"flag"
	"fmt"
	"io"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	testingclock "k8s.io/apimachinery/pkg/util/clock"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	kubeeviction "k8s.io/kubernetes/pkg/kubelet/eviction"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"

	"github.com/scale-preview/scale-preview/test/versions/oraclegen/evictgen"
)

// None of the gates pkg/rules knows for eviction exists in 1.21.
var evictionCombos = []map[string]bool{{}}

func TestEvictionOracle(t *testing.T) {
	quietKlog()
	evictgen.Record(t, evictgen.Version{
		Minor:      21,
		Kubernetes: "v1.21.14",
		Combos:     evictionCombos,
		SetGates: func(t *testing.T, gates map[string]bool) {
			for name, v := range gates {
				// 1.21's helper returns the restore function.
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
	kill := func(pod *v1.Pod, _ v1.PodStatus, grace *int64) error {
		d.Kill(pod.Name, *grace)
		return nil
	}
	cfg := kubeeviction.Config{PressureTransitionPeriod: 5 * time.Minute, MaxPodGracePeriodSeconds: c.MaxPodGrace, Thresholds: thresholds}
	mgr, _ := kubeeviction.NewManager(provider, cfg, kill, noMirror, noGC{}, noGC{}, &record.FakeRecorder{},
		&v1.ObjectReference{Kind: "Node", Name: evictgen.NodeName}, clock)
	podFunc := func() []*v1.Pod { return evictgen.Pick(kubeletPods, d.Running()) }
	mgr.Start(disks{c.ImageFs}, podFunc, func(*v1.Pod) bool { return true }, 20*time.Microsecond)
	if err := d.Wait(60*time.Second, clock.HasWaiters); err != nil {
		return nil, err
	}
	return d.Kills(), nil
}

type summaryFunc func() (*statsapi.Summary, error)

func (f summaryFunc) Get(bool) (*statsapi.Summary, error)              { return f() }
func (f summaryFunc) GetCPUAndMemoryStats() (*statsapi.Summary, error) { return f() }

func noMirror(*v1.Pod) (*v1.Pod, bool) { return nil, false }

type noGC struct{}

func (noGC) DeleteUnusedImages() error        { return nil }
func (noGC) DeleteAllUnusedContainers() error { return nil }

type disks struct{ imageFs bool }

func (d disks) HasDedicatedImageFs() (bool, error) { return d.imageFs, nil }
