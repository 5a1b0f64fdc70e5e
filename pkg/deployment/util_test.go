package deployment

import (
	"fmt"
	"math"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// Port of util/deployment_util_test.go TestResolveFenceposts.
func TestResolveFenceposts(t *testing.T) {
	s := func(v string) *string { return &v }
	tests := []struct {
		maxSurge, maxUnavailable       *string
		desired                        int32
		expectSurge, expectUnavailable int32
		expectError                    bool
	}{
		{s("0%"), s("0%"), 0, 0, 1, false},
		{s("39%"), s("39%"), 10, 4, 3, false},
		{s("oops"), s("39%"), 10, 0, 0, true},
		{s("55%"), s("urg"), 10, 0, 0, true},
		{nil, s("39%"), 10, 0, 3, false},
		{s("39%"), nil, 10, 4, 0, false},
		{nil, nil, 10, 0, 1, false},
	}
	for i, tc := range tests {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			var surge, unavail *intstr.IntOrString
			if tc.maxSurge != nil {
				surge = pct(*tc.maxSurge)
			}
			if tc.maxUnavailable != nil {
				unavail = pct(*tc.maxUnavailable)
			}
			gs, gu, err := ResolveFenceposts(surge, unavail, tc.desired)
			if (err != nil) != tc.expectError {
				t.Errorf("err = %v, want error %v", err, tc.expectError)
			}
			if gs != tc.expectSurge || gu != tc.expectUnavailable {
				t.Errorf("got %d:%d, want %d:%d", gs, gu, tc.expectSurge, tc.expectUnavailable)
			}
		})
	}
}

// Port of TestMaxUnavailable (maxSurge 1).
func TestMaxUnavailable(t *testing.T) {
	dep := func(replicas int32, u *intstr.IntOrString) Deployment {
		return Deployment{Replicas: replicas, Strategy: StrategyRollingUpdate, MaxSurge: num(1), MaxUnavailable: u}
	}
	tests := []struct {
		name string
		d    Deployment
		want int32
	}{
		{"maxUnavailable less than replicas", dep(10, num(5)), 5},
		{"maxUnavailable equal replicas", dep(10, num(10)), 10},
		{"maxUnavailable greater than replicas", dep(5, num(10)), 5},
		{"maxUnavailable with replicas is 0", dep(0, num(10)), 0},
		{"maxUnavailable with Recreate deployment strategy", Deployment{Strategy: StrategyRecreate}, 0},
		{"maxUnavailable less than replicas with percents", dep(10, pct("50%")), 5},
		{"maxUnavailable equal replicas with percents", dep(10, pct("100%")), 10},
		{"maxUnavailable greater than replicas with percents", dep(5, pct("100%")), 5},
	}
	for _, tc := range tests {
		if got := MaxUnavailable(tc.d); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
}

// Port of TestMinAvailable (maxSurge 1).
func TestMinAvailable(t *testing.T) {
	dep := func(replicas int32, u *intstr.IntOrString) Deployment {
		return Deployment{Replicas: replicas, Strategy: StrategyRollingUpdate, MaxSurge: num(1), MaxUnavailable: u}
	}
	tests := []struct {
		name string
		d    Deployment
		want int32
	}{
		{"replicas greater than maxUnavailable", dep(10, num(5)), 5},
		{"replicas equal maxUnavailable", dep(10, num(10)), 0},
		{"replicas less than maxUnavailable", dep(5, num(10)), 0},
		{"replicas is 0", dep(0, num(10)), 0},
		{"minAvailable with Recreate deployment strategy", Deployment{Replicas: 10, Strategy: StrategyRecreate}, 0},
		{"replicas greater than maxUnavailable with percents", dep(10, pct("60%")), 4},
		{"replicas equal maxUnavailable with percents", dep(10, pct("100%")), 0},
		{"replicas less than maxUnavailable with percents", dep(5, pct("100%")), 0},
	}
	for _, tc := range tests {
		if got := MinAvailable(tc.d); got != tc.want {
			t.Errorf("%s: got %d, want %d", tc.name, got, tc.want)
		}
	}
}

// Port of TestGetReplicaSetFraction (maxUnavailable 1), plus the ≤1.31
// results of the same inputs.
func TestGetReplicaSetFraction(t *testing.T) {
	tests := []struct {
		name                     string
		deploymentReplicas       int32
		deploymentStatusReplicas int32
		deploymentMaxSurge       int32
		rsReplicas               int32
		maxAnnotation            string
		want                     int32 // 1.32+
		want31                   int32 // 1.21-1.31 (amd64 int32(+Inf) = MinInt32)
	}{
		{"empty deployment always scales to 0", 0, 0, 0, 10, "", -10, -10},
		{"unsynced deployment does not scale when max-replicas annotation is missing (removed by a 3rd party)", 10, 0, 0, 5, "", 0, math.MinInt32 - 5 + 1<<32},
		{"unsynced deployment does not scale when max-replicas annotation is incorrectly set to 0 (by a 3rd party)", 10, 0, 0, 5, "0", 0, math.MinInt32 - 5 + 1<<32},
		{"scale up by 1/5 should increase RS replicas by 1/5 when max-replicas annotation is missing (removed by a 3rd party)", 120, 100, 0, 50, "", 10, 10},
		{"scale up by 1/5 should increase RS replicas by 1/5 when max-replicas annotation is incorrectly set to 0 (by a 3rd party)", 120, 100, 0, 50, "0", 10, math.MinInt32 - 50 + 1<<32},
		{"scale up by 1/5 should increase RS replicas by 1/5", 120, 0, 0, 50, "100", 10, 10},
		{"scale up with maxSurge by 1/5 should increase RS replicas approximately by 1/5", 120, 0, 10, 50, "110", 9, 9},
		{"scale down by 1/6 should decrease RS replicas by 1/6", 10, 0, 0, 6, "12", -1, -1},
		{"scale down with maxSurge by 1/6 should decrease RS replicas approximately by 1/6", 100, 0, 10, 50, "130", -8, -8},
		// ≤1.31 only: Atoi accepts a sign and leading '+'; 1.32 rejects both.
		{"signed max-replicas", 120, 100, 0, 50, "+100", 10, 10},
		{"negative max-replicas", 10, 20, 0, 6, "-12", -3, -11},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Deployment{
				Replicas:       tc.deploymentReplicas,
				StatusReplicas: tc.deploymentStatusReplicas,
				Strategy:       StrategyRollingUpdate,
				MaxSurge:       num(tc.deploymentMaxSurge),
				MaxUnavailable: num(1),
			}
			r := ReplicaSet{Name: "rs", Replicas: tc.rsReplicas, MaxAnnotation: tc.maxAnnotation}
			if got := replicaSetFraction(&r, d, 37).value; got != tc.want {
				t.Errorf("1.37: got %d, want %d", got, tc.want)
			}
			if got := replicaSetFraction(&r, d, 32).value; got != tc.want {
				t.Errorf("1.32: got %d, want %d", got, tc.want)
			}
			for _, v := range []Version{21, 30, 31} {
				if got := replicaSetFraction(&r, d, v).value; got != tc.want31 {
					t.Errorf("1.%d: got %d, want %d", v, got, tc.want31)
				}
			}
		})
	}
}

