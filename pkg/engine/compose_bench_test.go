package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// BenchmarkOpenRounds: a two-round scale-in whose first round cuts a tie,
// so every outcome of that round is followed through the second (exact:
// 4 of 8 tied go, 70 outcomes; sampled: 100 of 200, 64 drawn). The rest
// of the fleet is ready at distinct times on 30-pod nodes.
func BenchmarkOpenRounds(b *testing.B) {
	for _, c := range []struct {
		name      string
		pods, tie int
	}{{"exact/pods=1000", 1000, 8}, {"sampled/pods=1000", 1000, 200}, {"exact/pods=10000", 10000, 8}} {
		b.Run(c.name, func(b *testing.B) {
			if testing.Short() && c.pods > 1000 {
				b.Skip("short mode")
			}
			pods, related := openRoundsFleet(c.pods, c.tie)
			in := Input{Candidates: pods, Related: related, Delete: 500 + c.tie, Now: now, Rules: rules.Default(), Seed: 1}
			b.ReportAllocs()
			for b.Loop() {
				if res := Predict(in); res.Rounds != 2 {
					b.Fatal(res.Rounds)
				}
			}
		})
	}
}

// openRoundsFleet: 500-tie/2 pods not ready, tie pods ready in one second
// on four nodes that also hold 100 pods of a sibling ReplicaSet each (equal
// ranks, above the rest, until a round takes some), the rest ready earlier,
// one a minute apart.
func openRoundsFleet(n, tie int) ([]Pod, map[string]int) {
	ready := now.Add(-time.Hour)
	related := map[string]int{}
	pods := make([]Pod, 0, n)
	for i := range n {
		b := newPod(fmt.Sprintf("p-%05d", i), fmt.Sprintf("%08x", i*2654435761%(1<<32))).node(fmt.Sprintf("n%03d", i%(n/30)))
		switch {
		case i < 500-tie/2:
			b = b.notReady()
		case i < 500-tie/2+tie:
			b = b.readyAt(ready).createdAt(ready.Add(-time.Minute)).node(fmt.Sprintf("t%d", i%4))
		default:
			b = b.readyAt(ready.Add(-time.Duration(i) * time.Minute))
		}
		pods = append(pods, b.pod())
		related[pods[i].Node]++
	}
	for t := range 4 {
		related[fmt.Sprintf("t%d", t)] += 100 // a sibling ReplicaSet's pods
	}
	return pods, related
}
