package statefulset

import (
	"testing"
	"time"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// Before 1.26 there is no start ordinal: spec.ordinals is ignored and
// condemned means ordinal >= replicas. 1.26 has it behind an alpha gate
// (off), 1.27–1.30 on by default, 1.31+ always.
func TestStartOrdinalByVersion(t *testing.T) {
	cases := []struct {
		minor   int
		gates   map[string]bool
		victims []string
	}{
		{21, nil, []string{"web-4", "web-3", "web-2"}},
		{25, nil, []string{"web-4", "web-3", "web-2"}},
		{26, nil, []string{"web-4", "web-3", "web-2"}},
		{26, map[string]bool{rules.StatefulSetStartOrdinal: true}, []string{"web-4", "web-1", "web-0"}},
		{27, nil, []string{"web-4", "web-1", "web-0"}},
		{30, map[string]bool{rules.StatefulSetStartOrdinal: false}, []string{"web-4", "web-3", "web-2"}},
		{31, map[string]bool{rules.StatefulSetStartOrdinal: false}, []string{"web-4", "web-1", "web-0"}},
		{37, nil, []string{"web-4", "web-1", "web-0"}},
	}
	for _, c := range cases {
		set := newSet("web", startAt(2))
		res := predict(t, Input{Set: set, Pods: pods(set, seq(0, 4), nil), Replicas: 2, Minor: c.minor, Gates: c.gates})
		wantList(t, "1."+itoa2(c.minor)+" victims", res.Victims, c.victims)
		if c.victims[1] == "web-3" && !hasNote(res, "spec.ordinals.start=2 is ignored") {
			t.Errorf("1.%d: no note that start is ignored: %v", c.minor, res.Notes)
		}
	}
}

// minReadySeconds does not exist in 1.21, is gated (off) in 1.22 and on by
// default in 1.23–1.24.
func TestMinReadySecondsByVersion(t *testing.T) {
	per := map[int][]podOpt{1: {readyFor(5 * time.Second)}}
	cases := []struct {
		minor int
		gates map[string]bool
		stall bool
	}{
		{21, nil, false},
		{22, nil, false},
		{22, map[string]bool{rules.StatefulSetMinReadySeconds: true}, true},
		{23, nil, true},
		{24, map[string]bool{rules.StatefulSetMinReadySeconds: false}, false},
		{25, map[string]bool{rules.StatefulSetMinReadySeconds: false}, true}, // GA: no longer checked
	}
	for _, c := range cases {
		set := newSet("web", minReady(30))
		res := predict(t, Input{Set: set, Pods: pods(set, seq(0, 3), per), Replicas: 2, Minor: c.minor, Gates: c.gates})
		if res.Stalled != c.stall {
			t.Errorf("1.%d %v: stalled %v, want %v (%s)", c.minor, c.gates, res.Stalled, c.stall, res.StallReason)
		}
	}
}

// The whenScaled policy exists from 1.23 (alpha off), on by default from
// 1.27, unconditional from 1.35.
func TestClaimPolicyByVersion(t *testing.T) {
	for minor, want := range map[int]string{21: "Retain", 23: "Retain", 27: "Delete", 34: "Delete", 35: "Delete"} {
		set := newSet("web", withClaims("Delete", "data"))
		res := predict(t, Input{Set: set, Pods: pods(set, seq(0, 2), nil), Replicas: 2, Minor: minor})
		if res.ClaimPolicy != want {
			t.Errorf("1.%d: policy %s, want %s", minor, res.ClaimPolicy, want)
		}
	}
	set := newSet("web", withClaims("Delete", "data"))
	res := predict(t, Input{Set: set, Pods: pods(set, seq(0, 2), nil), Replicas: 2, Minor: 35, Gates: map[string]bool{rules.StatefulSetAutoDeletePVC: false}})
	if res.ClaimPolicy != "Delete" {
		t.Errorf("1.35 ignores the gate; policy %s", res.ClaimPolicy)
	}
}

func itoa2(i int) string { return string(rune('0'+i/10)) + string(rune('0'+i%10)) }
