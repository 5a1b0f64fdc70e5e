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
// scenarios (default 20; 2 with -short, as in make check) and
// E2E_THREE_RS_REPEAT_SCENARIOS over three ReplicaSets (default 8; 1 with
// -short), E2E_ROLLOUT_REPEATS repetitions each (default 5; 2 with -short).
func TestRolloutRepeats(t *testing.T) {
	count, three, reps := 20, 8, 5
	if testing.Short() {
		count, three, reps = 2, 1, 2
	}
	count = envInt("E2E_ROLLOUT_REPEAT_SCENARIOS", count)
	three = envInt("E2E_THREE_RS_REPEAT_SCENARIOS", three)
	reps = envInt("E2E_ROLLOUT_REPEATS", reps)
	batch := max(1, envInt("E2E_BATCH", 6))
	// Their own random stream: other random tests keep their shapes.
	rng := rand.New(rand.NewPCG(env.seed, 0x4e9ea7))
	t.Logf("E2E_SEED=%d E2E_ROLLOUT_REPEAT_SCENARIOS=%d E2E_THREE_RS_REPEAT_SCENARIOS=%d E2E_ROLLOUT_REPEATS=%d", env.seed, count, three, reps)
	var scs []*scenario
	for i := 0; i < count; i++ {
		scs = append(scs, randomRolloutScenario(rng, 500+i))
	}
	// Three ReplicaSets, from a stream of their own (the scenarios above
	// keep their shapes).
	rng3 := rand.New(rand.NewPCG(env.seed, 0x3e5))
	for i := 0; i < three; i++ {
		scs = append(scs, randomThreeReplicaSetScenario(rng3, 600+i))
	}
	var all []*scenario
	for _, sc := range scs {
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
	runs := repeatScenario(t, envInt("E2E_SIBLING_RACE_REPEATS", 30), func(k int) *scenario {
		return &scenario{
			name: fmt.Sprintf("sibling-race-rep%d", k+1), kind: kindDeployment, replicas: 3, target: 1,
			maxSurge: ptrTo(intstr.FromInt32(3)), maxUnavailable: ptrTo(intstr.FromInt32(0)),
			states:      []podState{running("node-a", 3*day), running("node-b", day), running("node-c", 2*day)},
			rollout:     true,
			paused:      true,
			extraStates: []podState{notReady("node-a"), notReady("node-d"), notReady("node-e")},
		}
	}, nil)
	checkChances(t, runs)
}

// TestThreeReplicaSetRaceRepeats measures, on the real control plane, how
// often the third ReplicaSet written by the split ranks after the first's
// or the second's deletion is visible. A paused Deployment over three
// ReplicaSets (two template changes) of two pods each, 4 -> 1 with
// maxSurge 2: the split shrinks each by one, oldest first. The third
// ReplicaSet's two not-ready pods are on node-a and node-d, and the node-d
// one has restarted: it deletes its node-a pod unless it sees the deletion
// of the other node-a pod, the first ReplicaSet's ("sees-first") or the
// second's ("sees-second"); then the node counts tie and the restarted pod
// goes. The other ReplicaSets' victims do not depend on what they see.
// E2E_THREE_RS_RACE_REPEATS repetitions of each (default 30; skipped with
// -short).
func TestThreeReplicaSetRaceRepeats(t *testing.T) {
	if testing.Short() {
		t.Skip("repeated measurements are skipped with -short")
	}
	reps := envInt("E2E_THREE_RS_RACE_REPEATS", 30)
	for _, variant := range []string{"sees-first", "sees-second"} {
		t.Run(variant, func(t *testing.T) {
			runs := repeatScenario(t, reps, func(k int) *scenario {
				return threeReplicaSetRace(fmt.Sprintf("three-rs-%s-rep%d", variant, k+1), variant == "sees-first")
			}, func(t *testing.T, r *scenarioRun) {
				if r.pred != nil && !threeOfTwo(r.pred) {
					t.Errorf("the setup did not leave three ReplicaSets of two pods: %+v", r.pred.ReplicaSets)
				}
			})
			checkChances(t, runs)
		})
	}
}

// repeatScenario sets up and runs scenario(k) for k < reps, one after the
// other (a measured race must not share the machine with its repetitions),
// each as a subtest; after, if not nil, checks each run.
func repeatScenario(t *testing.T, reps int, scenario func(k int) *scenario, after func(*testing.T, *scenarioRun)) []*scenarioRun {
	var runs []*scenarioRun
	for k := 0; k < reps; k++ {
		r := newRun(scenario(k))
		t.Run(r.sc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			_ = r.prepare(ctx) // errors are reported by run
			r.run(t)
			if after != nil {
				after(t, r)
			}
		})
		runs = append(runs, r)
	}
	return runs
}

