package inprocess

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/eviction"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/test/internal/evictjudge"
)

// The plugin's threshold parsing against the kubelet's own
// (ParseThresholdConfig, then UpdateContainerFsThresholds for the layout)
// on random configurations: the same accepted or rejected, and the same
// thresholds in force. The kubelet's answers are live under -tags kubelet
// and replayed otherwise (eviction_record_test.go).
func TestEvictionThresholdsAgainstKubelet(t *testing.T) {
	t.Parallel()
	n := 20000
	if testing.Short() {
		n = 2000
	}
	k := rules.Defaults(37).Kubelet
	var accepted, rejected int
	for i := range n {
		d := evictDrawConfig(i)
		a, ok := evictKubeletParse(t, i, d)
		if !ok {
			continue
		}
		got, perr := eviction.ParseThresholds(k, d.Alloc, d.Hard, d.Soft, d.Grace, d.MinReclaim)
		if (a.Error == "") != (perr == nil) {
			t.Fatalf("case %d (%s): kubelet error %q, plugin error %v", i, d, a.Error, perr)
		}
		if a.Error != "" {
			rejected++
			continue
		}
		accepted++
		evictCompareConfigz(t, i, a, d.MaxPodGrace)
		got = eviction.WithContainerFs(got, eviction.Layout{ImageFs: d.ImageFs, Split: d.Split})
		if gs := evictPluginThresholds(got); !slices.Equal(a.InForce, gs) {
			t.Fatalf("case %d (%s):\nkubelet %v\nplugin  %v", i, d, a.InForce, gs)
		}
	}
	t.Logf("%d configurations: %d accepted with the same thresholds, %d rejected by both; %s", n, accepted, rejected, kubeletDone(t, sectionThresholds))
}

// evictDrawConfig draws configuration i (seeded: the same every run).
func evictDrawConfig(i int) evictDraw {
	signals := []string{"memory.available", "allocatableMemory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available",
		"imagefs.inodesFree", "containerfs.available", "containerfs.inodesFree", "pid.available", "memory.free"}
	// Valid values first; the last few of each list the kubelet rejects.
	values := []string{"100Mi", "1.5Gi", "500", "0%", "100%", "10%", "5.5%", "1e3", "0", "-1Mi", "abc", "101%", "-5%"}
	graces := []string{"30s", "0s", "1m30s", "-1s", "soon"}
	reclaims := []string{"0", "500Mi", "5%", "0.5%", "0%", "-1Mi", "x"}
	bad := map[string]int{"values": 5, "graces": 2, "reclaims": 3}
	rng := rand.New(rand.NewPCG(uint64(i), 7))
	pick := func(s []string, nbad int) string {
		if rng.IntN(40) == 0 {
			return s[len(s)-1-rng.IntN(nbad)]
		}
		return s[rng.IntN(len(s)-nbad)]
	}
	draw := func(vals []string, nbad int, p float64) map[string]string {
		m := map[string]string{}
		for _, s := range signals[:len(signals)-1] {
			if rng.Float64() < p {
				m[s] = pick(vals, nbad)
			}
		}
		if rng.IntN(100) == 0 {
			m[signals[len(signals)-1]] = vals[0] // an unknown signal
		}
		return m
	}
	d := evictDraw{Hard: draw(values, bad["values"], 0.4), Soft: draw(values, bad["values"], 0.15), MinReclaim: draw(reclaims, bad["reclaims"], 0.15)}
	if rng.IntN(8) == 0 { // `evictionHard: {}`: configz leaves it out
		d.Hard = map[string]string{}
	}
	d.Grace = map[string]string{}
	for _, s := range slices.Sorted(maps.Keys(d.Soft)) {
		if rng.IntN(30) != 0 { // a soft threshold without grace period is rejected
			d.Grace[s] = pick(graces, bad["graces"])
		}
	}
	d.Alloc = []string{"pods"}
	if rng.IntN(3) == 0 {
		d.Alloc = nil
	}
	d.ImageFs, d.Split = rng.IntN(2) == 0, rng.IntN(2) == 0
	d.MaxPodGrace = int32(rng.IntN(3) * 30)
	return d
}

func evictPluginThresholds(ths []eviction.Threshold) []string {
	out := make([]string, len(ths))
	for i, th := range ths {
		out[i] = evictPluginThreshold(th)
	}
	slices.Sort(out)
	return out
}

// evictCompareConfigz reads the configuration as a kubelet running with it
// serves it at /configz (a.Configz: its internal configuration converted
// to v1beta1 by the kubelet's scheme, then JSON-encoded), the way the
// plugin reads a configz document, and compares the thresholds with the
// kubelet's.
func evictCompareConfigz(t *testing.T, i int, a kubeletAnswer, maxPodGrace int32) {
	t.Helper()
	cfg, err := evictjudge.ConfigFromConfigz(a.Configz, rules.Defaults(37))
	if err != nil {
		t.Fatalf("case %d: configz %s: %v", i, a.Configz, err)
	}
	gs := evictPluginThresholds(cfg.Thresholds)
	if !slices.Equal(a.Parsed, gs) || cfg.MaxPodGracePeriod != int64(maxPodGrace) || cfg.Assumed {
		t.Fatalf("case %d: configz %s\nkubelet %v (max pod grace %d)\nplugin  %v (max pod grace %d, assumed %v)", i, a.Configz, a.Parsed, maxPodGrace, gs, cfg.MaxPodGracePeriod, cfg.Assumed)
	}
}
