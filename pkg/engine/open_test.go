package engine

import (
	"math"
	"slices"
	"testing"
	"time"
)

// Two pods equal on every rule, created and ready in the same second: the
// controller's unstable sort decides; each goes with probability 1/2.
func TestFullTie(t *testing.T) {
	a := newPod("a", "1").node("n").readyFor(time.Hour).created(2 * time.Hour).pod()
	b := newPod("b", "2").node("n").readyFor(time.Hour).created(2 * time.Hour).pod()
	c := newPod("c", "3").node("n").notReady().pod()
	res := Predict(Input{Candidates: []Pod{a, b, c}, Delete: 2, Now: now, Rules: rules37(t)})
	if res.Certain {
		t.Fatal("outcome is open")
	}
	if p := byName(res, "c"); !p.Certain || !p.Delete || p.Boundary.Rule != Readiness {
		t.Fatalf("c must certainly go first (not ready): %+v", p)
	}
	for _, n := range []string{"a", "b"} {
		if p := byName(res, n); p.Certain || p.Probability != 0.5 {
			t.Fatalf("%s: certain=%v p=%v, want open 0.5", n, p.Certain, p.Probability)
		}
	}
	if len(res.Contenders) != 1 || !res.Contenders[0].Exact || res.Contenders[0].Delete != 1 || res.Contenders[0].Rule != Tie ||
		!slices.Equal(res.Contenders[0].Pods, []string{"a", "b"}) {
		t.Fatalf("contenders %+v", res.Contenders)
	}
}

// Three tied pods, two go: 2/3 each.
func TestFullTieThreeChooseTwo(t *testing.T) {
	var pods []Pod
	for _, n := range []string{"x", "y", "z"} {
		pods = append(pods, newPod(n, n).node("n").notReady().created(time.Hour).pod())
	}
	res := Predict(Input{Candidates: pods, Delete: 2, Now: now, Rules: rules37(t)})
	for _, p := range res.Order {
		if math.Abs(p.Probability-2.0/3) > 1e-9 || p.Certain {
			t.Fatalf("%s p=%v", p.Pod.Name, p.Probability)
		}
	}
}

// The non-transitive case: A and B ready in the same second, C a second later in the same
// bucket, UIDs A < C < B, B has more restarts: A<C, C<B, B<A. The outcome
// depends on the input order; the engine must say so and estimate it.
func TestIntransitiveTriple(t *testing.T) {
	ready := now.Add(-10 * time.Hour)
	a := newPod("a", "1").node("n").readyAt(ready).pod()
	b := newPod("b", "3").node("n").readyAt(ready).restarts(5).pod()
	c := newPod("c", "2").node("n").readyAt(ready.Add(time.Second)).pod()
	cmp := Comparator{Rules: rules37(t), Now: now}
	if !cmp.Less(&a, &c) || !cmp.Less(&c, &b) || !cmp.Less(&b, &a) {
		t.Fatal("expected the cycle a<c<b<a")
	}
	res := Predict(Input{Candidates: []Pod{a, b, c}, Delete: 1, Now: now, Rules: rules37(t), Seed: 1})
	if res.Certain || len(res.Contenders) != 1 || res.Contenders[0].Exact || res.Contenders[0].Rule != ReadyTime {
		t.Fatalf("want one simulated contender group, got %+v", res.Contenders)
	}
	sum := 0.0
	for _, p := range res.Order {
		if p.Certain {
			t.Fatalf("%s cannot be certain", p.Pod.Name)
		}
		sum += p.Probability
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Fatalf("probabilities sum to %v, want 1", sum)
	}
}

// D and E created in the same second (tied), F a second earlier in the same
// bucket, UIDs D < F < E: intransitive at the creation-time rule.
func TestIntransitiveCreation(t *testing.T) {
	created := now.Add(-5 * time.Hour)
	d := newPod("d", "1").node("n").notReady().createdAt(created).pod()
	e := newPod("e", "3").node("n").notReady().createdAt(created).pod()
	f := newPod("f", "2").node("n").notReady().createdAt(created.Add(-time.Second)).pod()
	res := Predict(Input{Candidates: []Pod{d, e, f}, Delete: 1, Now: now, Rules: rules37(t), Seed: 1})
	if res.Certain || len(res.Contenders) != 1 || res.Contenders[0].Rule != CreationTime || res.Contenders[0].Exact {
		t.Fatalf("contenders %+v", res.Contenders)
	}
}

// A tie far from the cut does not make anything uncertain.
func TestTieAwayFromCutIsCertain(t *testing.T) {
	a := newPod("a", "1").node("n").readyFor(time.Hour).created(2 * time.Hour).pod()
	b := newPod("b", "2").node("n").readyFor(time.Hour).created(2 * time.Hour).pod()
	c := newPod("c", "3").phase("Pending").pod()
	res := Predict(Input{Candidates: []Pod{a, b, c}, Delete: 1, Now: now, Rules: rules37(t)})
	if !res.Certain || !slices.Equal(names(res), []string{"c"}) {
		t.Fatalf("victims %v certain %v", names(res), res.Certain)
	}
}

// A pod ready 50m ago (bucket 41) dies before one ready 80m ago (bucket 42)
// despite a higher UID; once the first crosses into bucket 42 the UID
// decides instead. StableUntil is that moment.
func TestStableUntil(t *testing.T) {
	a := newPod("a", "b").node("n").readyFor(50 * time.Minute).pod()
	b := newPod("b", "a").node("n").readyFor(80 * time.Minute).pod()
	in := Input{Candidates: []Pod{a, b}, Delete: 1, Now: now, Rules: rules37(t)}
	until, lower := StableUntil(in)
	if until == nil || lower {
		t.Fatalf("until %v lower %v", until, lower)
	}
	want := now.Add(-50 * time.Minute).Add(1 << 42)
	if d := until.Sub(want); d < -time.Millisecond || d > time.Millisecond {
		t.Fatalf("stableUntil %v, want about %v", until, want)
	}
	at := func(t time.Time) []string { in.Now = t; return names(Predict(in)) }
	if got := at(until.Add(-time.Second)); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("1s before: %v", got)
	}
	if got := at(until.Add(time.Second)); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("1s after: %v", got)
	}
	// Decided by readiness: no age can change it.
	c := newPod("c", "c").node("n").notReady().pod()
	if u, _ := StableUntil(Input{Candidates: []Pod{a, c}, Delete: 1, Now: now, Rules: rules37(t)}); u != nil {
		t.Fatalf("want nil, got %v", u)
	}
	// Linear comparison (1.21) never depends on now.
	if u, _ := StableUntil(Input{Candidates: []Pod{a, b}, Delete: 1, Now: now, Rules: ruleSet(t, 21, nil)}); u != nil {
		t.Fatalf("want nil for linear rules, got %v", u)
	}
}
