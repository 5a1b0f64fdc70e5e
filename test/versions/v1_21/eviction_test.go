package v1_21

// The node-pressure eviction oracle of Kubernetes 1.21, from its own
// k8s.io/kubernetes pkg/kubelet/eviction (see ../oraclegen/evictgen and
// test/conformance/eviction_versions_test.go).

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
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
		Decode:  decode,
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

func strict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

func decodePods(raw []json.RawMessage) ([]*v1.Pod, error) {
	pods := make([]*v1.Pod, len(raw))
	for i, r := range raw {
		pods[i] = &v1.Pod{}
		if err := strict(r, pods[i]); err != nil {
			return nil, fmt.Errorf("pod %d does not decode into this k8s.io/api: %v\n%s", i, err, r)
		}
	}
	return pods, nil
}

func decodeSummary(raw json.RawMessage) (*statsapi.Summary, error) {
	sum := &statsapi.Summary{}
	if err := strict(raw, sum); err != nil {
		return nil, fmt.Errorf("the summary does not decode into this stats API: %v", err)
	}
	return sum, nil
}

func decode(rawPods []json.RawMessage, rawSummary json.RawMessage) ([]json.RawMessage, json.RawMessage, error) {
	pods, err := decodePods(rawPods)
	if err != nil {
		return nil, nil, err
	}
	sum, err := decodeSummary(rawSummary)
	if err != nil {
		return nil, nil, err
	}
	out := make([]json.RawMessage, len(pods))
	for i, p := range pods {
		if out[i], err = json.Marshal(p); err != nil {
			return nil, nil, err
		}
	}
	s, err := json.Marshal(sum)
	return out, s, err
}

// run drives the real eviction manager through one run of s.
func run(s *evictgen.Scenario, n uint64) (map[string]evictgen.Kill, error) {
	kubeletPods, err := decodePods(s.KubeletPods())
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
	// ParseThresholdConfig returns map order; a fixed order keeps the
	// recording byte-stable (the plugin calls such races equal odds).
	sort.SliceStable(thresholds, func(i, j int) bool {
		return fmt.Sprint(thresholds[i].Signal, thresholds[i].GracePeriod) < fmt.Sprint(thresholds[j].Signal, thresholds[j].GracePeriod)
	})
	provider := summaryFunc(func() (*statsapi.Summary, error) { return decodeSummary(d.Summary(clock.Now)) })
	kill := func(pod *v1.Pod, _ v1.PodStatus, grace *int64) error {
		d.Kill(pod.Name, *grace)
		return nil
	}
	cfg := kubeeviction.Config{PressureTransitionPeriod: 5 * time.Minute, MaxPodGracePeriodSeconds: c.MaxPodGrace, Thresholds: thresholds}
	mgr, _ := kubeeviction.NewManager(provider, cfg, kill, noMirror, noGC{}, noGC{}, &record.FakeRecorder{},
		&v1.ObjectReference{Kind: "Node", Name: evictgen.NodeName}, clock)
	podFunc := func() []*v1.Pod {
		var out []*v1.Pod
		for _, i := range d.Running() {
			out = append(out, kubeletPods[i])
		}
		return out
	}
	mgr.Start(disks{c.ImageFs}, podFunc, func(*v1.Pod) bool { return true }, 20*time.Microsecond)
	stop := make(chan struct{})
	defer close(stop)
	go func() { // waitForPodsCleanup waits on the fake clock's ticker
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Microsecond):
			}
			if clock.HasWaiters() {
				clock.Step(time.Second)
			}
		}
	}()
	if err := d.Wait(60 * time.Second); err != nil {
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
