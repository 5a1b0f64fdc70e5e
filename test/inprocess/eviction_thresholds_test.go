package inprocess

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeeviction "k8s.io/kubernetes/pkg/kubelet/eviction"
	evictionapi "k8s.io/kubernetes/pkg/kubelet/eviction/api"

	"github.com/scale-preview/scale-preview/pkg/eviction"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/test/internal/evictjudge"
)

// The plugin's threshold parsing against the kubelet's own
// (ParseThresholdConfig, then UpdateContainerFsThresholds for the layout)
// on random configurations: the same accepted or rejected, and the same
// thresholds in force.
func TestEvictionThresholdsAgainstKubelet(t *testing.T) {
	t.Parallel()
	n := 20000
	if testing.Short() {
		n = 2000
	}
	signals := []string{"memory.available", "allocatableMemory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available",
		"imagefs.inodesFree", "containerfs.available", "containerfs.inodesFree", "pid.available", "memory.free"}
	// Valid values first; the last few of each list the kubelet rejects.
	values := []string{"100Mi", "1.5Gi", "500", "0%", "100%", "10%", "5.5%", "1e3", "0", "-1Mi", "abc", "101%", "-5%"}
	graces := []string{"30s", "0s", "1m30s", "-1s", "soon"}
	reclaims := []string{"0", "500Mi", "5%", "0.5%", "0%", "-1Mi", "x"}
	bad := map[string]int{"values": 5, "graces": 2, "reclaims": 3}
	k := rules.Defaults(37).Kubelet
	var accepted, rejected int
	for i := range n {
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
		hard, soft, minRe := draw(values, bad["values"], 0.4), draw(values, bad["values"], 0.15), draw(reclaims, bad["reclaims"], 0.15)
		if rng.IntN(8) == 0 { // `evictionHard: {}`: configz leaves it out
			hard = map[string]string{}
		}
		grace := map[string]string{}
		for _, s := range slices.Sorted(maps.Keys(soft)) { // seeded: same draws every run
			if rng.IntN(30) != 0 { // a soft threshold without grace period is rejected
				grace[s] = pick(graces, bad["graces"])
			}
		}
		alloc := []string{"pods"}
		if rng.IntN(3) == 0 {
			alloc = nil
		}
		imageFs, split := rng.IntN(2) == 0, rng.IntN(2) == 0
		want, kerr := kubeeviction.ParseThresholdConfig(alloc, hard, soft, grace, minRe)
		got, perr := eviction.ParseThresholds(k, alloc, hard, soft, grace, minRe)
		if (kerr == nil) != (perr == nil) {
			t.Fatalf("case %d (hard %v soft %v grace %v minReclaim %v): kubelet error %v, plugin error %v", i, hard, soft, grace, minRe, kerr, perr)
		}
		if kerr != nil {
			rejected++
			continue
		}
		accepted++
		evictCompareConfigz(t, i, kubeletconfig.KubeletConfiguration{EvictionHard: hard, EvictionSoft: soft, EvictionSoftGracePeriod: grace,
			EvictionMinimumReclaim: minRe, EnforceNodeAllocatable: alloc, EvictionMaxPodGracePeriod: int32(rng.IntN(3) * 30)}, want)
		want, _ = kubeeviction.UpdateContainerFsThresholds(want, imageFs, split)
		got = eviction.WithContainerFs(got, eviction.Layout{ImageFs: imageFs, Split: split})
		var ws, gs []string
		for _, th := range want {
			if th.Operator != "" { // the kubelet's copies of missing thresholds are inert
				ws = append(ws, evictKubeletThreshold(th))
			}
		}
		for _, th := range got {
			gs = append(gs, evictPluginThreshold(th))
		}
		slices.Sort(ws)
		slices.Sort(gs)
		if !slices.Equal(ws, gs) {
			t.Fatalf("case %d (hard %v soft %v grace %v minReclaim %v, imageFs %v split %v):\nkubelet %v\nplugin  %v", i, hard, soft, grace, minRe, imageFs, split, ws, gs)
		}
	}
	t.Logf("%d configurations: %d accepted with the same thresholds, %d rejected by both; %s", n, accepted, rejected, configzDone(t))
}

func evictValue(q fmt.Stringer, isNil bool, pct float32) string {
	if !isNil {
		return q.String()
	}
	return fmt.Sprintf("%g%%", pct)
}

func evictKubeletThreshold(th evictionapi.Threshold) string {
	mr := "-"
	if th.MinReclaim != nil {
		mr = evictValue(th.MinReclaim.Quantity, th.MinReclaim.Quantity == nil, th.MinReclaim.Percentage)
	}
	return fmt.Sprintf("%s grace=%v value=%s minReclaim=%s", th.Signal, th.GracePeriod, evictValue(th.Value.Quantity, th.Value.Quantity == nil, th.Value.Percentage), mr)
}

func evictPluginThreshold(th eviction.Threshold) string {
	mr := "-"
	if th.MinReclaim != nil {
		mr = evictValue(th.MinReclaim.Quantity, th.MinReclaim.Quantity == nil, th.MinReclaim.Percentage)
	}
	return fmt.Sprintf("%s grace=%v value=%s minReclaim=%s", th.Signal, th.GracePeriod, evictValue(th.Value.Quantity, th.Value.Quantity == nil, th.Value.Percentage), mr)
}

// evictCompareConfigz reads the configuration as a kubelet running with it
// serves it at /configz (configzDoc: its internal configuration converted
// to v1beta1 by the kubelet's scheme, then JSON-encoded), the way the
// plugin reads a configz document, and compares the thresholds with the
// kubelet's.
func evictCompareConfigz(t *testing.T, i int, kc kubeletconfig.KubeletConfiguration, want []evictionapi.Threshold) {
	t.Helper()
	doc := configzDoc(t, i, kc)
	if doc == nil {
		return
	}
	cfg, err := evictjudge.ConfigFromConfigz(doc, rules.Defaults(37))
	if err != nil {
		t.Fatalf("case %d: configz %s: %v", i, doc, err)
	}
	var ws, gs []string
	for _, th := range want {
		ws = append(ws, evictKubeletThreshold(th))
	}
	for _, th := range cfg.Thresholds {
		gs = append(gs, evictPluginThreshold(th))
	}
	slices.Sort(ws)
	slices.Sort(gs)
	if !slices.Equal(ws, gs) || cfg.MaxPodGracePeriod != int64(kc.EvictionMaxPodGracePeriod) || cfg.Assumed {
		t.Fatalf("case %d: configz %s\nkubelet %v (max pod grace %d)\nplugin  %v (max pod grace %d, assumed %v)", i, doc, ws, kc.EvictionMaxPodGracePeriod, gs, cfg.MaxPodGracePeriod, cfg.Assumed)
	}
}
