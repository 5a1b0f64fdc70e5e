package deployment

import (
	"strconv"
	"strings"
	"testing"
)

// Port of sync_test.go TestScale. Annotations come from oldDeployment (or
// desiredReplicasAnnotations); no RS has available pods (the upstream rs()
// helper sets no status).
func TestScale(t *testing.T) {
	updatedTemplate := func(replicas int32) Deployment { return newDeployment(replicas, nil, nil) }
	tests := []struct {
		name          string
		deployment    Deployment
		oldDeployment Deployment
		newRS         *ReplicaSet
		oldRSs        []ReplicaSet
		newAvailable  int32
		expected      map[string]int32

		desiredReplicasAnnotations map[string]int32
	}{
		{
			name:          "normal scaling event: 10 -> 12",
			deployment:    newDeployment(12, nil, nil),
			oldDeployment: newDeployment(10, nil, nil),
			newRS:         ptr(rs("foo-v1", 10, newTimestamp)),
			expected:      map[string]int32{"foo-v1": 12},
		},
		{
			name:          "normal scaling event: 10 -> 5",
			deployment:    newDeployment(5, nil, nil),
			oldDeployment: newDeployment(10, nil, nil),
			newRS:         ptr(rs("foo-v1", 10, newTimestamp)),
			expected:      map[string]int32{"foo-v1": 5},
		},
		{
			name:          "proportional scaling: 5 -> 10",
			deployment:    newDeployment(10, nil, nil),
			oldDeployment: newDeployment(5, nil, nil),
			newRS:         ptr(rs("foo-v2", 2, newTimestamp)),
			oldRSs:        []ReplicaSet{rs("foo-v1", 3, oldTimestamp)},
			expected:      map[string]int32{"foo-v2": 4, "foo-v1": 6},
		},
		{
			name:          "proportional scaling: 5 -> 3",
			deployment:    newDeployment(3, nil, nil),
			oldDeployment: newDeployment(5, nil, nil),
			newRS:         ptr(rs("foo-v2", 2, newTimestamp)),
			oldRSs:        []ReplicaSet{rs("foo-v1", 3, oldTimestamp)},
			expected:      map[string]int32{"foo-v2": 1, "foo-v1": 2},
		},
		{
			name:          "proportional scaling: 9 -> 4",
			deployment:    newDeployment(4, nil, nil),
			oldDeployment: newDeployment(9, nil, nil),
			newRS:         ptr(rs("foo-v2", 8, newTimestamp)),
			oldRSs:        []ReplicaSet{rs("foo-v1", 1, oldTimestamp)},
			expected:      map[string]int32{"foo-v2": 4, "foo-v1": 0},
		},
		{
			name:          "proportional scaling: 7 -> 10",
			deployment:    newDeployment(10, nil, nil),
			oldDeployment: newDeployment(7, nil, nil),
			newRS:         ptr(rs("foo-v3", 2, newTimestamp)),
			oldRSs:        []ReplicaSet{rs("foo-v2", 3, oldTimestamp), rs("foo-v1", 2, olderTimestamp)},
			expected:      map[string]int32{"foo-v3": 3, "foo-v2": 4, "foo-v1": 3},
		},
		{
			name:          "proportional scaling: 13 -> 8",
			deployment:    newDeployment(8, nil, nil),
			oldDeployment: newDeployment(13, nil, nil),
			newRS:         ptr(rs("foo-v3", 2, newTimestamp)),
			oldRSs:        []ReplicaSet{rs("foo-v2", 8, oldTimestamp), rs("foo-v1", 3, olderTimestamp)},
			expected:      map[string]int32{"foo-v3": 1, "foo-v2": 5, "foo-v1": 2},
		},
		{
			name:          "leftover distribution: 3 -> 4",
			deployment:    newDeployment(4, nil, nil),
			oldDeployment: newDeployment(3, nil, nil),
			newRS:         ptr(rs("foo-v3", 1, newTimestamp)),
			oldRSs:        []ReplicaSet{rs("foo-v2", 1, oldTimestamp), rs("foo-v1", 1, olderTimestamp)},
			expected:      map[string]int32{"foo-v3": 2, "foo-v2": 1, "foo-v1": 1},
		},
		{
			name:          "leftover distribution: 3 -> 2",
			deployment:    newDeployment(2, nil, nil),
			oldDeployment: newDeployment(3, nil, nil),
			newRS:         ptr(rs("foo-v3", 1, newTimestamp)),
			oldRSs:        []ReplicaSet{rs("foo-v2", 1, oldTimestamp), rs("foo-v1", 1, olderTimestamp)},
			expected:      map[string]int32{"foo-v3": 1, "foo-v2": 1, "foo-v1": 0},
		},
		{
			name:          "proportional scaling (no new rs): 4 -> 5",
			deployment:    newDeployment(5, nil, nil),
			oldDeployment: newDeployment(4, nil, nil),
			oldRSs:        []ReplicaSet{rs("foo-v2", 2, oldTimestamp), rs("foo-v1", 2, olderTimestamp)},
			expected:      map[string]int32{"foo-v2": 3, "foo-v1": 2},
		},
		{
			name:          "proportional scaling: 6 -> 0",
			deployment:    newDeployment(0, nil, nil),
			oldDeployment: newDeployment(6, nil, nil),
			newRS:         ptr(rs("foo-v3", 3, newTimestamp)),
			oldRSs:        []ReplicaSet{rs("foo-v2", 2, oldTimestamp), rs("foo-v1", 1, olderTimestamp)},
			expected:      map[string]int32{"foo-v3": 0, "foo-v2": 0, "foo-v1": 0},
		},
		{
			name:          "proportional scaling: 0 -> 6",
			deployment:    newDeployment(6, nil, nil),
			oldDeployment: newDeployment(6, nil, nil),
			newRS:         ptr(rs("foo-v3", 0, newTimestamp)),
			oldRSs:        []ReplicaSet{rs("foo-v2", 0, oldTimestamp), rs("foo-v1", 0, olderTimestamp)},
			expected:      map[string]int32{"foo-v3": 6, "foo-v2": 0, "foo-v1": 0},
		},
		{
			// Upstream ignores the updates of foo-v3 and foo-v1 ("failed"); the
			// controller computes the same sizes for them anyway.
			name:                       "failed rs update",
			deployment:                 newDeployment(5, nil, nil),
			oldDeployment:              newDeployment(5, nil, nil),
			newRS:                      ptr(rs("foo-v3", 2, newTimestamp)),
			oldRSs:                     []ReplicaSet{rs("foo-v2", 1, oldTimestamp), rs("foo-v1", 1, olderTimestamp)},
			expected:                   map[string]int32{"foo-v3": 2, "foo-v2": 2, "foo-v1": 1},
			desiredReplicasAnnotations: map[string]int32{"foo-v2": 3},
		},
		{
			name:          "deployment with surge pods",
			deployment:    newDeployment(20, num(2), nil),
			oldDeployment: newDeployment(10, num(2), nil),
			newRS:         ptr(rs("foo-v2", 6, newTimestamp)),
			oldRSs:        []ReplicaSet{rs("foo-v1", 6, oldTimestamp)},
			expected:      map[string]int32{"foo-v2": 11, "foo-v1": 11},
		},
		{
			name:          "change both surge and size",
			deployment:    newDeployment(50, num(6), nil),
			oldDeployment: newDeployment(10, num(3), nil),
			newRS:         ptr(rs("foo-v2", 5, newTimestamp)),
			oldRSs:        []ReplicaSet{rs("foo-v1", 8, oldTimestamp)},
			expected:      map[string]int32{"foo-v2": 22, "foo-v1": 34},
		},
		{
			name:          "change both size and template",
			deployment:    updatedTemplate(14),
			oldDeployment: newDeployment(10, nil, nil),
			oldRSs:        []ReplicaSet{rs("foo-v2", 7, newTimestamp), rs("foo-v1", 3, oldTimestamp)},
			expected:      map[string]int32{"foo-v2": 10, "foo-v1": 4},
		},
		{
			name:          "saturated but broken new replica set does not affect old pods",
			deployment:    newDeployment(2, num(1), num(1)),
			oldDeployment: newDeployment(2, num(1), num(1)),
			newRS:         ptr(rs("foo-v2", 2, newTimestamp)),
			oldRSs:        []ReplicaSet{rs("foo-v1", 1, oldTimestamp)},
			expected:      map[string]int32{"foo-v2": 2, "foo-v1": 1},
		},
		// Not upstream: the same, but the new RS is available, so saturated.
		{
			name:          "saturated new replica set scales old to 0",
			deployment:    newDeployment(2, num(1), num(1)),
			oldDeployment: newDeployment(2, num(1), num(1)),
			newRS:         ptr(rs("foo-v2", 2, newTimestamp)),
			newAvailable:  2,
			oldRSs:        []ReplicaSet{rs("foo-v1", 1, oldTimestamp), rs("foo-v0", 3, olderTimestamp)},
			expected:      map[string]int32{"foo-v2": 2, "foo-v1": 0, "foo-v0": 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in []ReplicaSet
			ann := func(r ReplicaSet) ReplicaSet {
				desired := tc.oldDeployment.Replicas
				if v, ok := tc.desiredReplicasAnnotations[r.Name]; ok {
					desired = v
				}
				return annotate(r, tc.oldDeployment, desired)
			}
			if tc.newRS != nil {
				n := ann(*tc.newRS)
				n.New = true
				n.Available = tc.newAvailable
				in = append(in, n)
			}
			for _, o := range tc.oldRSs {
				in = append(in, ann(o))
			}
			for _, v := range []Version{21, 31, 37} {
				next, changes := Scale(tc.deployment, in, v)
				checkSizes(t, next, tc.expected)
				for _, c := range changes {
					if c.Error != "" || c.Step != StepScale {
						t.Errorf("unexpected change %+v", c)
					}
				}
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// Worked examples A-F, each run through the real scale() of v1.37.1.
func TestScaleSpecExamples(t *testing.T) {
	quarter := func(replicas int32) Deployment { return newDeployment(replicas, pct("25%"), pct("25%")) }
	tests := []struct {
		name    string
		d, old  Deployment
		rss     []ReplicaSet
		want    map[string]int32
		changes string
		reasons []string
	}{
		{
			name: "A: HPA 10 -> 5 mid-rollout, 25%/25%",
			d:    quarter(5), old: quarter(10),
			rss:     []ReplicaSet{rs("v1", 8, oldTimestamp), newRS("v2", 5, newTimestamp)},
			want:    map[string]int32{"v1": 4, "v2": 3},
			changes: "scale v1 8->4; scale v2 5->3; ",
			reasons: []string{"proportional scaling: 8*7/13 -> 4", "proportional scaling: 5*7/13 -> 3"},
		},
		{
			name: "B: 10 -> 7, surge 1 unavailable 0, tie at 4 goes older first",
			d:    newDeployment(7, num(1), num(0)), old: newDeployment(10, num(1), num(0)),
			rss:     []ReplicaSet{newRS("v3", 4, newTimestamp), rs("v2", 4, oldTimestamp), rs("v1", 3, olderTimestamp)},
			want:    map[string]int32{"v3": 3, "v2": 3, "v1": 2},
			changes: "scale v2 4->3; scale v3 4->3; scale v1 3->2; ",
		},
		{
			name: "C: leftover 3 -> 2 with surge 0 goes to the oldest",
			d:    newDeployment(2, num(0), pct("25%")), old: newDeployment(3, num(0), pct("25%")),
			rss:     []ReplicaSet{newRS("v3", 1, newTimestamp), rs("v2", 1, oldTimestamp), rs("v1", 1, olderTimestamp)},
			want:    map[string]int32{"v3": 1, "v2": 1, "v1": 0},
			changes: "scale v1 1->0; ",
			reasons: []string{"proportional scaling: 1*2/3 -> 1; leftover -1 to the first (largest) replica set"},
		},
		{
			name: "D: 20 -> 11 at 25%/25%",
			d:    quarter(11), old: quarter(20),
			rss:     []ReplicaSet{newRS("v2", 10, newTimestamp), rs("v1", 15, oldTimestamp)},
			want:    map[string]int32{"v2": 6, "v1": 8},
			changes: "scale v1 15->8; scale v2 10->6; ",
			reasons: []string{"proportional scaling: 15*14/25 -> 8", "proportional scaling: 10*14/25 -> 6"},
		},
		{
			name: "E: 10 -> 0",
			d:    quarter(0), old: quarter(10),
			rss:     []ReplicaSet{newRS("v2", 5, newTimestamp), rs("v1", 8, oldTimestamp)},
			want:    map[string]int32{"v2": 0, "v1": 0},
			changes: "scale v1 8->0; scale v2 5->0; ",
		},
		{
			name: "F: one active RS 10 -> 4",
			d:    quarter(4), old: quarter(10),
			rss:     []ReplicaSet{newRS("v2", 10, newTimestamp), rs("v1", 0, oldTimestamp)},
			want:    map[string]int32{"v2": 4, "v1": 0},
			changes: "scale v2 10->4; ",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := make([]ReplicaSet, len(tc.rss))
			for i, r := range tc.rss {
				in[i] = annotate(r, tc.old, tc.old.Replicas)
			}
			if !IsScalingEvent(tc.d, in, Latest) {
				t.Fatalf("not a scaling event")
			}
			next, changes := Sync(tc.d, in, Latest)
			checkSizes(t, next, tc.want)
			if got := changeLog(changes); got != tc.changes {
				t.Errorf("changes %q, want %q", got, tc.changes)
			}
			for i, want := range tc.reasons {
				if i >= len(changes) || changes[i].Reason != want {
					t.Errorf("reason %d: got %+v, want %q", i, changes, want)
				}
			}
			// Every RS the controller touched carries the new annotations.
			wantMax := tc.d.Replicas + MaxSurge(tc.d)
			for _, r := range next {
				if r.Replicas > 0 && (r.DesiredAnnotation != itoa(tc.d.Replicas) || r.MaxAnnotation != itoa(wantMax)) {
					t.Errorf("%s annotations %s/%s, want %d/%d", r.Name, r.DesiredAnnotation, r.MaxAnnotation, tc.d.Replicas, wantMax)
				}
			}
			if IsScalingEvent(tc.d, next, Latest) {
				t.Errorf("still a scaling event after scale()")
			}
		})
	}
	// F's annotations: 4/5 (ceil(25% of 4) = 1).
	in := []ReplicaSet{annotate(newRS("v2", 10, newTimestamp), quarter(10), 10)}
	next, _ := Scale(quarter(4), in, Latest)
	if next[0].DesiredAnnotation != "4" || next[0].MaxAnnotation != "5" {
		t.Errorf("F annotations %s/%s, want 4/5", next[0].DesiredAnnotation, next[0].MaxAnnotation)
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

func TestIsScalingEvent(t *testing.T) {
	d := newDeployment(5, nil, nil)
	tests := []struct {
		name string
		rss  []ReplicaSet
		v    Version
		want bool
	}{
		{"annotation equal", []ReplicaSet{{Name: "a", Replicas: 3, DesiredAnnotation: "5"}}, 37, false},
		{"annotation differs", []ReplicaSet{{Name: "a", Replicas: 3, DesiredAnnotation: "4"}}, 37, true},
		{"inactive RS ignored", []ReplicaSet{{Name: "a", Replicas: 0, DesiredAnnotation: "4"}}, 37, false},
		{"missing annotation", []ReplicaSet{{Name: "a", Replicas: 3}}, 37, false},
		{"negative: 1.32 ignores", []ReplicaSet{{Name: "a", Replicas: 3, DesiredAnnotation: "-5"}}, 32, false},
		{"negative: 1.31 parses", []ReplicaSet{{Name: "a", Replicas: 3, DesiredAnnotation: "-5"}}, 31, true},
		{"+5: 1.31 reads 5", []ReplicaSet{{Name: "a", Replicas: 3, DesiredAnnotation: "+5"}}, 31, false},
		{"+5: 1.32 ignores", []ReplicaSet{{Name: "a", Replicas: 3, DesiredAnnotation: "+5"}}, 32, false},
		{"wrap: 1.31 reads 4294967301 as 5", []ReplicaSet{{Name: "a", Replicas: 3, DesiredAnnotation: "4294967301"}}, 31, false},
		{"overflow: 1.32 ignores 4294967301", []ReplicaSet{{Name: "a", Replicas: 3, DesiredAnnotation: "4294967301"}}, 32, false},
		{"wrap: 1.31 reads 4294967302 as 6", []ReplicaSet{{Name: "a", Replicas: 3, DesiredAnnotation: "4294967302"}}, 31, true},
	}
	for _, tc := range tests {
		if got := IsScalingEvent(d, tc.rss, tc.v); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

// While paused every sync runs scale(), even without a scaling event: a
// total below spec.replicas+maxSurge is filled up; the rollout never runs.
func TestSyncPaused(t *testing.T) {
	d := newDeployment(10, num(3), num(0))
	d.Paused = true
	in := []ReplicaSet{
		annotate(rs("v1", 6, oldTimestamp), d, 10),
		annotate(newRS("v2", 5, newTimestamp), d, 10),
	}
	if IsScalingEvent(d, in, Latest) {
		t.Fatal("unexpected scaling event")
	}
	next, changes := Sync(d, in, Latest)
	// allowed 13, total 11: both fractions are 0 (x*13/13), leftover +2 to v1.
	checkSizes(t, next, map[string]int32{"v1": 8, "v2": 5})
	if got := changeLog(changes); got != "scale v1 6->8; " {
		t.Errorf("changes %q", got)
	}
	if _, c := Rollout(d, in, Latest); len(c) != 0 {
		t.Errorf("Rollout while paused changed %v", c)
	}
}

// toAdd == 0: no size changes, but annotations are refreshed on every active RS.
func TestScaleRefreshesAnnotations(t *testing.T) {
	d := newDeployment(10, num(2), num(0))
	in := []ReplicaSet{
		{Name: "v1", Replicas: 7, Created: oldTimestamp, DesiredAnnotation: "9", MaxAnnotation: "11"},
		{Name: "v2", Replicas: 5, Created: newTimestamp, New: true},
		{Name: "v0", Replicas: 0, Created: olderTimestamp, DesiredAnnotation: "3", MaxAnnotation: "3"},
	}
	next, changes := Scale(d, in, Latest)
	if len(changes) != 0 {
		t.Errorf("unexpected changes %v", changes)
	}
	for _, r := range next[:2] {
		if r.DesiredAnnotation != "10" || r.MaxAnnotation != "12" {
			t.Errorf("%s annotations %s/%s", r.Name, r.DesiredAnnotation, r.MaxAnnotation)
		}
	}
	if next[2].DesiredAnnotation != "3" {
		t.Errorf("inactive RS annotations touched")
	}
}

// A single active RS whose size already matches is left alone, annotations
// included, so the stale annotation keeps isScalingEvent true and the
// rollout never runs.
func TestScaleSingleActiveStaleAnnotation(t *testing.T) {
	d := newDeployment(5, num(1), num(0))
	in := []ReplicaSet{{Name: "v1", Replicas: 5, Created: oldTimestamp, DesiredAnnotation: "3", MaxAnnotation: "4"}}
	d.NewReplicaSetName = "v2"
	next, changes := Sync(d, in, Latest)
	if len(changes) != 0 || next[0].DesiredAnnotation != "3" || len(next) != 1 {
		t.Errorf("got %+v %+v", next, changes)
	}
}

// No active RS and no new RS: the newest old RS takes spec.replicas.
func TestScaleNoActiveNoNew(t *testing.T) {
	d := newDeployment(4, nil, nil)
	in := []ReplicaSet{rs("v1", 0, olderTimestamp), rs("v2", 0, oldTimestamp)}
	next, changes := Scale(d, in, Latest)
	checkSizes(t, next, map[string]int32{"v1": 0, "v2": 4})
	if len(changes) != 1 || !strings.Contains(changes[0].Reason, "newest") {
		t.Errorf("changes %+v", changes)
	}
}

// Recreate: scale() only has the single-active and saturated branches.
func TestScaleRecreateNoProportional(t *testing.T) {
	d := Deployment{Replicas: 3, Strategy: StrategyRecreate}
	in := []ReplicaSet{
		{Name: "v1", Replicas: 2, Created: oldTimestamp, DesiredAnnotation: "5", MaxAnnotation: "5"},
		{Name: "v2", Replicas: 3, Created: newTimestamp, New: true, DesiredAnnotation: "5", MaxAnnotation: "5"},
	}
	next, changes := Scale(d, in, Latest)
	if len(changes) != 0 || next[0].DesiredAnnotation != "5" {
		t.Errorf("got %+v %+v", next, changes)
	}
}

// ≤1.31: a max-replicas of "0" divides by zero. Scaling up, that RS takes
// all that is left; scaling down, its size wraps negative, the leftover
// clamps the first RS to 0 and the API server rejects the negative update,
// so the sync stops there. 1.32+ falls back to status.replicas.
func TestScaleLegacyDivideByZero(t *testing.T) {
	base := newDeployment(100, num(0), num(1))
	base.StatusReplicas = 100
	in := []ReplicaSet{
		annotate(rs("v1", 50, oldTimestamp), base, 100),
		annotate(newRS("v2", 50, newTimestamp), base, 100),
	}
	in[1].MaxAnnotation = "0"

	up := base
	up.Replicas = 120
	next, _ := Scale(up, in, 31)
	checkSizes(t, next, map[string]int32{"v1": 50, "v2": 70})
	next, _ = Scale(up, in, 32)
	checkSizes(t, next, map[string]int32{"v1": 60, "v2": 60})

	down := base
	down.Replicas = 80
	next, changes := Scale(down, in, 31)
	checkSizes(t, next, map[string]int32{"v1": 0, "v2": 50})
	if len(changes) != 2 || changes[0].To != 0 || changes[1].Error == "" || changes[1].To >= 0 {
		t.Fatalf("changes %+v", changes)
	}
	// Next sync: v2 still says 100, v1 is inactive: v2 alone takes 80.
	next, changes = Sync(down, next, 31)
	checkSizes(t, next, map[string]int32{"v1": 0, "v2": 80})
	if changeLog(changes) != "scale v2 50->80; " {
		t.Errorf("changes %q", changeLog(changes))
	}
	next, _ = Scale(down, in, 32)
	checkSizes(t, next, map[string]int32{"v1": 40, "v2": 40})
}
