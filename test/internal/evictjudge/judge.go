// Package evictjudge judges pkg/eviction's prediction for a node against
// what a real kubelet's eviction manager did on it, for the 1.37 in-process
// test and the recorded older releases alike: every determined step and
// grace period must match in every run, and every printed probability must
// be within chance.Tolerance of the measured frequency.
package evictjudge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/scale-preview/scale-preview/pkg/eviction"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/test/internal/chance"
	"github.com/scale-preview/scale-preview/test/versions/oraclegen/evictgen"
)

// Predict is the plugin's answer for release r from the API's view of the
// node (pods as v1.Pod JSON), the summary as kubectl get --raw prints it,
// both decoded strictly into the current types, and the kubelet's
// configuration as its /configz serves it (Configz).
func Predict(r rules.RuleSet, c evictgen.Config, rawPods []json.RawMessage, rawSummary json.RawMessage) (*eviction.Result, error) {
	pods := make([]*v1.Pod, len(rawPods))
	for i, raw := range rawPods {
		pods[i] = &v1.Pod{}
		if err := strict(raw, pods[i]); err != nil {
			return nil, fmt.Errorf("pod %d: %v", i, err)
		}
	}
	sum := &statsapi.Summary{}
	if err := strict(rawSummary, sum); err != nil {
		return nil, fmt.Errorf("summary: %v", err)
	}
	cfg, err := ConfigFromConfigz(Configz(c), r)
	if err != nil {
		return nil, err
	}
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: evictgen.NodeName}}
	return eviction.Predict(eviction.Input{Node: node, Pods: pods, Summary: sum, Config: cfg, Rules: r, Now: evictgen.Start})
}

// Configz is the document a kubelet running with c serves at /configz:
// the kubelet's own v1beta1 type, JSON-encoded as the configz handler
// does (omitempty drops an empty evictionHard).
func Configz(c evictgen.Config) []byte {
	kc := kubeletconfigv1beta1.KubeletConfiguration{EvictionHard: c.Hard, EvictionSoft: c.Soft, EvictionSoftGracePeriod: c.Grace,
		EvictionMinimumReclaim: c.MinReclaim, EvictionMaxPodGracePeriod: int32(c.MaxPodGrace), EnforceNodeAllocatable: c.EnforceNodeAllocatable}
	b, err := json.Marshal(map[string]any{"kubeletconfig": kc})
	if err != nil {
		panic(err) // maps of strings and numbers always marshal
	}
	return b
}

// ConfigFromConfigz reads a configz document as the plugin does (the
// plugin's source.ParseConfigz unwraps "kubeletconfig" the same way).
func ConfigFromConfigz(doc []byte, r rules.RuleSet) (eviction.Config, error) {
	var wrap struct {
		KubeletConfig json.RawMessage `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(doc, &wrap); err != nil {
		return eviction.Config{}, err
	}
	kc, err := eviction.DecodeKubeletConfiguration(wrap.KubeletConfig)
	if err != nil {
		return eviction.Config{}, err
	}
	cfg, err := eviction.ConfigFrom(kc, r.Kubelet)
	if err != nil {
		return eviction.Config{}, fmt.Errorf("the plugin rejects thresholds the kubelet accepts: %v", err)
	}
	return cfg, nil
}

func strict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// Outcome is one distinct result of a node's runs: what was killed, and in
// how many runs.
type Outcome struct {
	Kills map[string]evictgen.Kill
	Runs  int
}

// Tally counts what was compared.
type Tally struct {
	Determined int // determined fates compared (per run)
	Judged     int // printed probabilities judged
	Off        int // probabilities off beyond chance
}

// Add sums tallies.
func (t *Tally) Add(o Tally) {
	t.Determined += o.Determined
	t.Judged += o.Judged
	t.Off += o.Off
}

// Judge compares the prediction with the outcomes of the runs and reports
// each disagreement through errorf (what names the node). racesVary says
// the kubelet met its thresholds in map order in every run; when a
// recording fixed that order, the odds the plugin prints for signals met
// together are not judged.
func Judge(pred *eviction.Result, outcomes []Outcome, what string, racesVary bool, errorf func(format string, args ...any)) Tally {
	return JudgeNamed(pred, outcomes, what, racesVary, func(pod string) string { return pod[len("ns/"):] }, errorf)
}

// JudgeNamed is Judge where the kills name each pod name(namespace/name).
func JudgeNamed(pred *eviction.Result, outcomes []Outcome, what string, racesVary bool, name func(string) string, errorf func(format string, args ...any)) Tally {
	judgeCount(pred, outcomes, what, errorf)
	var tally Tally
	freq := map[string]int{}
	runs := 0
	for _, o := range outcomes {
		runs += o.Runs
		for _, c := range pred.Order {
			name := name(c.Pod)
			k, killed := o.Kills[name]
			if killed {
				freq[name] += o.Runs
			}
			if !c.Certain {
				continue
			}
			tally.Determined += o.Runs
			switch {
			case c.Step == 0 && killed:
				errorf("%s: %s predicted to stay, the kubelet evicted it in sync %d", what, name, k.Step)
			case c.Step > 0 && !killed:
				errorf("%s: %s predicted evicted in sync %d, the kubelet kept it", what, name, c.Step)
			case c.Step > 0 && k.Step != c.Step:
				errorf("%s: %s predicted evicted in sync %d, the kubelet evicted it in sync %d", what, name, c.Step, k.Step)
			case killed && len(c.GraceAlternatives) == 0 && c.GracePeriodSeconds != nil && *c.GracePeriodSeconds != k.Grace:
				errorf("%s: %s predicted grace %ds, the kubelet gave %ds", what, name, *c.GracePeriodSeconds, k.Grace)
			}
		}
	}
	if pred.Certain || !racesVary && SignalRace(pred) {
		return tally
	}
	for _, c := range pred.Order {
		if c.Certain {
			continue
		}
		name := name(c.Pod)
		tally.Judged++
		if chance.BeyondNoise(freq[name], runs, c.EvictProbability) {
			tally.Off++
			errorf("%s: %s printed %.2f, measured %d of %d", what, name, c.EvictProbability, freq[name], runs)
		}
	}
	return tally
}

// SignalRace: several signals met at once whose choice is map order; the
// printed odds are a stated assumption, not judged.
func SignalRace(r *eviction.Result) bool {
	for _, u := range r.Uncertain {
		if strings.HasSuffix(u, "equal odds)") {
			return true
		}
	}
	return false
}

// judgeCount: when every run evicted as many pods (local-storage
// evictions included, as in cut), cut and victims must hold that many.
func judgeCount(pred *eviction.Result, outcomes []Outcome, what string, errorf func(format string, args ...any)) {
	count := -1
	for _, o := range outcomes {
		if count >= 0 && len(o.Kills) != count {
			return // the count varies: cut is the expected number, rounded
		}
		count = len(o.Kills)
	}
	if count >= 0 && (pred.Cut != count || len(pred.Victims) != count) {
		errorf("%s: the kubelet evicted %d pod(s) in every run; the plugin's cut is %d and victims %v", what, count, pred.Cut, pred.Victims)
	}
}

// JudgeFreshSummary: the harness's summary is the node's own, taken at
// the prediction's time; a prediction that doubts it is wrong.
func JudgeFreshSummary(pred *eviction.Result, what string, errorf func(format string, args ...any)) {
	for _, u := range pred.Uncertain {
		if strings.Contains(u, "summary is more likely stale") || strings.Contains(u, "out of date") {
			errorf("%s: the summary is current and the node's, the plugin doubts it: %s", what, u)
		}
	}
}
