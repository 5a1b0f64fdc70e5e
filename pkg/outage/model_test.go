package outage

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// ComputeZoneState's cases, worked by hand from node_lifecycle_controller.go.
func TestComputeZoneState(t *testing.T) {
	for _, c := range []struct {
		ready, notReady int
		want            string
	}{
		{0, 1, StateFull}, {0, 3, StateFull}, {1, 2, StateNormal}, // 2 not Ready is never partial
		{2, 3, StatePartial}, {3, 3, StateNormal}, // 0.6 and 0.5
		{5, 6, StateNormal},   // 6/11 = 0.545
		{9, 11, StatePartial}, // 11/20 = 0.55 exactly, in float32 as the controller
		{3, 0, StateNormal}, {0, 0, StateNormal},
	} {
		if got := ComputeZoneState(c.ready, c.notReady, 0.55); got != c.want {
			t.Errorf("ready %d notReady %d: %s, want %s", c.ready, c.notReady, got, c.want)
		}
	}
}

// The detection window: the last lease renewal R is up to 10.4 s before
// the failure; the pass that sees it is up to 5 s after R, and Ready turns
// Unknown at the first pass more than the grace (50 s) after that one.
func TestDetection(t *testing.T) {
	s := Settings{Condition: ConditionUnreachable}
	s.NodeMonitorGracePeriod, s.NodeMonitorPeriod, s.LeaseRenewInterval, s.LeaseRenewJitter = 50*time.Second, 5*time.Second, 10*time.Second, 0.04
	if w := Detection(s); w.Min != 39.6 || w.Max != 60 {
		t.Errorf("unreachable, 50 s: %v, want [39.6, 60]", w)
	}
	s.NodeMonitorGracePeriod = 40 * time.Second // 1.31
	if w := Detection(s); w.Min != 29.6 || w.Max != 50 {
		t.Errorf("unreachable, 40 s: %v, want [29.6, 50]", w)
	}
	s.NodeMonitorGracePeriod, s.NodeMonitorPeriod, s.LeaseRenewInterval = 2*time.Second, time.Second, time.Second // the e2e's settings
	if w := Detection(s); w.Min < 0.95 || w.Min > 0.97 || w.Max != 4 {
		t.Errorf("unreachable, 2 s/1 s: %v, want [0.96, 4]", w)
	}
	s.Condition = ConditionNotReady
	if w := Detection(s); w.Min != 0 || w.Max != 1 {
		t.Errorf("not-ready: %v, want [0, 1]", w)
	}
}

// One node of three fails: each kind of pod meets its fate.
func TestOneNodeFates(t *testing.T) {
	w := newWorld(node("a", "", "4"), node("b", "", "4"), node("c", "", "4"))
	web := w.rs("web", 2, "1")
	db := w.sts("db", 1)
	logs := w.ds("logs")
	w.pod("web-1", "a", web, "ReplicaSet")
	w.pod("web-2", "b", web, "ReplicaSet")
	w.pod("db-0", "a", db, "StatefulSet")
	w.pod("logs-a", "a", logs, "DaemonSet", corev1.Toleration{Key: TaintUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute})
	w.pod("bare", "a", nil, "")
	w.pod("quick", "a", nil, "", corev1.Toleration{Key: TaintUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: secsPtr(0)})
	w.pod("none", "a", nil, "", corev1.Toleration{Key: "other", Operator: corev1.TolerationOpExists})
	// The first matching toleration is the one used: Exists without
	// seconds comes before the 300 s default, so the pod stays.
	w.pod("first", "a", nil, "", append([]corev1.Toleration{{Operator: corev1.TolerationOpExists}}, defaults(300)...)...)
	w.pod("min", "a", nil, "", corev1.Toleration{Key: TaintUnreachable, Operator: corev1.TolerationOpExists, TolerationSeconds: secsPtr(60)})
	r := w.predict("a")
	if n := r.Nodes[0]; n.Tainted == nil || *n.Tainted != (Window{39.6, 60.1}) || !n.Certain {
		t.Fatalf("node a: %+v, want tainted [39.6, 60.1]", n)
	}
	want := map[string]struct {
		fate string
		w    *Window
	}{
		"web-1": {FateDeleted, &Window{339.6, 360.1}}, "db-0": {FateStuck, nil}, "logs-a": {FateStays, nil},
		"bare": {FateDeleted, &Window{339.6, 360.1}}, "quick": {FateDeleted, &Window{39.6, 60.1}}, "none": {FateDeleted, &Window{39.6, 60.1}},
		"first": {FateStays, nil}, "min": {FateDeleted, &Window{99.6, 120.1}},
	}
	for name, c := range want {
		p := r.pod(name)
		if p.Fate != c.fate || (c.w == nil) != (p.Deleted == nil) || (c.w != nil && !near(*p.Deleted, *c.w)) {
			t.Errorf("%s: %s %v (%s), want %s %v", name, p.Fate, p.Deleted, p.Toleration, c.fate, c.w)
		}
	}
	if p := r.pod("db-0"); p.Terminating == nil || !strings.Contains(p.Reason, "out-of-service") || !p.Certain {
		t.Errorf("db-0: %+v", p)
	}
	if len(r.Replacements) != 1 || r.Replacements[0].For != "default/web-1" || r.Replacements[0].Node == "" || r.Replacements[0].Node == "a" {
		t.Errorf("replacements: %+v", r.Replacements)
	}
	if !r.pod("web-1").Replaced || r.pod("bare").Replaced {
		t.Errorf("replaced flags wrong")
	}
}

