package engine

import (
	"math"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// A worked example (checked against the real controller):
// scale 6 -> 3 deletes p6 (unassigned), p3 (not ready), p1 (ready most
// recently); p2's two restarts never matter.
func TestWorkedExample(t *testing.T) {
	pods := []Pod{
		newPod("p1", "c1").node("n1").readyAt(at("11:00:00")).createdAt(at("10:59:50")).pod(),
		newPod("p2", "a2").node("n1").readyAt(at("09:00:00")).restarts(2).createdAt(at("08:59:40")).pod(),
		newPod("p3", "d3").node("n2").notReady().createdAt(at("11:58:00")).pod(),
		newPod("p4", "b4").node("n3").readyAt(at("09:10:00")).createdAt(at("09:09:00")).pod(),
		newPod("p5", "e5").node("n2").readyAt(at("05:00:00")).cost("100").createdAt(at("04:59:00")).pod(),
		newPod("p6", "f6").phase(corev1.PodPending).createdAt(at("11:59:30")).pod(),
	}
	related := map[string]int{"n1": 2, "n2": 2, "n3": 1, "": 1}
	res := Predict(Input{Candidates: pods, Related: related, Delete: 3, Now: now, Rules: rules37(t)})
	var order []string
	for _, p := range res.Order {
		order = append(order, p.Pod.Name)
	}
	if want := []string{"p6", "p3", "p1", "p2", "p4", "p5"}; !slices.Equal(order, want) {
		t.Fatalf("order = %v, want %v", order, want)
	}
	if !res.Certain {
		t.Fatal("every fate is determined here")
	}
	expectRule(t, byName(res, "p6").Next, Unassigned, "")
	expectRule(t, byName(res, "p3").Next, Readiness, "")
	expectRule(t, byName(res, "p1").Next, ReadyTime, ByBucket)
	expectRule(t, byName(res, "p2").Next, Colocation, "")
	expectRule(t, byName(res, "p4").Next, DeletionCost, "")
	// The boundary pair: victim p1 against the first survivor p2.
	b := byName(res, "p1").Boundary
	expectRule(t, b, ReadyTime, ByBucket)
	if b.A != "60m (bucket 41)" || b.B != "3h (bucket 43)" {
		t.Fatalf("boundary values = %q vs %q", b.A, b.B)
	}
}

func at(hms string) time.Time {
	t, err := time.Parse("2006-01-02T15:04:05Z", "2025-01-01T"+hms+"Z")
	if err != nil {
		panic(err)
	}
	return t
}

func expectRule(t *testing.T, d *Decision, r Rule, how How) {
	t.Helper()
	if d == nil {
		t.Fatalf("no decision, want %s", r.ID())
	}
	if d.Rule != r || (how != "" && d.How != how) {
		t.Fatalf("decided by %s/%s (%s vs %s), want %s/%s", d.Rule.ID(), d.How, d.A, d.B, r.ID(), how)
	}
}

// One test per rule: two pods that differ only on that rule; the first of
// the pair must die and the decision must name the rule.
func TestEachRuleDecides(t *testing.T) {
	base := func(name, uid string) pb {
		return newPod(name, uid).node("n1").readyFor(10 * time.Hour).created(20 * time.Hour)
	}
	cases := []struct {
		name       string
		gone, kept pb
		rank       map[string]int
		rule       Rule
		how        How
	}{
		{"R1 unassigned before assigned", base("a", "2").node(""), base("b", "1").node("n9"), nil, Unassigned, ""},
		{"R2 pending before running", base("a", "2").phase(corev1.PodPending), base("b", "1"), nil, Phase, ""},
		{"R2 unknown before running", base("a", "2").phase(corev1.PodUnknown), base("b", "1"), nil, Phase, ""},
		{"R2 empty phase counts as pending", newPod("a", "2").node("n1").phase(""), newPod("b", "1").node("n1").phase(corev1.PodUnknown), nil, Phase, ""},
		{"R3 not ready before ready", newPod("a", "2").node("n1").notReady().created(20 * time.Hour), base("b", "1"), nil, Readiness, ""},
		{"R4 lower cost first", base("a", "2").cost("-5"), base("b", "1"), nil, DeletionCost, ""},
		{"R5 crowded node first", base("a", "2").node("busy"), base("b", "1").node("quiet"), map[string]int{"busy": 3, "quiet": 1}, Colocation, ""},
		{"R6 recently ready first", base("a", "2").readyFor(time.Hour), base("b", "1"), nil, ReadyTime, ByBucket},
		{"R7 more restarts first", base("a", "2").restarts(3), base("b", "1").restarts(1), nil, Restarts, ByRegular},
		{"R7b sidecar restarts break a regular tie", base("a", "2").restarts(1).sidecarRestarts(4), base("b", "1").restarts(1), nil, Restarts, BySidecar},
		{"R8 newer first", base("a", "2").created(time.Hour), base("b", "1"), nil, CreationTime, ByBucket},
		{"R8 same bucket: lower UID first", base("a", "1").created(20*time.Hour + time.Minute), base("b", "2"), nil, CreationTime, ByUID},
		{"R6 same bucket: lower UID first", base("a", "1").readyFor(10*time.Hour + time.Minute), base("b", "2"), nil, ReadyTime, ByUID},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, flip := range []bool{false, true} {
				pods := []Pod{tc.gone.pod(), tc.kept.pod()}
				if flip {
					pods[0], pods[1] = pods[1], pods[0]
				}
				res := Predict(Input{Candidates: pods, Related: tc.rank, Delete: 1, Now: now, Rules: rules37(t)})
				if got := names(res); !slices.Equal(got, []string{"a"}) {
					t.Fatalf("victims %v, want [a]", got)
				}
				expectRule(t, res.Order[0].Boundary, tc.rule, tc.how)
				if !res.Order[0].Certain || !res.Order[1].Certain {
					t.Fatal("want certain")
				}
			}
		})
	}
}

