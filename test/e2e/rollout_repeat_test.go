package e2e

import (
	"fmt"
	"math/rand/v2"
	"testing"
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