func near(a, b Window) bool {
	d := func(x, y float64) bool { return x-y < 1e-6 && y-x < 1e-6 }
	return d(a.Min, b.Min) && d(a.Max, b.Max)
}

// A single zone of 5 loses 3: 3/5 = 0.6 not Ready makes it partially
// disrupted, and with 5 <= 50 nodes the controller stops tainting. At most
// one node (the first marked; 15.5 s of spread at 0.1/s) is tainted first.
func TestSmallZonePartialStops(t *testing.T) {
	w := newWorld(zoneNodes("n", "", 5)...)
	w.pod("p", "n-0", nil, "")
	r := w.predict("n-0", "n-1", "n-2")
	z := r.Zones[0]
	if z.State != StatePartial || z.Rate != 0 || z.NotReady != 3 {
		t.Fatalf("zone: %+v", z)
	}
	if r.Certain || r.Nodes[0].Tainted != nil || !strings.Contains(r.Nodes[0].Reason, "at most 3 of the 3") {
		t.Errorf("nodes: %+v", r.Nodes[0])
	}
	if p := r.pod("p"); p.Fate != FateStays || p.Certain {
		t.Errorf("pod: %+v", p)
	}
	if len(r.Warnings) == 0 || !strings.Contains(r.Warnings[0], "one zone") {
		t.Errorf("no single-zone warning: %v", r.Warnings)
	}
}

// Every node down: every zone fully disrupted, the taints come off.
func TestAllZonesDown(t *testing.T) {
	w := newWorld(node("a", "z1", "4"), node("b", "z2", "4"))
	w.pod("p", "a", nil, "")
	w.pod("now", "a", nil, "", corev1.Toleration{Key: "x", Operator: corev1.TolerationOpExists})
	r := w.predict("a", "b")
	if r.Zones[0].State != StateFull || r.Zones[1].State != StateFull {
		t.Fatalf("zones: %+v", r.Zones)
	}
	// A taint set during the pass that finds every zone down stays (the
	// controller removes what its node list showed): found by the oracle.
	if p := r.pod("p"); p.Fate != FateStays || p.Certain {
		t.Errorf("300 s pod: %+v", p)
	}
	if p := r.pod("now"); p.Fate != FateStays || p.Certain {
		t.Errorf("untolerated pod: %+v (may be deleted while the first node is tainted)", p)
	}
}

// A zone of 3 fully down while another is healthy: normal rate, one taint
// every 10 s; the zone goes Normal -> Full without a partial step (2 not
// Ready is never partial), so no limiter swap: the last by 60.1 + 2·10.
func TestFullZoneNormalRate(t *testing.T) {
	nodes := append(zoneNodes("a", "za", 3), zoneNodes("b", "zb", 3)...)
	w := newWorld(nodes...)
	r := w.predict("a-0", "a-1", "a-2")
	za := r.zone("za")
	if za.State != StateFull || za.Rate != 0.1 || strings.Join(za.Passes, ",") != "Normal,FullDisruption" {
		t.Fatalf("za: %+v", za)
	}
	for _, n := range r.Nodes {
		if n.Tainted == nil || !near(*n.Tainted, Window{39.6, 80.1}) {
			t.Errorf("%s: %v, want [39.6, 80.1]", n.Node, n.Tainted)
		}
	}
	if r.zone("zb").State != StateNormal {
		t.Errorf("zb: %+v", r.zone("zb"))
	}
}

// A zone of 60 (> 50) loses 40: partial at the secondary rate, 0.01/s; the
// limiter was swapped from 0.1, so 40 taints take up to 40·100 s.
func TestLargeZoneSecondaryRate(t *testing.T) {
	nodes := append(zoneNodes("a", "za", 60), zoneNodes("b", "zb", 60)...)
	var failed []string
	for i := range 40 {
		failed = append(failed, "a-"+itoa(i))
	}
	r := newWorld(nodes...).predict(failed...)
	za := r.zone("za")
	if za.State != StatePartial || za.Rate != 0.01 {
		t.Fatalf("za: %+v", za)
	}
	if n := r.Nodes[0]; n.Tainted == nil || !near(*n.Tainted, Window{39.6, 4060.1}) {
		t.Errorf("window %v, want [39.6, 4060.1]", n.Tainted)
	}
}