// Earlier rules beat later ones, in the directions people get wrong.
func TestRulePrecedence(t *testing.T) {
	r := rules37(t)
	cases := []struct {
		name       string
		gone, kept Pod
		related    map[string]int
		rule       Rule
	}{
		{"not ready with cost 1e6 dies before ready with cost -5",
			newPod("a", "1").node("n").notReady().cost("1000000").pod(), newPod("b", "2").node("n").readyFor(time.Hour).cost("-5").pod(), nil, Readiness},
		{"cost -5 on a quiet node dies before cost 0 on a crowded one",
			newPod("a", "1").node("q").readyFor(time.Hour).cost("-5").pod(), newPod("b", "2").node("c").readyFor(time.Hour).pod(), map[string]int{"q": 1, "c": 3}, DeletionCost},
		{"UID beats 100 restarts inside one ready bucket",
			newPod("a", "1").node("n").readyFor(10 * time.Hour).pod(), newPod("b", "2").node("n").readyFor(10*time.Hour + 5*time.Second).restarts(100).pod(), nil, ReadyTime},
		{"restarts decide when ready in the same second",
			newPod("a", "2").node("n").readyFor(10 * time.Hour).restarts(5).pod(), newPod("b", "1").node("n").readyFor(10 * time.Hour).pod(), nil, Restarts},
		{"restarts decide between two not-ready pods",
			newPod("a", "2").node("n").notReady().restarts(2).pod(), newPod("b", "1").node("n").notReady().pod(), nil, Restarts},
		{"unassigned beats rank",
			newPod("a", "2").phase(corev1.PodPending).pod(), newPod("b", "1").node("c").phase(corev1.PodPending).pod(), map[string]int{"c": 9, "": 1}, Unassigned},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := Predict(Input{Candidates: []Pod{tc.kept, tc.gone}, Related: tc.related, Delete: 1, Now: now, Rules: r})
			if got := names(res); !slices.Equal(got, []string{"a"}) {
				t.Fatalf("victims %v, want [a]", got)
			}
			expectRule(t, res.Order[0].Boundary, tc.rule, "")
		})
	}
}

func TestDeletionCostParsing(t *testing.T) {
	valid := map[string]int32{"0": 0, "-0": 0, "10": 10, "-10": -10, "-007": -7, "2147483647": math.MaxInt32, "-2147483648": math.MinInt32}
	for raw, want := range valid {
		if got, invalid := ParseDeletionCost(raw); invalid || got != want {
			t.Errorf("%q -> %d invalid=%v, want %d", raw, got, invalid, want)
		}
	}
	for _, raw := range []string{"+10", "010", "2147483648", "-2147483649", " 5", "5 ", "1e3", "0x10", "", "abc", "1_000", "-"} {
		if got, invalid := ParseDeletionCost(raw); !invalid || got != 0 {
			t.Errorf("%q -> %d invalid=%v, want invalid 0", raw, got, invalid)
		}
	}
	// An invalid cost counts as 0: "+5" does not protect a pod against cost 0... nor does it lose to it.
	a := newPod("a", "1").node("n").readyFor(time.Hour).cost("+5").pod()
	b := newPod("b", "2").node("n").readyFor(time.Hour).cost("1").pod()
	res := Predict(Input{Candidates: []Pod{b, a}, Delete: 1, Now: now, Rules: rules37(t)})
	if got := names(res); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("victims %v, want [a] (invalid cost counts as 0 < 1)", got)
	}
}

