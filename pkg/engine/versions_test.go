package engine

import (
	"testing"
	"time"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// Pairs of pods built so that one rule that changed across releases decides
// them when it is in force, and a later rule decides them the other way
// when it is not. The per-version rules these expectations follow are
// checked pair by pair against the real ActivePodsWithRanks.Less of 1.21,
// 1.25, 1.29 and 1.33 (every gate combination that matters) by
// test/conformance's TestVersionOracles: make conformance-versions.

// costPair: a carries a high deletion cost but was created an hour ago; b
// has no cost and was created 30 days ago (another log2 bucket). With the
// cost rule b goes first; without it the newer a does.
func costPair() (a, b Pod) {
	ready := now.Add(-2 * time.Hour)
	a = newPod("a", "b-uid").node("n1").readyAt(ready).cost("100").created(time.Hour).pod()
	b = newPod("b", "a-uid").node("n1").readyAt(ready).created(30 * 24 * time.Hour).pod()
	return
}

// agePair: a was created 5s before b, both about 11h ago (log2 bucket 45),
// and a has the lower UID. Linear comparison deletes the newer b first; the
// log scale puts both in one bucket and deletes the lower UID, a, first.
func agePair() (a, b Pod) {
	ready := now.Add(-12 * time.Hour)
	a = newPod("a", "1111").node("n1").readyAt(ready).created(40005 * time.Second).pod()
	b = newPod("b", "2222").node("n1").readyAt(ready).created(40000 * time.Second).pod()
	return
}

// readyPair is agePair on rule 6: ready times 5s apart in one bucket.
func readyPair() (a, b Pod) {
	created := now.Add(-30 * 24 * time.Hour)
	a = newPod("a", "1111").node("n1").readyFor(40005 * time.Second).createdAt(created).pod()
	b = newPod("b", "2222").node("n1").readyFor(40000 * time.Second).createdAt(created).pod()
	return
}

// sidecarPair: same regular restarts; a's sidecar restarted twice, b has
// none; a is older (another bucket). From 1.32 the sidecar restarts delete
// a first; before, the newer b goes first.
func sidecarPair() (a, b Pod) {
	ready := now.Add(-2 * time.Hour)
	a = newPod("a", "1111").node("n1").readyAt(ready).restarts(1).sidecarRestarts(2).created(30 * 24 * time.Hour).pod()
	b = newPod("b", "2222").node("n1").readyAt(ready).restarts(1).created(time.Hour).pod()
	return
}

type outcome struct {
	aFirst bool
	rule   Rule
	how    How
}

func decide(t *testing.T, r rules.RuleSet, a, b Pod) outcome {
	t.Helper()
	c := Comparator{Rules: r, Now: now}
	d := c.Compare(&a, &b)
	if got := c.Less(&a, &b); got != d.AFirst {
		t.Fatalf("1.%d: Less = %v, Compare.AFirst = %v", r.Minor, got, d.AFirst)
	}
	if rev := c.Less(&b, &a); rev && d.AFirst {
		t.Fatalf("1.%d: Less(a,b) and Less(b,a) both true", r.Minor)
	}
	return outcome{d.AFirst, d.Rule, d.How}
}

func TestVersionFlips(t *testing.T) {
	var (
		costDecides    = outcome{false, DeletionCost, ByValue}
		costLinear     = outcome{true, CreationTime, ByLinear}
		costBucket     = outcome{true, CreationTime, ByBucket}
		ageLinear      = outcome{false, CreationTime, ByLinear}
		ageUID         = outcome{true, CreationTime, ByUID}
		readyLinear    = outcome{false, ReadyTime, ByLinear}
		readyUID       = outcome{true, ReadyTime, ByUID}
		sidecarDecides = outcome{true, Restarts, BySidecar}
		sidecarIgnored = outcome{false, CreationTime, ByBucket}
		sidecarLinear  = outcome{false, CreationTime, ByLinear}
	)
	pairs := map[string]func() (Pod, Pod){"cost": costPair, "age": agePair, "ready": readyPair, "sidecar": sidecarPair}
	for _, c := range []struct {
		minor int
		gates map[string]bool
		want  map[string]outcome
	}{
		// 1.21: both gates alpha and off; linear ages, no cost rule.
		{21, nil, map[string]outcome{"cost": costLinear, "age": ageLinear, "ready": readyLinear, "sidecar": sidecarLinear}},
		{21, map[string]bool{rules.PodDeletionCost: true}, map[string]outcome{"cost": costDecides, "age": ageLinear, "ready": readyLinear}},
		{21, map[string]bool{rules.LogarithmicScaleDown: true}, map[string]outcome{"cost": costBucket, "age": ageUID, "ready": readyUID}},
		{21, map[string]bool{rules.PodDeletionCost: true, rules.LogarithmicScaleDown: true}, map[string]outcome{"cost": costDecides, "age": ageUID, "ready": readyUID}},
		// 1.22: both beta and on.
		{22, nil, map[string]outcome{"cost": costDecides, "age": ageUID, "ready": readyUID, "sidecar": sidecarIgnored}},
		{22, map[string]bool{rules.PodDeletionCost: false}, map[string]outcome{"cost": costBucket, "age": ageUID}},
		{25, map[string]bool{rules.PodDeletionCost: false, rules.LogarithmicScaleDown: false}, map[string]outcome{"cost": costLinear, "age": ageLinear, "ready": readyLinear}},
		// 1.30: the last release where the log scale can be turned off.
		{30, map[string]bool{rules.LogarithmicScaleDown: false}, map[string]outcome{"cost": costDecides, "age": ageLinear, "ready": readyLinear}},
		// 1.31: the log scale is locked on; sidecars still ignored.
		{31, nil, map[string]outcome{"cost": costDecides, "age": ageUID, "ready": readyUID, "sidecar": sidecarIgnored}},
		// 1.32: compareMaxContainerRestarts looks at restartable init containers.
		{32, nil, map[string]outcome{"cost": costDecides, "age": ageUID, "ready": readyUID, "sidecar": sidecarDecides}},
		{33, map[string]bool{rules.PodDeletionCost: false}, map[string]outcome{"cost": costBucket, "age": ageUID, "sidecar": sidecarDecides}},
		// 1.37: LogarithmicScaleDown is gone, the log scale unconditional.
		{37, nil, map[string]outcome{"cost": costDecides, "age": ageUID, "ready": readyUID, "sidecar": sidecarDecides}},
		{37, map[string]bool{rules.PodDeletionCost: false}, map[string]outcome{"cost": costBucket, "age": ageUID, "sidecar": sidecarDecides}},
	} {
		r := ruleSet(t, c.minor, c.gates)
		for name, want := range c.want {
			a, b := pairs[name]()
			if got := decide(t, r, a, b); got != want {
				t.Errorf("1.%d %v, %s pair: aFirst=%v by %s/%s, want aFirst=%v by %s/%s",
					c.minor, c.gates, name, got.aFirst, got.rule.Name(), got.how, want.aFirst, want.rule.Name(), want.how)
			}
		}
	}
}

// With default gates, sweeping every supported version: each pair's
// outcome changes exactly at the release that changed its rule, and pairs
// decided by rules that never changed decide the same everywhere.
func TestVersionSweepDefaults(t *testing.T) {
	stable := map[string]func() (Pod, Pod){
		"restarts": func() (Pod, Pod) {
			return newPod("a", "2").node("n1").readyFor(time.Hour).restarts(3).pod(),
				newPod("b", "1").node("n1").readyFor(time.Hour).restarts(1).pod()
		},
		"unassigned": func() (Pod, Pod) {
			return newPod("a", "2").readyFor(time.Hour).pod(), newPod("b", "1").node("n1").notReady().pod()
		},
		"bucket": func() (Pod, Pod) { // different buckets: newer first, in every version
			return newPod("a", "2").node("n1").readyFor(time.Hour).pod(), newPod("b", "1").node("n1").readyFor(48 * time.Hour).pod()
		},
	}
	first := map[string]outcome{}
	for m := rules.Oldest; m <= rules.Newest; m++ {
		r := ruleSet(t, m, nil)
		check := func(name string, a, b Pod, want outcome) {
			t.Helper()
			if got := decide(t, r, a, b); got != want {
				t.Errorf("1.%d, %s pair: aFirst=%v by %s/%s, want aFirst=%v by %s/%s", m, name, got.aFirst, got.rule.Name(), got.how, want.aFirst, want.rule.Name(), want.how)
			}
		}
		a, b := costPair()
		if m >= 22 {
			check("cost", a, b, outcome{false, DeletionCost, ByValue})
		} else {
			check("cost", a, b, outcome{true, CreationTime, ByLinear})
		}
		a, b = agePair()
		if m >= 22 {
			check("age", a, b, outcome{true, CreationTime, ByUID})
		} else {
			check("age", a, b, outcome{false, CreationTime, ByLinear})
		}
		a, b = sidecarPair()
		if m >= 32 {
			check("sidecar", a, b, outcome{true, Restarts, BySidecar})
		} else {
			how := ByBucket
			if m < 22 {
				how = ByLinear
			}
			check("sidecar", a, b, outcome{false, CreationTime, how})
		}
		for name, mk := range stable {
			a, b := mk()
			got := decide(t, r, a, b)
			if m == rules.Oldest {
				first[name] = got
				continue
			}
			if got.aFirst != first[name].aFirst || got.rule != first[name].rule {
				t.Errorf("1.%d, %s pair: aFirst=%v by %s, but 1.%d says aFirst=%v by %s", m, name, got.aFirst, got.rule.Name(), rules.Oldest, first[name].aFirst, first[name].rule.Name())
			}
		}
	}
}

// The orders Predict produces flip with the same rules: scale three pods
// to one and see who survives.
func TestVersionPredictions(t *testing.T) {
	pods := func() []Pod {
		ready := now.Add(-2 * time.Hour)
		return []Pod{
			newPod("keep-me", "a").node("n1").readyAt(ready).cost("1000").created(time.Hour).pod(),
			newPod("older", "b").node("n1").readyAt(ready).created(40005 * time.Second).pod(),
			newPod("newer", "c").node("n1").readyAt(ready).created(40000 * time.Second).pod(),
		}
	}
	for _, c := range []struct {
		minor int
		gates map[string]bool
		want  string // the survivor
	}{
		// Linear ages (1.21 defaults, or the gate off until 1.30): the two
		// newest go, keep-me (1h) and newer (40000s); older survives.
		{21, nil, "older"},
		{25, map[string]bool{rules.PodDeletionCost: false, rules.LogarithmicScaleDown: false}, "older"},
		// The cost rule keeps keep-me whatever the age rule.
		{21, map[string]bool{rules.PodDeletionCost: true}, "keep-me"},
		{22, nil, "keep-me"},
		{30, map[string]bool{rules.LogarithmicScaleDown: false}, "keep-me"},
		{37, nil, "keep-me"},
		// Log scale without cost: keep-me (bucket 41) goes first, then older
		// and newer share bucket 45 and the lower UID, older's "b", goes.
		{21, map[string]bool{rules.LogarithmicScaleDown: true}, "newer"},
		{33, map[string]bool{rules.PodDeletionCost: false}, "newer"},
		{37, map[string]bool{rules.PodDeletionCost: false}, "newer"},
	} {
		r := ruleSet(t, c.minor, c.gates)
		res := Predict(Input{Candidates: pods(), Related: map[string]int{"n1": 3}, Delete: 2, Now: now, Rules: r})
		var survivor string
		for _, p := range res.Order {
			if !p.Delete {
				survivor = p.Pod.Name
			}
		}
		if survivor != c.want {
			t.Errorf("1.%d %v: survivor %s, want %s (deleted %v)", c.minor, c.gates, survivor, c.want, names(res))
		}
	}
}
