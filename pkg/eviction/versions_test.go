package eviction

import (
	"strings"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// The release-by-release switches, each read from that release's
// pkg/kubelet/eviction: grace periods, default thresholds, containerfs.
func TestVersions(t *testing.T) {
	grace := func(minor int, gates map[string]bool, soft bool) int64 {
		t.Helper()
		n := newTestNode(50 * mi)
		p := testPod("a", 0, 0, 0)
		tgps := int64(5)
		p.Spec.TerminationGracePeriodSeconds = &tgps
		n.add(p, 100*mi)
		in := n.input(t, map[string]string{"memory.available": "100Mi"})
		if soft {
			in.Config.Thresholds[0].GracePeriod = 30e9
		}
		in.Config.MaxPodGracePeriod = 30
		in.Rules = rules.Resolve(minor, gates)
		res, err := Predict(in)
		if err != nil || res.Order[0].GracePeriodSeconds == nil {
			t.Fatalf("1.%d: %v %+v", minor, err, res)
		}
		return *res.Order[0].GracePeriodSeconds
	}
	overwrite := map[string]bool{rules.AllowOverwriteTerminationGracePeriodSeconds: true}
	for _, c := range []struct {
		minor int
		gates map[string]bool
		soft  bool
		want  int64
	}{
		{21, nil, false, 0}, {30, nil, false, 0}, {31, nil, false, 1}, {37, nil, false, 1},
		{21, nil, true, 30}, {31, nil, true, 30}, // the pod's own 5s is not read
		{32, nil, true, 5}, {33, overwrite, true, 30}, {35, overwrite, true, 5}, {37, nil, true, 5},
	} {
		if got := grace(c.minor, c.gates, c.soft); got != c.want {
			t.Errorf("1.%d gates %v soft %v: grace %d, want %d", c.minor, c.gates, c.soft, got, c.want)
		}
	}
	for minor, want := range map[int]int{21: 4, 29: 4, 30: 5, 37: 5} {
		if got := len(DefaultEvictionHard(rules.Defaults(minor).Kubelet)); got != want {
			t.Errorf("1.%d: %d default hard thresholds, want %d", minor, got, want)
		}
	}
	for minor, ok := range map[int]bool{21: false, 28: false, 29: true, 37: true} {
		_, err := ParseThresholds(rules.Defaults(minor).Kubelet, nil, map[string]string{"containerfs.available": "10%"}, nil, nil, nil)
		if (err == nil) != ok || (err != nil && !strings.Contains(err.Error(), "unsupported eviction signal")) {
			t.Errorf("1.%d containerfs.available: err %v", minor, err)
		}
	}
}