// threeReplicaSetRace builds the scenario of TestThreeReplicaSetRaceRepeats.
// The first rollout's two ready pods let it scale the first ReplicaSet
// 4 -> 2 (its pods ready a minute ago go first) and grow the second to 4; its
// two not-ready pods stall it. The second template change scales those
// away and starts the third with two not-ready pods.
func threeReplicaSetRace(name string, nodeAInFirst bool) *scenario {
	first := []podState{running("node-a", 3*day), running("node-b", time.Hour)}
	second := []podState{running("node-c", 3*day), running("node-e", time.Hour)}
	if !nodeAInFirst {
		first = []podState{running("node-b", 3*day), running("node-c", time.Hour)}
		second = []podState{running("node-a", 3*day), running("node-e", time.Hour)}
	}
	return &scenario{
		name: name, kind: kindDeployment, replicas: 4, target: 1,
		maxSurge: ptrTo(intstr.FromInt32(2)), maxUnavailable: ptrTo(intstr.FromInt32(0)),
		states:        append(first, running("node-x", time.Minute), running("node-y", time.Minute)),
		rollout:       true,
		secondRollout: true,
		paused:        true,
		extraStates:   append(second, notReady("node-f"), notReady("node-g"), notReady("node-a"), notReady("node-d").withRestarts(1)),
	}
}

// threeOfTwo: three ReplicaSets of two pods each before the scale.
func threeOfTwo(p *prediction) bool {
	n := 0
	for _, rs := range p.ReplicaSets {
		if rs.Before == 2 {
			n++
		} else if rs.Before != 0 {
			return false
		}
	}
	return n == 3
}

// checkChances compares the plugin's chances with the frequencies over
// repetitions of one scenario. Pods are matched across repetitions by
// their role: the revision of their ReplicaSet and their node.
func checkChances(t *testing.T, runs []*scenarioRun) {
	type tally struct {
		p, lo, hi float64
		n, hits   int
	}
	roles := map[string]*tally{}
	for _, r := range runs {
		if r.pred == nil {
			continue
		}
		revision := map[string]string{}
		for _, rs := range r.rsBefore {
			revision[rs.Name] = rs.Annotations["deployment.kubernetes.io/revision"]
		}
		for _, p := range r.pred.Pods {
			if p.DeleteProbability == nil || (p.Fate != "delete" && p.Fate != "keep") {
				continue
			}
			role := fmt.Sprintf("rev%s@%s", revision[p.ReplicaSet], r.states[p.Name].Node)
			tl := roles[role]
			if tl == nil {
				tl = &tally{}
				roles[role] = tl
			}
			tl.p += *p.DeleteProbability
			lo, hi := *p.DeleteProbability, *p.DeleteProbability
			if r := p.DeleteProbabilityRange; len(r) == 2 {
				lo, hi = r[0], r[1]
			}
			tl.lo += lo
			tl.hi += hi
			tl.n++
			if slices.Contains(r.deleted, p.Name) {
				tl.hits++
			}
		}
	}
	for _, role := range slices.Sorted(maps.Keys(roles)) {
		tl := roles[role]
		n := float64(tl.n)
		want, got := tl.p/n, float64(tl.hits)/n
		// A timing-decided chance is judged against its range (the
		// nearest point of it).
		lo, hi := tl.lo/n, tl.hi/n
		t.Logf("%-10s predicted %.2f (range %.2f-%.2f), deleted in %d of %d runs (%.2f)", role, want, lo, hi, tl.hits, tl.n, got)
		if near := min(max(got, lo), hi); chance.BeyondNoise(tl.hits, tl.n, near) {
			t.Errorf("%s: predicted %.2f-%.2f, measured %.2f over %d runs: off by more than %.2f beyond chance", role, lo, hi, got, tl.n, chance.Tolerance)
		}
	}
}
