package statefulset

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestSpecScenarioTable reproduces a table of scale-down scenarios: one
// UpdateStatefulSet call for foo 5 → 2 (OnDelete), what that sync deletes
// (FirstSync) and creates, on 1.37 and 1.33 (the table's two columns were
// run on v1.37.1 and v1.33.13).
func TestSpecScenarioTable(t *testing.T) {
	type row struct {
		name     string
		parallel bool
		minReady int32
		start    int32 // spec.ordinals.start after the change
		replicas int32 // 0 means 2
		ords     []int // nil means 0..4
		per      map[int][]podOpt
		// what the single sync deletes on 1.37 and 1.33, and creates
		want37, want33 []string
		creates        []string
	}
	notReadyAt := func(ords ...int) map[int][]podOpt {
		m := map[int][]podOpt{}
		for _, o := range ords {
			m[o] = []podOpt{notReady}
		}
		return m
	}
	rows := []row{
		{name: "all healthy/OrderedReady", want37: []string{"foo-4"}, want33: []string{"foo-4"}},
		{name: "all healthy/Parallel", parallel: true,
			want37: []string{"foo-4", "foo-3", "foo-2"}, want33: []string{"foo-4", "foo-3", "foo-2"}},
		{name: "foo-3 and foo-4 not ready/OrderedReady: blocked, foo-3 is first unhealthy", per: notReadyAt(3, 4)},
		{name: "foo-3 and foo-4 not ready/Parallel", parallel: true, per: notReadyAt(3, 4),
			want37: []string{"foo-4", "foo-3", "foo-2"}, want33: []string{"foo-4", "foo-3", "foo-2"}},
		{name: "foo-3 and foo-4 not ready, kept foo-1 not ready/Parallel", parallel: true, per: notReadyAt(1, 3, 4),
			want37: []string{"foo-4", "foo-3", "foo-2"}, want33: []string{"foo-4", "foo-3", "foo-2"}},
		{name: "only foo-4 not ready: it is the first unhealthy", per: notReadyAt(4),
			want37: []string{"foo-4"}, want33: []string{"foo-4"}},
		{name: "foo-2 (condemned) not ready: target foo-4 healthy", per: notReadyAt(2),
			want37: []string{"foo-4"}, want33: []string{"foo-4"}},
		{name: "foo-1 (kept) not ready: nothing", per: notReadyAt(1)},
		{name: "foo-4 terminating: waits", per: map[int][]podOpt{4: {terminating}}},
		{name: "foo-3 terminating, foo-4 healthy/OrderedReady", per: map[int][]podOpt{3: {terminating}},
			want37: []string{"foo-4"}, want33: []string{"foo-4"}},
		{name: "foo-3 terminating, foo-4 healthy/Parallel skips foo-3", parallel: true, per: map[int][]podOpt{3: {terminating}},
			want37: []string{"foo-4", "foo-2"}, want33: []string{"foo-4", "foo-2"}},
		{name: "foo-4 Pending, not ready", per: map[int][]podOpt{4: {pending}},
			want37: []string{"foo-4"}, want33: []string{"foo-4"}},
		{name: "minReadySeconds 30, foo-4 ready 10s: 1.37 deletes, 1.33 blocks", minReady: 30,
			per: map[int][]podOpt{4: {readyFor(10 * time.Second)}}, want37: []string{"foo-4"}},
		{name: "minReadySeconds 30, foo-3 ready 10s, foo-4 ok", minReady: 30,
			per:    map[int][]podOpt{3: {readyFor(10 * time.Second)}},
			want37: []string{"foo-4"}, want33: []string{"foo-4"}},
		{name: "start 0→2, replicas 3, pods 0-2/OrderedReady: creates foo-3, deletion waits",
			start: 2, replicas: 3, ords: []int{0, 1, 2}, creates: []string{"foo-3"}},
		{name: "start 0→2, replicas 3, pods 0-2/Parallel", parallel: true,
			start: 2, replicas: 3, ords: []int{0, 1, 2},
			want37: []string{"foo-1", "foo-0"}, want33: []string{"foo-1", "foo-0"}, creates: []string{"foo-3", "foo-4"}},
	}
	for _, r := range rows {
		for _, minor := range []int{37, 33} {
			t.Run(r.name+"/1."+map[int]string{37: "37", 33: "33"}[minor], func(t *testing.T) {
				opts := []setOpt{minReady(r.minReady)}
				if r.parallel {
					opts = append(opts, parallel)
				}
				if r.start != 0 {
					opts = append(opts, startAt(r.start))
				}
				set := newSet("foo", opts...)
				ords, replicas := r.ords, r.replicas
				if ords == nil {
					ords = seq(0, 4)
				}
				if replicas == 0 {
					replicas = 2
				}
				res := predict(t, Input{Set: set, Pods: pods(set, ords, r.per), Replicas: replicas, Minor: minor})
				want := r.want37
				if minor == 33 {
					want = r.want33
				}
				wantList(t, "first sync deletes", res.FirstSync, want)
				wantList(t, "first sync creates", res.FirstSyncCreates, r.creates)
			})
		}
	}
}

