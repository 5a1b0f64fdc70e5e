package engine

import (
	"container/heap"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/scale-preview/scale-preview/pkg/engine/enginetest"
)

// firstChangeEvery is firstChange evaluating every crossing (before the
// bucket patterns were cached).
func firstChangeEvery(sub Input, now time.Time) (*time.Time, bool) {
	base := victimSet(sub, now)
	h := crossingsOf(sub.Candidates, now)
	var last time.Time
	for checks := 0; h.Len() > 0; checks++ {
		e := heap.Pop(h).(crossing)
		if e.at.Sub(now) > neverHorizon {
			return nil, false
		}
		if checks == maxStableChecks {
			return &last, true
		}
		last = e.at
		if victimSet(sub, e.at) != base {
			return &e.at, false
		}
		h.push(e.t, e.at)
	}
	return nil, false
}

// Skipping instants whose bucket pattern was already evaluated gives the
// same stable-until as evaluating every crossing, over random fleets and
// cuts.
func TestStableUntilPatternsMatchEveryCrossing(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := rules37(t)
	checked := 0
	for seed := uint64(1); seed <= 60; seed++ {
		n := 20 + int(seed*37%300)
		pods, _, perNode := enginetest.Fleet(n, seed, now)
		cands := make([]Pod, n)
		for i, p := range pods {
			cands[i] = FromPod(p)
		}
		for _, d := range []int{1, n / 10, n / 3, n - 1} {
			in := Input{Candidates: cands, Related: perNode, Delete: d, Now: now, Rules: r, Seed: 1}
			if matchesEveryCrossing(t, in, fmt.Sprintf("seed %d, %d pods, delete %d", seed, n, d)) {
				checked++
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d cuts fell in a class", checked)
	}
}

// matchesEveryCrossing fails unless StableUntil(in) equals evaluating every
// crossing of the class the cut falls in; false when the cut falls in none.
func matchesEveryCrossing(t *testing.T, in Input, what string) bool {
	t.Helper()
	got, gotLower := StableUntil(in)
	dd := min(in.Delete, in.burst())
	if dd <= 0 || dd >= len(in.Candidates) {
		return false
	}
	class, before := cutClass(in, dd)
	if class == nil {
		return false
	}
	sub := Input{Candidates: class, Delete: dd - before, Rules: in.Rules, Burst: in.burst(), FatesOnly: true}
	want, wantLower := firstChangeEvery(sub, in.Now)
	if (got == nil) != (want == nil) || (got != nil && !got.Equal(*want)) || gotLower != wantLower {
		t.Fatalf("%s: got %v %v, want %v %v", what, got, gotLower, want, wantLower)
	}
	return true
}

// The same on random pods with few distinct values (shared seconds, ties,
// not-ready pods, restarts), where crossings move pods into, out of and
// within the cut's class.
func TestStableUntilSkipsMatchEveryCrossing(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 2))
	iterations := 1000
	if testing.Short() {
		iterations = 200
	}
	checked := 0
	for it := range iterations {
		n := 2 + rng.IntN(200)
		pods, related := randomPods(rng, n)
		// Small bursts put the cut in small classes too.
		in := Input{Candidates: pods, Related: related, Delete: 1 + rng.IntN(n-1), Now: now, Rules: rules37(t),
			Burst: 1 + rng.IntN(1+n/(1+rng.IntN(8)))}
		if rng.IntN(2) == 0 {
			in.Related = nil
		}
		if matchesEveryCrossing(t, in, fmt.Sprintf("iteration %d, %d pods, delete %d", it, n, in.Delete)) {
			checked++
		}
	}
	if checked < iterations/4 {
		t.Fatalf("only %d cuts fell in a class", checked)
	}
}