// An excluded node counts in no zone state but is tainted through its
// zone's queue.
func TestExcludeDisruption(t *testing.T) {
	nodes := zoneNodes("a", "za", 4)
	nodes[0].Labels[LabelExcludeDisruption] = ""
	r := newWorld(nodes...).predict("a-0")
	if z := r.Zones[0]; z.Nodes != 3 || z.NotReady != 0 || z.State != StateNormal {
		t.Errorf("zone: %+v", z)
	}
	if n := r.Nodes[0]; !n.Excluded || n.Tainted == nil {
		t.Errorf("node: %+v", n)
	}
}

// A budget of minAvailable 2 over 2 pods breaks from T=0 until the
// replacement is placed; a workload left with no pod elsewhere reaches 0.
func TestBudgetAndZero(t *testing.T) {
	w := newWorld(node("a", "", "4"), node("b", "", "4"), node("c", "", "4"))
	web := w.rs("web", 2, "1")
	w.pod("web-1", "a", web, "ReplicaSet")
	w.pod("web-2", "b", web, "ReplicaSet")
	w.pdb("web", 2)
	solo := w.rs("solo", 1, "1")
	w.pod("solo-1", "a", solo, "ReplicaSet")
	r := w.predict("a")
	if len(r.Budgets) != 1 || !r.Budgets[0].Broken || r.Budgets[0].HealthyMin != 1 || r.Budgets[0].BrokenUntil == nil || *r.Budgets[0].BrokenUntil != 360.1 {
		t.Fatalf("budgets: %+v", r.Budgets)
	}
	var solow, webw Workload
	for _, wl := range r.Workloads {
		switch wl.Name {
		case "default/solo":
			solow = wl
		case "default/web":
			webw = wl
		}
	}
	if !solow.ReachesZero || webw.AvailableMin != 1 || !webw.BudgetBroken || webw.BrokenUntil == nil {
		t.Errorf("workloads: %+v", r.Workloads)
	}
}

// A replacement that fits nowhere gets the scheduler's FitError words.
func TestReplacementFitsNowhere(t *testing.T) {
	w := newWorld(node("a", "", "4"), node("b", "", "1"))
	big := w.rs("big", 1, "3")
	w.pod("big-1", "a", big, "ReplicaSet")
	r := w.predict("a")
	if len(r.Replacements) != 1 || r.Replacements[0].Node != "" || !strings.HasPrefix(r.Replacements[0].Reason, "0/2 nodes are available:") {
		t.Fatalf("replacements: %+v", r.Replacements)
	}
	if !strings.Contains(r.Replacements[0].Reason, "Insufficient cpu") || !strings.Contains(r.Replacements[0].Reason, "untolerated taint") {
		t.Errorf("reason: %s", r.Replacements[0].Reason)
	}
}

// A manifest pod (never admitted) gets the admission's defaults, said so.
func TestManifestDefaults(t *testing.T) {
	w := newWorld(node("a", "", "4"), node("b", "", "4"))
	p := w.pod("m", "a", nil, "")
	p.CreationTimestamp.Time, p.Spec.Tolerations = time.Time{}, nil
	r := w.predict("a")
	if q := r.pod("m"); q.Fate != FateDeleted || q.Deleted.Min != 339.6 {
		t.Errorf("manifest pod: %+v", q)
	}
	if len(r.Warnings) == 0 || !strings.Contains(strings.Join(r.Warnings, " "), "DefaultTolerationSeconds") {
		t.Errorf("warnings: %v", r.Warnings)
	}
}

// not-ready: the next pass marks it; a StatefulSet pod's kubelet may still
// complete the deletion.
func TestNotReady(t *testing.T) {
	w := newWorld(node("a", "", "4"), node("b", "", "4"), node("c", "", "4"))
	w.in.Settings.Condition = ConditionNotReady
	db := w.sts("db", 1)
	w.pod("db-0", "a", db, "StatefulSet")
	r := w.predict("a")
	if n := r.Nodes[0]; n.Tainted == nil || !near(*n.Tainted, Window{0, 5.1}) || n.Taint != TaintNotReady+":NoExecute" {
		t.Errorf("node: %+v", n)
	}
	if p := r.pod("db-0"); p.Fate != FateStuck || p.Certain {
		t.Errorf("db-0: %+v", p)
	}
}
