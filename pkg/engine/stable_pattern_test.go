package engine

import (
	"container/heap"
	"testing"
	"time"

	"github.com/scale-preview/scale-preview/pkg/engine/enginetest"
)

// firstChangeEvery is firstChange evaluating every crossing (before the
// bucket patterns were cached).
func firstChangeEvery(sub Input, now time.Time) (*time.Time, bool) {
	base := victimSet(sub, now)
	h := &crossings{}
	for _, p := range sub.Candidates {
		if p.Ready && !p.ReadyTime.IsZero() {
			h.push(p.ReadyTime, now)
		}
		if !p.Created.IsZero() {
			h.push(p.Created, now)
		}
	}
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
			got, gotLower := StableUntil(in)
			dd := min(in.Delete, in.burst())
			if dd <= 0 || dd >= len(cands) {
				continue
			}
			class, before := cutClass(in, dd)
			if class == nil {
				continue
			}
			checked++
			sub := Input{Candidates: class, Delete: dd - before, Rules: in.Rules, Burst: in.burst(), FatesOnly: true}
			want, wantLower := firstChangeEvery(sub, now)
			if (got == nil) != (want == nil) || (got != nil && !got.Equal(*want)) || gotLower != wantLower {
				t.Fatalf("seed %d, %d pods, delete %d: got %v %v, want %v %v", seed, n, d, got, gotLower, want, wantLower)
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d cuts fell in a class", checked)
	}
}
