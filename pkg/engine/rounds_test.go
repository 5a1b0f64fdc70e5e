package engine

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// predictResorting is the round loop as first written: every round takes
// the survivors in the order the previous round placed them, arranges them
// all from scratch and explains every pod.
func predictResorting(in Input) Result {
	in.resortAll = true
	return Predict(in)
}

// randomPods draws pods with few distinct values, so that every rule,
// ties, shared seconds and log2 buckets all occur; names are unique.
func randomPods(rng *rand.Rand, n int) ([]Pod, map[string]int) {
	nodes := 1 + rng.IntN(12)
	related := map[string]int{}
	waves := make([]time.Time, 1+rng.IntN(6))
	for i := range waves {
		waves[i] = now.Add(-time.Duration(rng.Int64N(int64(40 * 24 * time.Hour)))).Truncate(time.Second)
	}
	pods := make([]Pod, n)
	for i := range pods {
		b := newPod(fmt.Sprintf("p-%05d", rng.IntN(1<<16)*n+i), fmt.Sprintf("%04x", rng.IntN(1<<12)))
		if rng.IntN(15) != 0 {
			b = b.node(fmt.Sprintf("n%d", rng.IntN(nodes)))
		}
		b = b.createdAt(waves[rng.IntN(len(waves))].Add(time.Duration(rng.IntN(3)) * time.Second))
		switch rng.IntN(10) {
		case 0:
			b = b.notReady()
		case 1:
			b = b.phase("Pending")
		default:
			b = b.readyAt(waves[rng.IntN(len(waves))].Add(time.Duration(rng.IntN(4)) * time.Second))
		}
		if rng.IntN(4) == 0 {
			b = b.restarts(int32(rng.IntN(3)))
		}
		if rng.IntN(8) == 0 {
			b = b.cost(fmt.Sprint(rng.IntN(3) - 1))
		}
		pods[i] = b.pod()
		related[pods[i].Node]++
	}
	// Pods of a sibling ReplicaSet on some nodes.
	for n := range nodes {
		related[fmt.Sprintf("n%d", n)] += rng.IntN(3)
	}
	return pods, related
}

// TestRoundsMatchResorting: the rounds as run now (survivors filtered in
// name order, only shown pods explained) give exactly the first version's
// Result, on random fleets, in log and linear mode, with and without ranks.
func TestRoundsMatchResorting(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 1))
	iterations := 300
	if testing.Short() {
		iterations = 60
	}
	for it := range iterations {
		n := 2 + rng.IntN(400)
		pods, related := randomPods(rng, n)
		r := rules.Default()
		r.LogScale = rng.IntN(3) != 0
		in := Input{Candidates: pods, Delete: 1 + rng.IntN(n), Now: now, Rules: r,
			Burst: 1 + rng.IntN(max(1, n/3)), Seed: uint64(it), Trials: 50}
		if rng.IntN(3) != 0 {
			in.Related = related
		}
		got, want := Predict(in), predictResorting(in)
		if !sameResult(got, want) {
			t.Fatalf("iteration %d (n=%d delete=%d burst=%d log=%v ranks=%v): rounds differ from re-sorting",
				it, n, in.Delete, in.Burst, r.LogScale, in.Related != nil)
		}
	}
}

// sameResult compares by value: the two runs hold their own pod copies.
func sameResult(a, b Result) bool {
	if len(a.Order) != len(b.Order) || a.Victims != b.Victims || a.Rounds != b.Rounds ||
		a.Unsorted != b.Unsorted || a.Certain != b.Certain || !reflect.DeepEqual(a.Contenders, b.Contenders) {
		return false
	}
	name := func(p *Pod) string {
		if p == nil {
			return ""
		}
		return p.Name
	}
	for i := range a.Order {
		x, y := a.Order[i], b.Order[i]
		if name(x.Pod) != name(y.Pod) || name(x.NextPod) != name(y.NextPod) || name(x.BoundaryPod) != name(y.BoundaryPod) ||
			!reflect.DeepEqual(x.Next, y.Next) || !reflect.DeepEqual(x.Boundary, y.Boundary) {
			return false
		}
		x.Pod, x.NextPod, x.BoundaryPod, x.Next, x.Boundary = nil, nil, nil, nil, nil
		y.Pod, y.NextPod, y.BoundaryPod, y.Next, y.Boundary = nil, nil, nil, nil, nil
		if x != y {
			return false
		}
	}
	return true
}