// Port of TestNewRSNewReplicas: allRSs holds only rs5, not the new RS.
func TestNewRSNewReplicas(t *testing.T) {
	tests := []struct {
		name          string
		strategy      string
		depReplicas   int32
		newRSReplicas int32
		maxSurge      int32
		expected      int32
	}{
		{"can not scale up - to newRSReplicas", StrategyRollingUpdate, 1, 5, 1, 5},
		{"scale up - to depReplicas", StrategyRollingUpdate, 6, 2, 10, 6},
		{"recreate - to depReplicas", StrategyRecreate, 3, 1, 1, 3},
	}
	rs5 := rs("rs5", 5, noTimestamp)
	for _, tc := range tests {
		d := Deployment{Replicas: tc.depReplicas, Strategy: tc.strategy, MaxSurge: num(tc.maxSurge), MaxUnavailable: num(1)}
		n := rs("new", tc.newRSReplicas, noTimestamp)
		got, err := newRSNewReplicas(d, []*ReplicaSet{&rs5}, &n)
		if err != nil || got != tc.expected {
			t.Errorf("%s: got %d, %v; want %d", tc.name, got, err, tc.expected)
		}
	}
	// maxSurge is read without defaulting here.
	d := Deployment{Replicas: 3, Strategy: StrategyRollingUpdate}
	n := rs("new", 0, noTimestamp)
	if _, err := newRSNewReplicas(d, nil, &n); err == nil {
		t.Errorf("nil maxSurge: want an error")
	}
}

