package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

func randomAge(rng *rand.Rand) time.Duration {
	between := func(lo, hi time.Duration) time.Duration { return lo + time.Duration(rng.Int64N(int64(hi-lo))) }
	switch x := rng.IntN(100); {
	case x < 8:
		return between(40*time.Second, 60*time.Second)
	case x < 28:
		return between(3*time.Minute, 50*time.Minute)
	case x < 53:
		return between(time.Hour, 20*time.Hour)
	case x < 78:
		return between(day, 25*day)
	default:
		return between(30*day, 200*day)
	}
}

// validCosts are deletion costs the API server accepts; "-007" parses as -7.
var validCosts = []string{"-007", "0", "-0", "2147483647", "-2147483648"}

func randomState(rng *rand.Rand, nodes int, sidecar bool) podState {
	var st podState
	if rng.IntN(100) < 15 {
		st = pending("")
	} else {
		node := fmt.Sprintf("node-%c", 'a'+rng.IntN(nodes))
		switch x := rng.Float64(); {
		case x < 0.1:
			st = pending(node)
		case x < 0.3:
			st = notReady(node)
		default:
			st = running(node, randomAge(rng))
		}
	}
	if rng.IntN(100) < 30 {
		st.Restarts = int32(1 + rng.IntN(6))
	}
	if sidecar && rng.IntN(100) < 40 {
		st.Sidecar = int32(1 + rng.IntN(4))
	}
	switch x := rng.IntN(100); {
	case x < 20:
		st.Cost = strconv.Itoa(rng.IntN(21) - 10)
	case x < 23:
		st.Cost = validCosts[rng.IntN(len(validCosts))]
	}
	return st
}

// randomScenario builds scenario i of a seeded run.
func randomScenario(rng *rand.Rand, i int) *scenario {
	kinds := []string{kindDeployment, kindRS, kindRC, kindSTS}
	kind := kinds[rng.IntN(len(kinds))]
	n := int32(2 + rng.IntN(11))
	target := int32(rng.IntN(int(n)))
	nodes := 1 + rng.IntN(4)
	sc := &scenario{kind: kind, replicas: n, target: target, sidecar: rng.IntN(5) == 0}
	for j := int32(0); j < n; j++ {
		sc.states = append(sc.states, randomState(rng, nodes, sc.sidecar))
	}
	extra := func() {
		for j := 0; j < 12; j++ {
			sc.extraStates = append(sc.extraStates, randomState(rng, nodes, sc.sidecar))
		}
	}
	var tags []string
	switch kind {
	case kindDeployment:
		if rng.IntN(3) == 0 {
			strategies := [][2]intstr.IntOrString{
				{intstr.FromString("25%"), intstr.FromString("25%")},
				{intstr.FromInt32(1), intstr.FromInt32(0)},
				{intstr.FromInt32(2), intstr.FromInt32(1)},
				{intstr.FromInt32(0), intstr.FromInt32(1)},
			}
			s := strategies[rng.IntN(len(strategies))]
			sc.maxSurge, sc.maxUnavailable = &s[0], &s[1]
			sc.rollout = true
			tags = append(tags, "rollout")
			extra()
		}
	case kindSTS:
		sc.parallel = rng.IntN(2) == 0
		if sc.parallel {
			tags = append(tags, "parallel")
		}
		if rng.IntN(4) == 0 {
			sc.startOrdinal = ptrTo(int32(1 + rng.IntN(5)))
			tags = append(tags, fmt.Sprintf("start%d", *sc.startOrdinal))
		}
	}
	if kind != kindSTS && !sc.rollout && rng.IntN(6) == 0 {
		sc.terminate = []int{rng.IntN(int(n))}
		tags = append(tags, "terminating")
		extra()
	}
	if sc.sidecar {
		tags = append(tags, "sidecar")
	}
	name := fmt.Sprintf("random-%03d-%s-%dto%d", i, strings.ToLower(kind), n, target)
	if len(tags) > 0 {
		name += "-" + strings.Join(tags, "-")
	}
	sc.name = name
	return sc
}

// TestRandomScenarios runs E2E_RANDOM (default 60) seeded random scenarios.
// Scenarios are prepared E2E_BATCH (default 6) at a time before being
// predicted and scaled one by one: the pods of a batch age meanwhile, which
// saves most of the stableUntil waits that brand-new pods (creation ages of
// a few seconds) would cause. E2E_RANDOM_ONLY=i runs only scenario i.
func TestRandomScenarios(t *testing.T) {
	if testing.Short() {
		t.Skip("random scenarios are skipped with -short")
	}
	count := envInt("E2E_RANDOM", 60)
	batch := max(1, envInt("E2E_BATCH", 6))
	only := envInt("E2E_RANDOM_ONLY", -1)
	rng := rand.New(rand.NewPCG(env.seed, 0x5ca1e))
	t.Logf("E2E_SEED=%d E2E_RANDOM=%d E2E_BATCH=%d", env.seed, count, batch)
	var all []*scenario
	for i := 0; i < count; i++ {
		sc := randomScenario(rng, i)
		if only < 0 || only == i {
			all = append(all, sc)
		}
	}
	runBatches(t, all, batch)
}

