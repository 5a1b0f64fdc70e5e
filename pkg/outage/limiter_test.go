package outage

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// SwapLimiter over the states, worked by hand from rate_limited_queue.go
// (returns early when limiter.QPS() == newQPS) and client-go's
// fakeNeverRateLimiter (QPS() is 1), for a zone of 5 (small: partial is 0).
func TestWalkLimiter(t *testing.T) {
	s := Settings{}
	s.LargeClusterSizeThreshold, s.SecondaryNodeEvictionRate = 50, 0.01
	for _, c := range []struct {
		rate   float64
		passes []string
		want   limiter
	}{
		{0.1, []string{StateNormal, StateFull}, limiter{}}, // 0.1 == 0.1: no swap
		{0.1, []string{StateNormal, StatePartial, StateFull}, limiter{swapped: true}},
		{1, []string{StateNormal, StatePartial, StateFull}, limiter{stuck: true}},            // never -> 1: skipped
		{1, []string{StatePartial, StateFull}, limiter{stuck: true, neverFirst: true}},       // stopped before the failure
		{0.5, []string{StatePartial, StateFull}, limiter{swapped: true, neverFirst: true}},   // never -> 0.5 swaps
		{1.0000000001, []string{StateNormal, StatePartial, StateFull}, limiter{stuck: true}}, // float32(rate) == 1
	} {
		s.NodeEvictionRate = c.rate
		if got := walkLimiter(s, c.passes, 5); got != c.want {
			t.Errorf("rate %v %v: %+v, want %+v", c.rate, c.passes, got, c.want)
		}
	}
}

// Rate exactly 1/s, a zone of 5 fully down while another is healthy: if
// its nodes are marked in several passes it goes Normal -> Partial (rate
// 0, never) -> Full (1/s, skipped): the untainted nodes stay so (the e2e's
// run at 09:15). Marked in one pass, Normal -> Full at 1/s. Undetermined.
func TestRateOneAfterPauseMayStick(t *testing.T) {
	w := newWorld(append(zoneNodes("a", "za", 5), zoneNodes("b", "zb", 3)...)...)
	w.in.Settings.NodeEvictionRate = 1
	w.pod("p", "a-0", nil, "", defaults(9)...)
	r := w.predict("a-0", "a-1", "a-2", "a-3", "a-4")
	for _, n := range r.Nodes {
		if n.Tainted != nil || n.Certain || !strings.Contains(n.Reason, "SwapLimiter skips") {
			t.Errorf("%s: %+v", n.Node, n)
		}
	}
	// Without the pause: one taint a second, 4 after the first, from 39.6..60.1.
	if p := r.pod("p"); p.Fate != FateStays || p.Certain || !strings.Contains(p.Reason, "T+48.6..73.1s") {
		t.Errorf("pod: %+v", p)
	}
	// At 0.5/s the pause only delays: certain, one interval more.
	w.in.Settings.NodeEvictionRate = 0.5
	r = w.predict("a-0", "a-1", "a-2", "a-3", "a-4")
	if n := r.Nodes[0]; n.Tainted == nil || !n.Certain || !near(*n.Tainted, Window{39.6, 70.1}) {
		t.Errorf("0.5/s: %+v, want [39.6, 70.1]", n)
	}
}

// Rate exactly 1/s and a zone of 5 already partially disrupted (3 not
// Ready: rate 0, never) before 2 more fail: Full now, 1/s, but the swap
// from never is skipped: certainly no taint, the pods stay.
func TestRateOneAlreadyStopped(t *testing.T) {
	nodes := append(zoneNodes("a", "za", 5), zoneNodes("b", "zb", 3)...)
	for _, n := range nodes[2:5] {
		n.Status.Conditions[0].Status = "Unknown"
	}
	w := newWorld(nodes...)
	w.in.Settings.NodeEvictionRate = 1
	w.pod("p", "a-0", nil, "", defaults(9)...)
	r := w.predict("a-0", "a-1")
	if z := r.zone("za"); z.State != StateFull || z.Rate != 0 {
		t.Errorf("zone: %+v", z)
	}
	if n := r.Nodes[0]; n.Tainted != nil || !n.Certain || !strings.Contains(n.Reason, "keeps the stopped limiter") {
		t.Errorf("node: %+v", n)
	}
	if p := r.pod("p"); p.Fate != FateStays || !p.Certain {
		t.Errorf("pod: %+v", p)
	}
}

// Every zone down (the e2e's scenario 3: one zone of 4, all fail): the
// taint set in the pass that finds every zone down stays on one node, so
// each node's pods may be deleted at that taint + their seconds.
func TestAllDownFirstTaintStays(t *testing.T) {
	w := newWorld(zoneNodes("a", "za", 4)...)
	w.pod("p", "a-0", nil, "", defaults(9)...)
	w.pod("d", "a-1", nil, "", defaults(0)[0], corev1.Toleration{Key: TaintUnreachable, Operator: corev1.TolerationOpExists})
	r := w.predict("a-0", "a-1", "a-2", "a-3")
	if n := r.Nodes[0]; n.Tainted != nil || n.Certain || !strings.Contains(n.Reason, "at most one of zone za's 4") {
		t.Errorf("node: %+v", n)
	}
	if p := r.pod("p"); p.Fate != FateStays || p.Certain || !strings.Contains(p.Reason, "deleted at T+48.6..69.1s") {
		t.Errorf("pod p: %+v", p)
	}
	if p := r.pod("d"); p.Fate != FateStays || !p.Certain {
		t.Errorf("pod d (no seconds): %+v", p)
	}
}

// Every zone down, but zone za's limiter was stopped before (3 of 5 not
// Ready, small: rate 0): no taint there in the last pass; zb's node may.
func TestAllDownStoppedZoneTaintsNone(t *testing.T) {
	nodes := append(zoneNodes("a", "za", 5), zoneNodes("b", "zb", 1)...)
	for _, n := range nodes[2:5] {
		n.Status.Conditions[0].Status = "Unknown"
	}
	w := newWorld(nodes...)
	w.pod("pa", "a-0", nil, "", defaults(9)...)
	w.pod("pb", "b-0", nil, "", defaults(9)...)
	r := w.predict("a-0", "a-1", "b-0")
	if p := r.pod("pa"); p.Fate != FateStays || !p.Certain {
		t.Errorf("pa: %+v", p)
	}
	if p := r.pod("pb"); p.Fate != FateStays || p.Certain {
		t.Errorf("pb: %+v", p)
	}
}
