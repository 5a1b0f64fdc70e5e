package engine

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// intransitiveKeys draws n pods in one log2 ready bucket with few distinct
// ready seconds, restarts and creation times: the comparator's UID
// tie-break makes such sets intransitive.
func intransitiveKeys(rng *rand.Rand, c *Comparator, n int) []key {
	base := now.Add(-100 * time.Hour).Truncate(time.Second)
	keys := make([]key, n)
	for i := range keys {
		b := newPod(fmt.Sprintf("p%02d", i), fmt.Sprintf("%x", rng.IntN(64))).node("n1").
			readyAt(base.Add(time.Duration(rng.IntN(3)) * time.Second)).
			created(time.Duration(200+rng.IntN(3)) * time.Hour)
		if rng.IntN(2) == 0 {
			b = b.restarts(int32(rng.IntN(2)))
		}
		p := b.pod()
		keys[i] = c.keyOf(&p)
	}
	return keys
}

// firstN is 0..n-1.
func firstN(n int) []int {
	u := make([]int, n)
	for i := range u {
		u[i] = i
	}
	return u
}

// permute calls f with every permutation of a.
func permute(a []int, k int, f func()) {
	if k == len(a) {
		f()
		return
	}
	for i := k; i < len(a); i++ {
		a[k], a[i] = a[i], a[k]
		permute(a, k+1, f)
		a[k], a[i] = a[i], a[k]
	}
}

// TestEnumerateMatchesEveryOrder: the counts equal what Go's sort.Sort
// gives over every input order, exactly, for random intransitive sets.
func TestEnumerateMatchesEveryOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 18))
	c := &Comparator{Rules: rules.Default(), Now: now}
	iterations := 40
	if testing.Short() {
		iterations = 10
	}
	for it := range iterations {
		n := 2 + rng.IntN(6)
		keys := intransitiveKeys(rng, c, n)
		universe := firstN(n)
		cut := 1 + rng.IntN(n-1)
		counts, total, ok := enumerate(c, keys, universe, cut)
		if !ok {
			t.Fatalf("iteration %d: not enumerated", it)
		}
		want := make([]int64, n)
		var orders int64
		work := make([]int, n)
		order := make([]int, n)
		copy(order, universe)
		permute(order, 0, func() {
			copy(work, order)
			sort.Sort(&sorter{c: c, keys: keys, idx: work})
			for _, k := range work[:cut] {
				want[k]++
			}
			orders++
		})
		if total != orders {
			t.Fatalf("iteration %d: total %d, want %d", it, total, orders)
		}
		for i := range want {
			if counts[i] != want[i] {
				t.Fatalf("iteration %d (n=%d cut=%d): counts %v, sort.Sort over every order gives %v", it, n, cut, counts, want)
			}
		}
	}
}

// TestSmallGroupsExactInLargeRounds: in a round too large to simulate whole,
// a small intransitive group is enumerated, and its probabilities agree
// with sampling the real sort.Sort over the group's random orders.
func TestSmallGroupsExactInLargeRounds(t *testing.T) {
	c := &Comparator{Rules: rules.Default(), Now: now}
	rng := rand.New(rand.NewPCG(5, 18))
	found := 0
	for it := 0; it < 200 && found < 10; it++ {
		n := 3 + rng.IntN(6)
		keys := intransitiveKeys(rng, c, n)
		universe := firstN(n)
		cut := 1 + rng.IntN(n-1)
		counts, total, ok := enumerate(c, keys, universe, cut)
		if !ok {
			t.Fatal("not enumerated")
		}
		const trials = 20000
		hits := make([]int, n)
		work := make([]int, n)
		for range trials {
			copy(work, universe)
			rng.Shuffle(n, func(i, j int) { work[i], work[j] = work[j], work[i] })
			sort.Sort(&sorter{c: c, keys: keys, idx: work})
			for _, k := range work[:cut] {
				hits[k]++
			}
		}
		open := false
		for i := range counts {
			exact := float64(counts[i]) / float64(total)
			sampled := float64(hits[i]) / trials
			if d := exact - sampled; d > 0.02 || d < -0.02 {
				t.Errorf("group of %d, cut %d: pod %d exact %.3f, sampled %.3f", n, cut, i, exact, sampled)
			}
			open = open || (exact > 0 && exact < 1)
		}
		if open {
			found++
		}
	}
	if found < 5 {
		t.Fatalf("only %d open groups drawn", found)
	}
	// Through Predict: a 700-pod round (simulated per group) marks small
	// groups enumerated.
	pods := make([]Pod, 0, 700)
	for i := range 700 {
		ago := time.Duration(1+i) * time.Minute
		pods = append(pods, newPod(fmt.Sprintf("q%03d", i), fmt.Sprintf("u%03d", i)).node("n1").readyFor(ago).created(ago+time.Hour).pod())
	}
	base := now.Add(-100 * time.Hour).Truncate(time.Second)
	for i, u := range []string{"a3", "a1", "a2", "a4"} {
		pods = append(pods, newPod(fmt.Sprintf("z%d", i), u).node("n1").
			readyAt(base.Add(time.Duration(i%2)*time.Second)).created(time.Duration(200+i%2)*time.Hour).restarts(int32(i%2)).pod())
	}
	res := Predict(Input{Candidates: pods, Delete: 702, Burst: 1000, Now: now, Rules: rules.Default(), Seed: 1})
	enumeratedGroups := 0
	for _, g := range res.Contenders {
		if g.Enumerated {
			enumeratedGroups++
			if g.Trials != 0 || len(g.Pods) > maxEnumerated {
				t.Errorf("enumerated group %+v", g)
			}
		}
	}
	if enumeratedGroups == 0 {
		t.Errorf("no enumerated group among %+v", res.Contenders)
	}
}