// runBatches prepares scenarios batch at a time, then runs them one by one.
func runBatches(t *testing.T, all []*scenario, batch int) {
	for b := 0; b < len(all); b += batch {
		var runs []*scenarioRun
		for _, sc := range all[b:min(b+batch, len(all))] {
			r := newRun(sc)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			_ = r.prepare(ctx) // errors are reported by run
			cancel()
			runs = append(runs, r)
		}
		for _, r := range runs {
			t.Run(r.sc.name, func(t *testing.T) {
				for i, st := range r.sc.states {
					t.Logf("  state[%d]: %s", i, st)
				}
				for i, st := range r.sc.extraStates {
					t.Logf("  later pod state[%d]: %s", i, st)
				}
				r.run(t)
			})
		}
	}
}

// newPodState is the state of a pod created by the rollout: mostly not
// ready or not yet running, so that the rollout stays in progress.
func newPodState(rng *rand.Rand, nodes int) podState {
	node := fmt.Sprintf("node-%c", 'a'+rng.IntN(nodes))
	var st podState
	switch x := rng.IntN(100); {
	case x < 45:
		st = notReady(node)
	case x < 70:
		st = pending("")
	case x < 80:
		st = pending(node)
	default:
		st = running(node, randomAge(rng))
	}
	if rng.IntN(100) < 15 {
		st.Cost = strconv.Itoa(rng.IntN(11) - 5)
	}
	return st
}

// randomRolloutScenario builds mid-rollout Deployment i of a seeded run:
// 3-12 replicas, a random rolling-update strategy, the template changed
// while most new pods are not ready, sometimes paused, then scaled in to
// any smaller size.
func randomRolloutScenario(rng *rand.Rand, i int) *scenario {
	strategies := [][2]intstr.IntOrString{
		{intstr.FromString("25%"), intstr.FromString("25%")},
		{intstr.FromInt32(1), intstr.FromInt32(0)},
		{intstr.FromInt32(2), intstr.FromInt32(1)},
		{intstr.FromInt32(0), intstr.FromInt32(1)},
		{intstr.FromInt32(3), intstr.FromInt32(2)},
		{intstr.FromString("50%"), intstr.FromInt32(0)},
		{intstr.FromInt32(1), intstr.FromString("40%")},
	}
	n := int32(3 + rng.IntN(10))
	nodes := 1 + rng.IntN(4)
	s := strategies[rng.IntN(len(strategies))]
	sc := &scenario{kind: kindDeployment, replicas: n, target: int32(rng.IntN(int(n))), rollout: true,
		maxSurge: &s[0], maxUnavailable: &s[1], paused: rng.IntN(5) == 0}
	for j := int32(0); j < n; j++ {
		st := randomState(rng, nodes, false)
		if rng.IntN(100) < 60 { // mostly ready old pods: the rollout moves
			st = running(fmt.Sprintf("node-%c", 'a'+rng.IntN(nodes)), randomAge(rng))
		}
		sc.states = append(sc.states, st)
	}
	for j := 0; j < 14; j++ {
		sc.extraStates = append(sc.extraStates, newPodState(rng, nodes))
	}
	sc.name = fmt.Sprintf("rollout-random-%03d-%dto%d-surge%s-unavail%s", i, n, sc.target,
		strings.TrimSuffix(s[0].String(), "%")+pct(s[0]), strings.TrimSuffix(s[1].String(), "%")+pct(s[1]))
	if sc.paused {
		sc.name += "-paused"
	}
	return sc
}

// randomThreeReplicaSetScenario builds mid-rollout Deployment i over three
// ReplicaSets: a random rollout whose first new pods are ready, so that
// the second ReplicaSet keeps some, then a second template change.
func randomThreeReplicaSetScenario(rng *rand.Rand, i int) *scenario {
	sc := randomRolloutScenario(rng, i)
	sc.secondRollout = true
	nodes := 1 + rng.IntN(4)
	ready := 1 + rng.IntN(3)
	var extra []podState
	for j := 0; j < ready; j++ {
		extra = append(extra, running(fmt.Sprintf("node-%c", 'a'+rng.IntN(nodes)), time.Duration(1+rng.IntN(48))*time.Hour))
	}
	sc.extraStates = append(extra, sc.extraStates...)
	sc.name = strings.Replace(sc.name, "rollout-random-", "three-rs-random-", 1)
	return sc
}

func pct(v intstr.IntOrString) string {
	if v.Type == intstr.String {
		return "pct"
	}
	return ""
}

// TestRandomRollouts runs E2E_RANDOM_ROLLOUTS (default 8) seeded random
// mid-rollout Deployments (their own random stream: the shapes of
// TestRandomScenarios do not change). E2E_RANDOM_ROLLOUT_ONLY=i runs only
// scenario i.
func TestRandomRollouts(t *testing.T) {
	if testing.Short() {
		t.Skip("random scenarios are skipped with -short")
	}
	count := envInt("E2E_RANDOM_ROLLOUTS", 8)
	batch := max(1, envInt("E2E_BATCH", 6))
	only := envInt("E2E_RANDOM_ROLLOUT_ONLY", -1)
	rng := rand.New(rand.NewPCG(env.seed, 0x7011))
	t.Logf("E2E_SEED=%d E2E_RANDOM_ROLLOUTS=%d E2E_BATCH=%d", env.seed, count, batch)
	var all []*scenario
	for i := 0; i < count; i++ {
		sc := randomRolloutScenario(rng, i)
		if only < 0 || only == i {
			all = append(all, sc)
		}
	}
	runBatches(t, all, batch)
}
