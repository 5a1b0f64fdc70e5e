package engine

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// fuzzPods decodes a small pod set from bytes. Values come from short
// lists so that ties, shared buckets and equal UIDs prefixes are common:
// the cases where chance and the unstable sort matter.
func fuzzPods(data []byte) (pods []Pod, related map[string]int, del, burst, minor int) {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := int(data[0])
		data = data[1:]
		return b
	}
	n := next()%14 + 1
	minor = rules.Oldest + next()%(rules.Newest-rules.Oldest+1)
	del = next() % (n + 1)
	burst = []int{0, 1, 2, 3}[next()%4]
	if next()%2 == 0 {
		related = map[string]int{}
	}
	nodes := []string{"", "n1", "n2", "n3"}
	phases := []corev1.PodPhase{corev1.PodRunning, corev1.PodPending, corev1.PodUnknown, ""}
	ages := []time.Duration{0, time.Second, 2 * time.Second, time.Minute, 90 * time.Second, time.Hour, 3 * time.Hour, 40 * 24 * time.Hour, -time.Minute}
	costs := []string{"", "0", "5", "-5", "x", "2147483648", "100"}
	for i := 0; i < n; i++ {
		p := Pod{
			Name: fmt.Sprintf("p%02d", i), Namespace: "fuzz",
			UID:      fmt.Sprintf("%c%02d", 'a'+rune(next()%3), i),
			Node:     nodes[next()%len(nodes)],
			Phase:    phases[next()%len(phases)],
			Ready:    next()%2 == 0,
			Created:  now.Add(-ages[next()%len(ages)]),
			Restarts: next() % 3,
		}
		if p.Ready {
			p.ReadyTime = now.Add(-ages[next()%len(ages)])
		}
		if raw := costs[next()%len(costs)]; raw != "" {
			p.CostSet, p.CostRaw = true, raw
			p.Cost, p.CostInvalid = ParseDeletionCost(raw)
		}
		p.SidecarRestarts = next() % 2
		if related != nil {
			related[p.Node]++
		}
		pods = append(pods, p)
	}
	return pods, related, del, burst, minor
}

// FuzzPredict: on any pod set, each candidate is placed exactly once, the
// right number go, certain fates have probability 0 or 1, and the
// probabilities add up to the number deleted; on up to 5 pods they equal
// the oracle's, over every input order of every round.
func FuzzPredict(f *testing.F) {
	f.Add([]byte{6, 16, 3, 0, 1})
	f.Add([]byte{13, 0, 7, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 0, 0})
	f.Add([]byte{4, 10, 2, 2, 0, 1, 1, 1, 0, 3, 3, 0, 1, 1, 1, 0, 3, 3, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		pods, related, del, burst, minor := fuzzPods(data)
		rs, err := rules.For(minor, nil)
		if err != nil {
			t.Fatalf("rules for 1.%d: %v", minor, err)
		}
		in := Input{Candidates: pods, Related: related, Delete: del, Now: now, Rules: rs, Burst: burst, Seed: 1, Trials: 200}
		res := Predict(in)
		if len(res.Order) != len(pods) {
			t.Fatalf("%d placed for %d candidates", len(res.Order), len(pods))
		}
		seen := map[string]bool{}
		deleted, sum := 0, 0.0
		for _, p := range res.Order {
			if seen[p.Pod.Name] {
				t.Fatalf("%s placed twice", p.Pod.Name)
			}
			seen[p.Pod.Name] = true
			if p.Probability < 0 || p.Probability > 1 || math.IsNaN(p.Probability) {
				t.Fatalf("%s: probability %v", p.Pod.Name, p.Probability)
			}
			if p.Certain && p.Probability != 0 && p.Probability != 1 {
				t.Fatalf("%s: certain with probability %v", p.Pod.Name, p.Probability)
			}
			if p.Certain && p.Delete != (p.Probability == 1) {
				t.Fatalf("%s: certain, delete %v, probability %v", p.Pod.Name, p.Delete, p.Probability)
			}
			if p.Delete {
				deleted++
			}
			sum += p.Probability
		}
		if deleted != del || res.Victims != del {
			t.Fatalf("%d marked deleted, %d victims, want %d", deleted, res.Victims, del)
		}
		if math.Abs(sum-float64(del)) > 1e-9 {
			t.Fatalf("probabilities sum to %v, want %d", sum, del)
		}
		if res.Certain {
			for _, p := range res.Order {
				if !p.Certain {
					t.Fatalf("result certain but %s is not", p.Pod.Name)
				}
			}
		}
		open := make([]bool, len(res.Contenders))
		for _, p := range res.Order {
			if p.Group >= len(res.Contenders) {
				t.Fatalf("%s: group %d of %d", p.Pod.Name, p.Group, len(res.Contenders))
			}
			if p.Group >= 0 && !p.Certain {
				open[p.Group] = true
			}
		}
		if i := slices.Index(open, false); i >= 0 {
			t.Fatalf("group %d %v has no open member", i, res.Contenders[i].Pods)
		}
		if len(pods) <= 5 {
			// Small enough to follow every input order of every round:
			// the probabilities are exact, and certain means settled.
			want := oracle(pods, related, del, in.burst(), &Comparator{Rules: rs, Now: now})
			for _, p := range res.Order {
				k := slices.IndexFunc(pods, func(q Pod) bool { return q.Name == p.Pod.Name })
				if math.Abs(p.Probability-want[k]) > 1e-9 {
					t.Fatalf("%s: probability %v, every order gives %v", p.Pod.Name, p.Probability, want[k])
				}
				settled := math.Abs(want[k]) < 1e-9 || math.Abs(want[k]-1) < 1e-9
				if p.Certain && !settled {
					t.Fatalf("%s certain, every order gives %v", p.Pod.Name, want[k])
				}
			}
		}
	})
}