// The cut's class moves as a whole: b and c, ready in the same second,
// cross into the bucket of a, d and e together, which then join them. No
// member keeps its bucket, so the skip has nothing to compare with.
func TestStableUntilWholeClassCrosses(t *testing.T) {
	at := func(s string) time.Time {
		x, err := time.Parse(time.DateTime, s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	pods := []Pod{
		newPod("a", "0b1b").node("n").readyAt(at("2024-11-26 18:48:58")).createdAt(at("2024-12-07 11:08:10")).pod(),
		newPod("b", "006e").node("n").readyAt(at("2024-12-07 11:08:11")).createdAt(at("2024-11-26 18:49:00")).pod(),
		newPod("c", "0361").node("n").readyAt(at("2024-12-07 11:08:11")).createdAt(at("2024-11-26 18:48:58")).pod(),
		newPod("d", "05ad").node("n").readyAt(at("2024-11-26 18:48:59")).createdAt(at("2024-11-26 18:48:59")).pod(),
		newPod("e", "004f").node("n").readyAt(at("2024-11-26 18:49:01")).createdAt(at("2024-11-26 18:49:00")).pod(),
	}
	in := Input{Candidates: pods, Delete: 1, Now: now, Rules: rules37(t)}
	got, _ := StableUntil(in)
	want, _ := firstChangeEvery(Input{Candidates: pods, Delete: 1, Rules: in.Rules, Burst: in.burst(), FatesOnly: true}, now)
	if got == nil || want == nil || !got.Equal(*want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	// The crossing of b and c (math.Log2 moves it by a few nanoseconds).
	if d := got.Sub(at("2024-12-07 11:08:11").Add(1 << 51)); d < -time.Millisecond || d > time.Millisecond {
		t.Fatalf("got %v, want the crossing of b and c", got)
	}
}

// cutClass selects where cutClassSorted sorted: the same class (in another
// order) and count before it, and the same stable-until from either order.
func TestCutClassMatchesSorting(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 6))
	repeatedSeen := false
	for it := range 300 {
		n := 2 + rng.IntN(200)
		pods, related := randomPods(rng, n)
		dup := it%10 == 0
		if dup {
			// Names repeated (only a hand-written file can do that): the
			// sort's order is kept.
			for i := range pods {
				pods[i].Name = pods[i/2].Name
			}
		}
		in := Input{Candidates: pods, Related: related, Now: now, Rules: rules37(t)}
		if rng.IntN(2) == 0 {
			in.Related = nil
		}
		d := 1 + rng.IntN(n-1)
		got, gotBefore := cutClass(in, d)
		want, wantBefore := cutClassSorted(in, d)
		repeated := len(slices.Compact(slices.Sorted(slices.Values(mapPods(want, func(p Pod) string { return p.Name }))))) < len(want)
		if repeated && !slices.EqualFunc(got, want, func(a, b Pod) bool { return a.Name == b.Name && a.UID == b.UID && a.Rank == b.Rank }) {
			t.Fatalf("iteration %d: repeated names, class in another order than the sort's", it)
		}
		repeatedSeen = repeatedSeen || repeated
		name := func(p Pod) string { return p.Name }
		gotNames, wantNames := slices.Sorted(slices.Values(mapPods(got, name))), slices.Sorted(slices.Values(mapPods(want, name)))
		if gotBefore != wantBefore || !slices.Equal(gotNames, wantNames) {
			t.Fatalf("iteration %d: class %v before %d, want %v before %d", it, gotNames, gotBefore, wantNames, wantBefore)
		}
		for i := range got {
			if j := slices.IndexFunc(want, func(p Pod) bool { return p.Name == got[i].Name }); want[j].Rank != got[i].Rank {
				t.Fatalf("iteration %d: %s rank %d, want %d", it, got[i].Name, got[i].Rank, want[j].Rank)
			}
		}
		if got == nil {
			continue
		}
		sub := func(class []Pod) Input {
			return Input{Candidates: class, Delete: d - gotBefore, Rules: in.Rules, Burst: in.burst(), FatesOnly: true}
		}
		a, al := firstChange(sub(got), now)
		b, bl := firstChange(sub(want), now)
		if (a == nil) != (b == nil) || (a != nil && !a.Equal(*b)) || al != bl {
			t.Fatalf("iteration %d: stable until %v %v from the selected class, %v %v from the sorted one", it, a, al, b, bl)
		}
	}
	if !repeatedSeen {
		t.Fatal("no class with repeated names drawn")
	}
}

func mapPods(pods []Pod, f func(Pod) string) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = f(p)
	}
	return out
}
