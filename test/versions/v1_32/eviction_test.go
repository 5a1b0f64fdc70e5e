// Package v1_32 records the node-pressure eviction oracle of Kubernetes
// 1.32 from its own k8s.io/kubernetes pkg/kubelet/eviction (see
// ../oraclegen/evictgen and test/conformance/eviction_versions_test.go).
package v1_32

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
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
	testingclock "k8s.io/utils/clock/testing"

	"github.com/scale-preview/scale-preview/test/versions/oraclegen/evictgen"
)

// The deprecated AllowOverwriteTerminationGracePeriodSeconds (off) changes
// soft evictions' grace since 1.32.
var evictionCombos = []map[string]bool{
	{},
	{"AllowOverwriteTerminationGracePeriodSeconds": true},
}

func TestEvictionOracle(t *testing.T) {
	quietKlog()
	evictgen.Record(t, evictgen.Version{
		Minor:      32,
		Kubernetes: "v1.32.13",
		Combos:     evictionCombos,
		SetGates: func(t *testing.T, gates map[string]bool) {
			for name, v := range gates {
				featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, featuregate.Feature(name), v)
			}
		},
		Enabled: func(names []string) map[string]bool {
			out := map[string]bool{}
			for _, name := range names {
				out[name] = utilfeature.DefaultFeatureGate.Enabled(featuregate.Feature(name))
			}
			return out
		},
		Decode: decode,
		Run:    run,
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
	kill := func(pod *v1.Pod, _ bool, grace *int64, _ func(*v1.PodStatus)) error {
		d.Kill(pod.Name, *grace)
		return nil
	}
	cfg := kubeeviction.Config{PressureTransitionPeriod: 5 * time.Minute, MaxPodGracePeriodSeconds: c.MaxPodGrace, Thresholds: thresholds}
	mgr, _ := kubeeviction.NewManager(provider, cfg, kill, noGC{}, noGC{}, &record.FakeRecorder{},
		&v1.ObjectReference{Kind: "Node", Name: evictgen.NodeName}, clock, true)
	podFunc := func() []*v1.Pod {
		var out []*v1.Pod
		for _, i := range d.Running() {
			out = append(out, kubeletPods[i])
		}
		return out
	}
	mgr.Start(disks{c.ImageFs, c.SplitContainerFs}, podFunc, func(*v1.Pod) bool { return true }, 20*time.Microsecond)
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

func (f summaryFunc) Get(context.Context, bool) (*statsapi.Summary, error)            { return f() }
func (f summaryFunc) GetCPUAndMemoryStats(context.Context) (*statsapi.Summary, error) { return f() }

type noGC struct{}

func (noGC) DeleteUnusedImages(context.Context) error        { return nil }
func (noGC) DeleteAllUnusedContainers(context.Context) error { return nil }

type disks struct{ imageFs, split bool }

func (d disks) HasDedicatedImageFs(context.Context) (bool, error)     { return d.imageFs, nil }
func (d disks) HasDedicatedContainerFs(context.Context) (bool, error) { return d.split, nil }