// The rows above over the whole scale-down: OrderedReady keeps going sync
// after sync until a rule blocks.
func TestSpecScenarioTableMultiSync(t *testing.T) {
	set := newSet("foo")
	run := func(per map[int][]podOpt, minor int, s ...setOpt) Result {
		st := newSet("foo", s...)
		return predict(t, Input{Set: st, Pods: pods(st, seq(0, 4), per), Replicas: 2, Minor: minor})
	}
	_ = set
	// foo-3 terminating, foo-4 healthy: foo-4, wait for foo-3, then foo-2.
	res := run(map[int][]podOpt{3: {terminating}}, 37)
	wantNoStall(t, res)
	wantList(t, "victims", res.Victims, []string{"foo-4", "foo-2"})
	wantList(t, "waits", res.Waits, []string{"foo-3"})
	// foo-3 and foo-4 not ready: stall at foo-4 on the first sync.
	res = run(map[int][]podOpt{3: {notReady}, 4: {notReady}}, 37)
	wantStall(t, res, "foo-4", "not the first unhealthy pod (foo-3 is)")
	wantList(t, "deleted", res.DeletedBeforeStall, nil)
	// foo-4 terminating: wait, then foo-3 and foo-2.
	res = run(map[int][]podOpt{4: {terminating}}, 33)
	wantNoStall(t, res)
	wantList(t, "victims", res.Victims, []string{"foo-3", "foo-2"})
}

// The 1.33 → 1.34 change: the first unhealthy pod is picked by availability
// (isUnavailable) instead of Running+Ready (isHealthy).
func TestMinReadySecondsFirstUnhealthyChange(t *testing.T) {
	run := func(minor int, per map[int][]podOpt) Result {
		set := newSet("foo", minReady(30))
		return predict(t, Input{Set: set, Pods: pods(set, seq(0, 4), per), Replicas: 2, Minor: minor})
	}
	young := []podOpt{readyFor(10 * time.Second)}

	// foo-4 ready 10s: 1.33 blocks for 20 more seconds, 1.34 deletes it.
	res := run(33, map[int][]podOpt{4: young})
	wantStall(t, res, "foo-4", "not available (minReadySeconds 30)")
	if want := now.Add(20*time.Second + time.Nanosecond); !res.StallUntil.Equal(want) {
		t.Errorf("stall until %v, want %v", res.StallUntil, want)
	}
	wantList(t, "1.33 victims once unblocked", res.Victims, []string{"foo-4", "foo-3", "foo-2"})
	res = run(34, map[int][]podOpt{4: young})
	wantNoStall(t, res)
	wantList(t, "1.34 victims", res.Victims, []string{"foo-4", "foo-3", "foo-2"})

	// foo-3 ready 10s, foo-4 ok: both delete foo-4; then 1.33 blocks on
	// foo-3 while 1.34 deletes it (it is the first unavailable pod).
	res = run(33, map[int][]podOpt{3: young})
	wantStall(t, res, "foo-3", "not available")
	wantList(t, "1.33 deleted before stall", res.DeletedBeforeStall, []string{"foo-4"})
	res = run(37, map[int][]podOpt{3: young})
	wantNoStall(t, res)
	wantList(t, "1.37 victims", res.Victims, []string{"foo-4", "foo-3", "foo-2"})

	// The change cuts both ways: foo-3 ready 10s, foo-4 not ready. Up to
	// 1.33 foo-4 is the first unhealthy pod (foo-3 counts as healthy) and
	// goes; from 1.34 foo-3 is the first unavailable one and foo-4 blocks.
	per := map[int][]podOpt{3: young, 4: {notReady}}
	res = run(33, per)
	wantStall(t, res, "foo-3", "not available")
	wantList(t, "1.33 deleted before stall", res.DeletedBeforeStall, []string{"foo-4"})
	res = run(34, per)
	wantStall(t, res, "foo-4", "not the first unhealthy pod (foo-3 is)")
	wantList(t, "1.34 deleted before stall", res.DeletedBeforeStall, nil)

	// A kept pod not yet available blocks in every version with minReady.
	res = run(37, map[int][]podOpt{1: young})
	wantStall(t, res, "foo-1", "foo-1 (kept) is Ready but not yet available")
}

// IsPodAvailable: ready+minReady < now up to 1.33, <= now from 1.34.
func TestAvailabilityBoundary(t *testing.T) {
	per := map[int][]podOpt{1: {readyFor(30 * time.Second)}}
	for minor, stall := range map[int]bool{33: true, 34: false} {
		set := newSet("foo", minReady(30))
		res := predict(t, Input{Set: set, Pods: pods(set, seq(0, 3), per), Replicas: 2, Minor: minor})
		if res.Stalled != stall {
			t.Errorf("1.%d: stalled %v, want %v (%s)", minor, res.Stalled, stall, res.StallReason)
		}
	}
}

// A Ready condition without a transition time never becomes available.
func TestReadyWithoutTransitionTime(t *testing.T) {
	set := newSet("foo", minReady(5))
	noTime := func(p *corev1.Pod) { p.Status.Conditions[0].LastTransitionTime = p.CreationTimestamp }
	res := predict(t, Input{Set: set, Pods: pods(set, seq(0, 3), map[int][]podOpt{0: {noTime}}), Replicas: 2})
	wantStall(t, res, "foo-0", "never becomes available")
}