// A standalone RS (no related pods) ranks every pod 0: co-location is ignored.
func TestNoRelatedPodsMeansRankZero(t *testing.T) {
	a := newPod("a", "2").node("crowded").readyFor(time.Hour).pod()
	b := newPod("b", "1").node("crowded").readyFor(time.Hour + time.Second).pod()
	c := newPod("c", "3").node("alone").readyFor(time.Hour + 2*time.Second).pod()
	res := Predict(Input{Candidates: []Pod{a, b, c}, Delete: 1, Now: now, Rules: rules37(t)})
	if got := names(res); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("victims %v, want [b] (lowest UID; ranks all 0)", got)
	}
	res = Predict(Input{Candidates: []Pod{a, b, c}, Related: map[string]int{"crowded": 2, "alone": 1}, Delete: 1, Now: now, Rules: rules37(t)})
	if got := names(res); !slices.Equal(got, []string{"b"}) || res.Order[0].Boundary.Rule != ReadyTime {
		t.Fatalf("victims %v", got)
	}
	res = Predict(Input{Candidates: []Pod{a, b, c}, Related: map[string]int{"crowded": 2, "alone": 1}, Delete: 2, Now: now, Rules: rules37(t)})
	if got := names(res); !slices.Equal(got, []string{"b", "a"}) {
		t.Fatalf("victims %v, want [b a] (crowded node first)", got)
	}
}

// When every pod goes, the controller does not sort.
func TestDeleteAllDoesNotSort(t *testing.T) {
	pods := []Pod{newPod("a", "1").node("n").readyFor(time.Hour).pod(), newPod("b", "2").node("n").readyFor(time.Hour).pod()}
	res := Predict(Input{Candidates: pods, Delete: 2, Now: now, Rules: rules37(t)})
	if !res.Unsorted || res.Victims != 2 || !res.Certain {
		t.Fatalf("%+v", res)
	}
}

func TestScaleUpDeletesNothing(t *testing.T) {
	pods := []Pod{newPod("a", "1").pod()}
	res := Predict(Input{Candidates: pods, Delete: 0, Now: now, Rules: rules37(t)})
	if res.Victims != 0 || len(res.Order) != 1 || res.Order[0].Delete {
		t.Fatalf("%+v", res)
	}
}

// More than 500 to delete: rounds of 500, each re-ranked on what is left.
// 600 pods scaled to 0: the worst 500 go first, sorted; then the last 100.
func TestBurstRounds(t *testing.T) {
	var pods []Pod
	related := map[string]int{}
	for i := 0; i < 6; i++ {
		node := string(rune('a' + i))
		n := 100
		for j := 0; j < n; j++ {
			name := node + "-" + string(rune('0'+j/10)) + string(rune('0'+j%10))
			pods = append(pods, newPod(name, name).node(node).readyFor(time.Duration(i+1)*time.Hour*24).pod())
			related[node]++
		}
	}
	res := Predict(Input{Candidates: pods, Related: related, Delete: 600, Now: now, Rules: rules37(t)})
	if res.Rounds != 2 || res.Victims != 600 {
		t.Fatalf("rounds %d victims %d", res.Rounds, res.Victims)
	}
	// Round 1 takes the 500 most recently ready (nodes a..e), not node f.
	for _, p := range res.Order[:500] {
		if p.Pod.Node == "f" || p.Round != 1 {
			t.Fatalf("round-1 victim %s on %s round %d", p.Pod.Name, p.Pod.Node, p.Round)
		}
	}
	if res.Order[500].Round != 2 {
		t.Fatal("want a second round")
	}
	// Smaller burst: re-ranking between rounds matters. Node x has 3 pods,
	// y has 2. Deleting 3 with burst 2: round 1 takes two from x (rank 3),
	// then x and y both rank... x has 1 left (rank 1), y rank 2: y goes.
	small := []Pod{
		newPod("x1", "1").node("x").readyFor(time.Hour).pod(),
		newPod("x2", "2").node("x").readyFor(time.Hour).pod(),
		newPod("x3", "3").node("x").readyFor(time.Hour).pod(),
		newPod("y1", "4").node("y").readyFor(time.Hour).pod(),
		newPod("y2", "5").node("y").readyFor(time.Hour).pod(),
	}
	res = Predict(Input{Candidates: small, Related: map[string]int{"x": 3, "y": 2}, Delete: 3, Burst: 2, Now: now, Rules: rules37(t)})
	if got := names(res); !slices.Equal(got, []string{"x1", "x2", "y1"}) {
		t.Fatalf("victims %v, want [x1 x2 y1]", got)
	}
}

// No candidates: Order stays nil (JSON null), as it always was.
func TestNoCandidatesNilOrder(t *testing.T) {
	for _, del := range []int{0, 1} {
		if res := Predict(Input{Delete: del, Now: now, Rules: rules37(t)}); res.Order != nil {
			t.Fatalf("delete %d: Order %#v, want nil", del, res.Order)
		}
	}
}
