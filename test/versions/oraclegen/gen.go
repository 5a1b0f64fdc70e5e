package oraclegen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"time"
)

// baseNow is the earliest reference time of a case; every case adds a
// random offset with nanoseconds so that buckets are computed from a "now"
// that is not a whole second, as in a running controller.
var baseNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Set is one random pod set: pods as v1.Pod JSON objects and their ranks.
type Set struct {
	Now   time.Time
	Pods  []json.RawMessage
	Ranks []int
}

// RandomSet builds 2-8 pods that exercise every comparator rule: few nodes,
// mixed (and unknown) phases and readiness, ready and creation times that
// often share a second or a log2 bucket or straddle a bucket boundary,
// restarts, regular init containers, deletion costs including invalid ones
// and, only when sidecars is true (k8s.io/api >= 0.28), init containers
// with restartPolicy Always.
func RandomSet(rng *rand.Rand, sidecars bool) Set {
	now := baseNow.Add(time.Duration(rng.Int64N(int64(24 * time.Hour))))
	pool := make([]time.Time, 1+rng.IntN(6))
	for i := range pool {
		switch r := rng.IntN(20); {
		case r < 13: // anywhere in the last 90 days
			pool[i] = now.Add(-time.Duration(rng.Int64N(int64(90 * 24 * time.Hour))))
		case r < 18: // next to a bucket boundary: now - 2^k ns, +-1s
			k := 30 + rng.IntN(23) // about 1s .. 52 days
			pool[i] = now.Add(-time.Duration(int64(1) << k)).Add(time.Duration(rng.IntN(3)-1) * time.Second)
		case r < 19: // the current second (age below one second)
			pool[i] = now
		default: // a few seconds in the future (clock skew)
			pool[i] = now.Add(time.Duration(1+rng.IntN(5)) * time.Second)
		}
		pool[i] = pool[i].Truncate(time.Second) // the API server stores seconds
	}
	pick := func() time.Time {
		if rng.IntN(40) == 0 {
			return time.Time{}
		}
		t := pool[rng.IntN(len(pool))]
		if rng.IntN(3) == 0 {
			t = t.Add(time.Duration(rng.IntN(5)) * time.Second)
		}
		return t
	}
	nodes := []string{"", "n1", "n2", "n3"}[:1+rng.IntN(4)]
	costs := []string{"", "", "", "", "0", "5", "5", "-3", "100", "+5", "007", "abc", "-0", "2147483647", "2147483648", "-2147483648", " 5"}
	phases := []string{"Running", "Running", "Running", "Running", "Pending", "Pending", "Unknown", "", "Succeeded", "Failed"}

	// A third of the sets are "deep": every pod scheduled, running and
	// ready, so that the comparisons reach the cost, rank, time and restart
	// rules instead of stopping at the first three.
	deep := rng.IntN(3) == 0
	if deep {
		nodes = []string{"n1", "n2", "n3"}[:1+rng.IntN(3)]
		phases = []string{"Running"}
	}

	n := 2 + rng.IntN(7)
	set := Set{Now: now, Pods: make([]json.RawMessage, n), Ranks: make([]int, n)}
	phaseOf := make([]string, n)
	nodeOf := make([]string, n)
	for i := 0; i < n; i++ {
		meta := map[string]any{
			"name":      fmt.Sprintf("pod-%03d", i),
			"namespace": "ns",
			"uid":       fmt.Sprintf("%08x-%04x", rng.Uint32(), i),
		}
		if t := pick(); !t.IsZero() {
			meta["creationTimestamp"] = stamp(t)
		}
		if c := costs[rng.IntN(len(costs))]; c != "" {
			meta["annotations"] = map[string]any{"controller.kubernetes.io/pod-deletion-cost": c}
		}
		nodeOf[i] = nodes[rng.IntN(len(nodes))]
		phaseOf[i] = phases[rng.IntN(len(phases))]

		spec := map[string]any{"containers": []any{map[string]any{"name": "app", "image": "app"}}}
		if nodeOf[i] != "" {
			spec["nodeName"] = nodeOf[i]
		}
		status := map[string]any{}
		if phaseOf[i] != "" {
			status["phase"] = phaseOf[i]
		}

		var conds []any
		if rng.IntN(2) == 0 {
			conds = append(conds, cond("PodScheduled", "True", pick()))
		}
		ready := ""
		switch r := rng.IntN(8); {
		case deep:
			ready = "True"
		case r == 0: // no Ready condition at all
		case r == 1:
			ready = "False"
		default:
			ready = "True"
		}
		if ready != "" {
			conds = append(conds, cond("Ready", ready, pick()))
			if !deep && rng.IntN(20) == 0 { // a second Ready condition: only the first one counts
				other := map[string]string{"True": "False", "False": "True"}[ready]
				conds = append(conds, cond("Ready", other, pick()))
			}
		}
		if len(conds) > 0 {
			status["conditions"] = conds
		}

		statuses := []any{cstatus("app", rng.IntN(3))}
		if rng.IntN(5) == 0 {
			spec["containers"] = append(spec["containers"].([]any), map[string]any{"name": "log", "image": "log"})
			statuses = append(statuses, cstatus("log", rng.IntN(4)))
		}
		status["containerStatuses"] = statuses

		if rng.IntN(3) == 0 {
			proxy := map[string]any{"name": "proxy", "image": "proxy"}
			if sidecars && rng.IntN(4) > 0 {
				proxy["restartPolicy"] = "Always"
			}
			spec["initContainers"] = []any{proxy, map[string]any{"name": "init", "image": "init"}}
			status["initContainerStatuses"] = []any{cstatus("proxy", rng.IntN(3)), cstatus("init", rng.IntN(3))}
		}

		raw, err := json.Marshal(map[string]any{
			"apiVersion": "v1", "kind": "Pod",
			"metadata": meta, "spec": spec, "status": status,
		})
		if err != nil {
			panic(err) // maps of strings and numbers always marshal
		}
		set.Pods[i] = raw
	}

	// Ranks as getPodsRankedByRelatedPodsOnSameNode computes them when the
	// related pods are the set itself; sometimes no ranks at all.
	if rng.IntN(4) > 0 {
		onNode := map[string]int{}
		for i := range n {
			if phaseOf[i] != "Succeeded" && phaseOf[i] != "Failed" {
				onNode[nodeOf[i]]++
			}
		}
		for i := range n {
			set.Ranks[i] = onNode[nodeOf[i]]
		}
	}
	return set
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func cond(typ, status string, t time.Time) map[string]any {
	c := map[string]any{"type": typ, "status": status}
	if !t.IsZero() {
		c["lastTransitionTime"] = stamp(t)
	}
	return c
}

func cstatus(name string, restarts int) map[string]any {
	return map[string]any{"name": name, "image": name, "imageID": "", "ready": true, "restartCount": restarts}
}
