package eviction

import (
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/scale-preview/scale-preview/pkg/rules"
	"math"
	"strings"
	"testing"
)

func TestMemoryOrderAndCut(t *testing.T) {
	n := newTestNode(50 * mi) // below the 100Mi hard threshold
	n.add(testPod("guaranteed", 0, 512*mi, 512*mi), 400*mi)
	n.add(testPod("over", 0, 100*mi, 0), 300*mi)      // exceeds its request by 200Mi
	n.add(testPod("besteffort", 0, 0, 0), 30*mi)      // exceeds (0 request) by 30Mi
	n.add(testPod("important", 1000, 0, 0), 900*mi)   // exceeds, but higher priority
	n.add(testPod("critical", 2000001000, 0, 0), 2e9) // never evicted
	in := n.input(t, map[string]string{"memory.available": "100Mi"})
	in.Config.Thresholds[0].MinReclaim = &value{Text: "400Mi", Quantity: qty("400Mi")}
	res, err := Predict(in)
	if err != nil {
		t.Fatal(err)
	}
	// Exceeding first; among them priority 0 before 1000 (critical, 2e9, last);
	// then by usage above request. Target 100Mi+400Mi: 50+300=350, +30=380,
	// then the important one: 1280 >= 500.
	want := "[over:1 besteffort:2 important:3 critical:0 guaranteed:0]"
	if got := names(res.Order); got != want {
		t.Errorf("order %s, want %s", got, want)
	}
	if res.Order[0].DecidedBy.Rule != RuleUsage || res.Order[1].DecidedBy.Rule != RulePriority || res.Order[3].DecidedBy.Rule != RuleExceeds {
		t.Errorf("rules %+v %+v %+v", res.Order[0].DecidedBy, res.Order[1].DecidedBy, res.Order[3].DecidedBy)
	}
	if !res.Certain || res.Cut != 3 || len(res.Never) != 1 {
		t.Errorf("certain=%v cut=%d never=%v uncertain=%v", res.Certain, res.Cut, res.Never, res.Uncertain)
	}
	if g := res.Order[0].GracePeriodSeconds; g == nil || *g != 1 {
		t.Errorf("hard eviction grace = %v, want 1", g)
	}
}

func TestTieProbabilities(t *testing.T) {
	n := newTestNode(90 * mi)
	for _, name := range []string{"a", "b", "c"} {
		n.add(testPod(name, 0, 0, 0), 20*mi) // identical: exact ties
	}
	res, err := Predict(n.input(t, map[string]string{"memory.available": "100Mi"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.Certain {
		t.Fatal("exact ties reported certain")
	}
	for _, c := range res.Order {
		if math.Abs(c.EvictProbability-1.0/3) > 1e-9 || c.TieGroup == nil {
			t.Errorf("%s: p=%v group=%v, want 1/3 in a tie group", c.Pod, c.EvictProbability, c.TieGroup)
		}
	}
}

func TestMismatchedSummary(t *testing.T) {
	n := newTestNode(90 * mi)
	n.add(testPod("a", 0, 0, 0), 20*mi)
	n.summary.Node.NodeName = "other"
	if _, err := Predict(n.input(t, nil)); err == nil || !strings.Contains(err.Error(), "other") {
		t.Errorf("summary of another node: err %v", err)
	}
	n.summary.Node.NodeName = "n1"
	n.pods = append(n.pods, testPod("unseen", 0, 0, 0))
	res, err := Predict(n.input(t, nil))
	if err != nil || res.Certain {
		t.Errorf("pod missing from the summary: err %v certain %v", err, res != nil && res.Certain)
	}
}

func TestRejectedThresholds(t *testing.T) {
	r := rules.Defaults(28)
	for _, c := range []struct {
		hard, soft, grace map[string]string
		want              string
	}{
		{hard: map[string]string{"memory.avail": "1Mi"}, want: "unsupported eviction signal"},
		{hard: map[string]string{"containerfs.available": "10%"}, want: "unsupported"},
		{hard: map[string]string{"memory.available": "-1Mi"}, want: "must be positive"},
		{hard: map[string]string{"nodefs.available": "101%"}, want: "<= 100%"},
		{soft: map[string]string{"memory.available": "1Gi"}, want: "grace period must be specified"},
		{soft: map[string]string{"memory.available": "1Gi"}, grace: map[string]string{"memory.available": "-1s"}, want: "positive"},
	} {
		_, err := ConfigFrom(&KubeletConfiguration{EvictionHard: c.hard, EvictionSoft: c.soft, EvictionSoftGracePeriod: c.grace}, r.Kubelet)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v %v: err %v, want %q", c.hard, c.soft, c.grace, err, c.want)
		}
	}
}

func qty(s string) *resource.Quantity { q := resource.MustParse(s); return &q }