// Port of TestGetNonNegativeInt32FromAnnotation (1.32+), and the same
// inputs through the ≤1.31 Atoi parser.
func TestParseReplicasAnnotation(t *testing.T) {
	tests := []struct {
		in       string
		want32   int32
		valid32  bool
		want31   int32
		valid31  bool
		whyLegit string
	}{
		{"", 0, false, 0, false, "invalid empty"},
		{"invalid", 0, false, 0, false, "invalid"},
		{"-1", 0, false, -1, true, "invalid negative"},
		{"0", 0, true, 0, true, "valid zero"},
		{"13", 13, true, 13, true, "valid"},
		{fmt.Sprint(math.MaxInt32), math.MaxInt32, true, math.MaxInt32, true, "valid max"},
		{fmt.Sprint(uint32(math.MaxInt32) + 1), 0, false, math.MinInt32, true, "invalid max out of range"},
		{fmt.Sprint(uint64(math.MaxUint32) + 1), 0, false, 0, true, "invalid max out of range 2"},
		{"+7", 0, false, 7, true, "sign"},
		{"007", 7, true, 7, true, "leading zeros"},
		{"4294967306", 0, false, 10, true, "wraps in int32()"},
		{"99999999999999999999", 0, false, 0, false, "beyond int64"},
	}
	for _, tc := range tests {
		if v, ok := parseReplicasAnnotation(tc.in, 32); v != tc.want32 || ok != tc.valid32 {
			t.Errorf("1.32 %s %q: got %d,%v want %d,%v", tc.whyLegit, tc.in, v, ok, tc.want32, tc.valid32)
		}
		if v, ok := parseReplicasAnnotation(tc.in, 31); v != tc.want31 || ok != tc.valid31 {
			t.Errorf("1.31 %s %q: got %d,%v want %d,%v", tc.whyLegit, tc.in, v, ok, tc.want31, tc.valid31)
		}
	}
}

func TestRoundToInt32(t *testing.T) {
	tests := []struct {
		in           float64
		want, legacy int32
	}{
		{2.5, 3, 3}, {-2.5, -3, -3}, {2.4999, 2, 2}, {0.49999999999999994, 0, 1},
		{math.Inf(1), math.MinInt32, math.MinInt32}, {math.NaN(), math.MinInt32, math.MinInt32},
		{3e9, math.MinInt32, math.MinInt32}, {-2147483648.4, math.MinInt32, math.MinInt32},
	}
	for _, tc := range tests {
		if got := roundToInt32(tc.in, 31); got != tc.want {
			t.Errorf("1.31 round(%v) = %d, want %d", tc.in, got, tc.want)
		}
		if got := roundToInt32(tc.in, 30); got != tc.legacy {
			t.Errorf("1.30 round(%v) = %d, want %d", tc.in, got, tc.legacy)
		}
	}
}

func TestIsSaturated(t *testing.T) {
	d := newDeployment(5, nil, nil)
	mk := func(replicas, available int32, desired string) *ReplicaSet {
		return &ReplicaSet{Name: "n", Replicas: replicas, Available: available, DesiredAnnotation: desired, New: true}
	}
	tests := []struct {
		rs   *ReplicaSet
		want bool
	}{
		{nil, false},
		{mk(5, 5, "5"), true},
		{mk(5, 4, "5"), false},
		{mk(5, 5, "6"), false},
		{mk(4, 5, "5"), false},
		{mk(5, 5, ""), false},
		{mk(5, 5, "+5"), true},         // Atoi in every version
		{mk(5, 5, "4294967301"), true}, // int32() wraps to 5
		{mk(5, 5, "5 "), false},
	}
	for i, tc := range tests {
		if got := isSaturated(d, tc.rs); got != tc.want {
			t.Errorf("%d: got %v, want %v", i, got, tc.want)
		}
	}
}

func TestOrderings(t *testing.T) {
	a := rs("a", 3, oldTimestamp)
	b := rs("b", 3, newTimestamp)
	c := rs("c", 3, oldTimestamp.Add(999e6)) // same second as a
	d := rs("d", 5, newTimestamp)
	order := func(cmp func(x, y *ReplicaSet) int) string {
		l := []*ReplicaSet{&b, &d, &c, &a}
		sortRS(l, cmp)
		s := ""
		for _, r := range l {
			s += r.Name
		}
		return s
	}
	if got := order(olderFirst); got != "acbd" {
		t.Errorf("olderFirst: %s", got)
	}
	if got := order(bySizeOlder); got != "dacb" {
		t.Errorf("bySizeOlder: %s", got)
	}
	if got := order(bySizeNewer); got != "dbca" {
		t.Errorf("bySizeNewer: %s", got)
	}
}
