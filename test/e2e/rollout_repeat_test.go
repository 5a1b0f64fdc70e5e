package e2e

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/scale-preview/scale-preview/test/internal/chance"
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
		if chance.BeyondNoise(tl.hits, tl.n, want) {
			t.Errorf("%s: predicted %.2f, measured %.2f over %d runs: off by more than %.2f beyond chance", role, want, got, tl.n, chance.Tolerance)
		}
	}
}
