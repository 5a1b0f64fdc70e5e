package e2e

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// TestRolloutRepeats repeats seeded random mid-rollout Deployments on the
// real control plane, each one several times from the same specification:
// the controllers' timing varies between repetitions, and a fate the plugin
// calls certain must hold in every one (the in-process test in
// test/inprocess does the same at a larger scale). E2E_ROLLOUT_REPEAT_SCENARIOS
// scenarios (default 20; 2 with -short, as in make check), E2E_ROLLOUT_REPEATS
// repetitions each (default 5; 2 with -short).
func TestRolloutRepeats(t *testing.T) {
	count, reps := 20, 5
	if testing.Short() {
		count, reps = 2, 2
	}
	count = envInt("E2E_ROLLOUT_REPEAT_SCENARIOS", count)
	reps = envInt("E2E_ROLLOUT_REPEATS", reps)
	batch := max(1, envInt("E2E_BATCH", 6))
	// Their own random stream: other random tests keep their shapes.
	rng := rand.New(rand.NewPCG(env.seed, 0x4e9ea7))
	t.Logf("E2E_SEED=%d E2E_ROLLOUT_REPEAT_SCENARIOS=%d E2E_ROLLOUT_REPEATS=%d", env.seed, count, reps)
	var all []*scenario
	for i := 0; i < count; i++ {
		sc := randomRolloutScenario(rng, 500+i)
		for k := 0; k < reps; k++ {
			rep := *sc
			rep.name = fmt.Sprintf("%s-rep%d", sc.name, k+1)
			all = append(all, &rep)
		}
	}
	runBatches(t, all, batch)
}

// TestSiblingRaceRepeats measures, on the real control plane, how often a
// ReplicaSet ranks after its sibling's deletion of the same sync is
// visible (the Deployment model's visibility weights), and checks the
// plugin's chances against the frequencies. A paused Deployment
// mid-rollout, 3 -> 1, maxSurge 3: the split shrinks the old and the new
// ReplicaSet by one each. Each has a pod on node-a, and the old one's is
// its longest ready. If neither sees the other's victim gone, each deletes
// its node-a pod; if the new one sees the old one's, its three not-ready
// pods tie and one goes at random (by UID); if the old one sees the new
// one's, it deletes its most recently ready pod, on node-b.
// E2E_SIBLING_RACE_REPEATS repetitions (default 30; skipped with -short).
func TestSiblingRaceRepeats(t *testing.T) {
	if testing.Short() {
		t.Skip("repeated measurements are skipped with -short")
	}
	reps := envInt("E2E_SIBLING_RACE_REPEATS", 30)
	var runs []*scenarioRun
	for k := 0; k < reps; k++ {
		r := newRun(&scenario{
			name: fmt.Sprintf("sibling-race-rep%d", k+1), kind: kindDeployment, replicas: 3, target: 1,
			maxSurge: ptrTo(intstr.FromInt32(3)), maxUnavailable: ptrTo(intstr.FromInt32(0)),
			states:      []podState{running("node-a", 3*day), running("node-b", day), running("node-c", 2*day)},
			rollout:     true,
			paused:      true,
			extraStates: []podState{notReady("node-a"), notReady("node-d"), notReady("node-e")},
		})
		t.Run(r.sc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			_ = r.prepare(ctx) // errors are reported by run
			r.run(t)
		})
		runs = append(runs, r)
	}
	checkChances(t, runs)
}

// checkChances compares the plugin's chances with the frequencies over
// repetitions of one scenario. Pods are matched across repetitions by
// their role: old or new ReplicaSet and node.
func checkChances(t *testing.T, runs []*scenarioRun) {
	type tally struct {
		p       float64
		n, hits int
	}
	roles := map[string]*tally{}
	for _, r := range runs {
		if r.pred == nil {
			continue
		}
		isNew := map[string]bool{}
		for _, rs := range r.pred.ReplicaSets {
			isNew[rs.Name] = rs.New
		}
		for _, p := range r.pred.Pods {
			if p.DeleteProbability == nil || (p.Fate != "delete" && p.Fate != "keep") {
				continue
			}
			role := fmt.Sprintf("old@%s", r.states[p.Name].Node)
			if isNew[p.ReplicaSet] {
				role = fmt.Sprintf("new@%s", r.states[p.Name].Node)
			}
			tl := roles[role]
			if tl == nil {
				tl = &tally{}
				roles[role] = tl
			}
			tl.p += *p.DeleteProbability
			tl.n++
			if slices.Contains(r.deleted, p.Name) {
				tl.hits++
			}
		}
	}
	for _, role := range slices.Sorted(maps.Keys(roles)) {
		tl := roles[role]
		want, got := tl.p/float64(tl.n), float64(tl.hits)/float64(tl.n)
		t.Logf("%-10s predicted %.2f, deleted in %d of %d runs (%.2f)", role, want, tl.hits, tl.n, got)
		if math.Abs(got-want) > 0.15 && beyondChance(tl.hits, tl.n, want) {
			t.Errorf("%s: predicted %.2f, measured %.2f over %d runs: off by more than 0.15 beyond chance", role, want, got, tl.n)
		}
	}
}

// beyondChance: no true chance within 0.15 of p gives hits of n (or
// further out) with a probability of 0.001 or more (a one-sided binomial
// tail).
func beyondChance(hits, n int, p float64) bool {
	if float64(hits) > float64(n)*p {
		return binomialTail(n, hits, min(1, p+0.15), true) < 0.001
	}
	return binomialTail(n, hits, max(0, p-0.15), false) < 0.001
}

// binomialTail is P(X >= k) (upper) or P(X <= k) for X ~ Binomial(n, p).
func binomialTail(n, k int, p float64, upper bool) float64 {
	sum := 0.0
	for i := 0; i <= n; i++ {
		if (upper && i < k) || (!upper && i > k) {
			continue
		}
		lg, _ := math.Lgamma(float64(n + 1))
		li, _ := math.Lgamma(float64(i + 1))
		lr, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(lg - li - lr + float64(i)*math.Log(max(p, 1e-300)) + float64(n-i)*math.Log(max(1-p, 1e-300)))
	}
	return sum
}
