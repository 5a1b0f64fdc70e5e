package eviction

import (
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// A configz document leaves out what is empty in the running kubelet: no
// evictionHard is no hard threshold, not the defaults.
func TestConfigzWithoutEvictionHard(t *testing.T) {
	k := rules.Defaults(37).Kubelet
	kc, err := DecodeKubeletConfiguration([]byte(`{"evictionSoft":{"memory.available":"1536Mi"},"evictionSoftGracePeriod":{"memory.available":"30s"},"evictionMaxPodGracePeriod":120,"enforceNodeAllocatable":["pods"]}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ConfigFrom(kc, k)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Thresholds) != 1 || cfg.Thresholds[0].Hard() || cfg.Assumed || cfg.MaxPodGracePeriod != 120 {
		t.Errorf("thresholds %+v assumed %v max grace %d: want only the soft memory threshold", cfg.Thresholds, cfg.Assumed, cfg.MaxPodGracePeriod)
	}
	none, err := ConfigFrom(&KubeletConfiguration{}, k)
	if err != nil || len(none.Thresholds) != 0 || !none.LocalStorage {
		t.Errorf("an empty configz: %+v, %v; want no thresholds, local storage isolated", none, err)
	}
	assumed, err := ConfigFrom(nil, k)
	if err != nil || !assumed.Assumed || len(assumed.Thresholds) != len(DefaultEvictionHard(k))+1 { // + allocatable
		t.Errorf("no configz: %+v, %v; want the defaults, assumed", assumed, err)
	}
	old, _ := ConfigFrom(&KubeletConfiguration{FeatureGates: map[string]bool{"LocalStorageCapacityIsolation": false}}, k)
	if old.LocalStorage {
		t.Error("a pre-1.25 configz with the LocalStorageCapacityIsolation gate off: local storage still isolated")
	}
}

// One eviction is enough and two pods tie for it: victims holds one.
func TestTieAtTheCut(t *testing.T) {
	n := newTestNode(90 * mi)
	n.add(testPod("a", 0, 0, 0), 200*mi)
	n.add(testPod("b", 0, 0, 0), 200*mi)
	n.add(testPod("c", 100, 0, 0), 200*mi)
	res, err := Predict(n.input(t, map[string]string{"memory.available": "100Mi"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Cut != 1 || len(res.Victims) != 1 || res.Order[0].EvictProbability != 0.5 || res.Order[1].EvictProbability != 0.5 {
		t.Errorf("cut %d victims %v order %s: want one victim of the two tied at 0.5", res.Cut, res.Victims, names(res.Order))
	}
}

// A pod whose containers are still being created is missing from the
// summary as the kubelet's stats providers leave it out; one that has run
// for minutes is not, and its absence puts the summary in doubt.
func TestMissingFromSummary(t *testing.T) {
	at := testNow.Add(-10 * time.Second) // the summary's time
	for _, c := range []struct {
		name  string
		pod   func(*v1.Pod)
		doubt bool
	}{
		{"pending, creating", func(p *v1.Pod) {
			p.Status = v1.PodStatus{Phase: v1.PodPending, StartTime: ptrTime(at.Add(-3 * time.Second)),
				ContainerStatuses: []v1.ContainerStatus{{Name: "c", State: v1.ContainerState{Waiting: &v1.ContainerStateWaiting{Reason: "ContainerCreating"}}}}}
		}, false},
		{"running for 5s", func(p *v1.Pod) {
			p.Status.StartTime = ptrTime(at.Add(-7 * time.Second))
			p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(at.Add(-5 * time.Second))}}}}
		}, false},
		{"running for 10m", func(p *v1.Pod) {
			p.Status.StartTime = ptrTime(at.Add(-11 * time.Minute))
			p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "c", State: v1.ContainerState{Running: &v1.ContainerStateRunning{StartedAt: metav1.NewTime(at.Add(-10 * time.Minute))}}}}
		}, true},
		{"running, started long ago, no statuses", func(p *v1.Pod) { p.Status.StartTime = ptrTime(at.Add(-time.Hour)) }, true},
	} {
		n := newTestNode(90 * mi)
		n.add(testPod("a", 0, 0, 0), 200*mi)
		p := testPod("new", 0, 0, 0)
		c.pod(p)
		n.pods = append(n.pods, p)
		res, err := Predict(n.input(t, map[string]string{"memory.available": "100Mi"}))
		if err != nil {
			t.Fatal(err)
		}
		doubt := strings.Contains(strings.Join(res.Uncertain, " "), "missing from the summary")
		if doubt != c.doubt || res.Order[0].Pod != "default/new" {
			t.Errorf("%s: doubt %v (uncertain %v notes %v), first %s; want doubt %v, the pod without stats first", c.name, doubt, res.Uncertain, res.Notes, res.Order[0].Pod, c.doubt)
		}
	}
}

func ptrTime(t time.Time) *metav1.Time { m := metav1.NewTime(t); return &m }

// One filesystem, a hard nodefs threshold and a soft imagefs one (the
// same figures, the same ranking) met together: which the kubelet acts on,
// and so the grace period, is open.
func TestDiskGraceRace(t *testing.T) {
	n := newTestNode(4000 * mi)
	fs := &statsapi.FsStats{Time: n.summary.Node.Memory.Time, CapacityBytes: u(100 << 30), AvailableBytes: u(9 << 30), Inodes: u(1e6), InodesFree: u(9e5)}
	n.summary.Node.Fs, n.summary.Node.Runtime = fs, &statsapi.RuntimeStats{ImageFs: fs}
	n.add(testPod("a", 0, 0, 0), 10*mi)
	n.summary.Pods[0].EphemeralStorage = &statsapi.FsStats{UsedBytes: u(5 << 30)}
	n.summary.Pods[0].Containers = []statsapi.ContainerStats{{Name: "c", Rootfs: &statsapi.FsStats{UsedBytes: u(5 << 30)}}}
	r := rules.Defaults(37)
	cfg, err := ConfigFrom(&KubeletConfiguration{EvictionHard: map[string]string{"nodefs.available": "10%"}, EvictionSoft: map[string]string{"imagefs.available": "15%"},
		EvictionSoftGracePeriod: map[string]string{"imagefs.available": "1m"}, EvictionMaxPodGracePeriod: 30}, r.Kubelet)
	if err != nil {
		t.Fatal(err)
	}
	in := n.input(t, nil)
	in.Config = cfg
	res, err := Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Certain || len(res.Order) == 0 || len(res.Order[0].GraceAlternatives) != 2 {
		t.Errorf("certain %v uncertain %v order %+v: want grace 1s or 30s, open", res.Certain, res.Uncertain, res.Order)
	}
}
