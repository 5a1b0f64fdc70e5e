package engine

import (
	"math/rand/v2"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// The orderings of this package are restrictions of one comparator: where
// a restriction separates two pods it must agree with the full comparison,
// and the full comparison must be antisymmetric and name the same rule
// both ways.
func TestOneComparator(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(vals ...int64) int64 { return vals[rng.IntN(len(vals))] }
	randKey := func() key {
		k := key{
			assigned: rng.IntN(4) > 0, phase: int(pick(0, 1, 2, 2, 2)), ready: rng.IntN(3) > 0,
			cost: int32(pick(0, 0, 5)), rank: int(pick(1, 2)), restarts: int(pick(0, 1)),
			sidecar: int(pick(0, 2)), uid: string(rune('a' + rng.IntN(3))),
		}
		k.readyZero, k.createdZero = rng.IntN(8) == 0, rng.IntN(8) == 0
		if !k.readyZero {
			k.readyNs, k.readyBucket = pick(1, 2, 3), pick(40, 41)
		}
		if !k.createdZero {
			k.createdNs, k.createdBucket = pick(1, 2, 3), pick(40, 41)
		}
		return k
	}
	for _, minor := range []int{21, 22, 31, 37} {
		rs, err := rules.For(minor, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := &Comparator{Rules: rs}
		for i := 0; i < 20000; i++ {
			a, b := randKey(), randKey()
			r, rule, how := c.cmp(&a, &b)
			r2, rule2, how2 := c.cmp(&b, &a)
			if r != -r2 || rule != rule2 || how != how2 {
				t.Fatalf("1.%d: cmp(a,b)=%d %v %s but cmp(b,a)=%d %v %s for %+v %+v", minor, r, rule, how, r2, rule2, how2, a, b)
			}
			if c.less(&a, &b) != (r < 0) {
				t.Fatalf("less disagrees with cmp for %+v %+v", a, b)
			}
			for _, through := range []Rule{Colocation, ReadyTime, CreationTime} {
				if p := c.consistentCmp(&a, &b, through); p != 0 && p != r {
					t.Fatalf("consistentCmp through %v = %d, cmp = %d", through, p, r)
				}
			}
		}
	}
}

// Readiness is the first Ready condition, as in the controllers' IsPodReady;
// the ready time is that condition's, at whole seconds.
func TestReadySinceFirstReadyCondition(t *testing.T) {
	t1, t2 := now.Add(-time.Hour+300*time.Millisecond), now.Add(-2*time.Hour)
	cond := func(s corev1.ConditionStatus, at time.Time) corev1.PodCondition {
		return corev1.PodCondition{Type: corev1.PodReady, Status: s, LastTransitionTime: metav1.NewTime(at)}
	}
	for _, c := range []struct {
		conds []corev1.PodCondition
		ready bool
		since time.Time
	}{
		{nil, false, time.Time{}},
		{[]corev1.PodCondition{cond(corev1.ConditionFalse, t1), cond(corev1.ConditionTrue, t2)}, false, time.Time{}},
		{[]corev1.PodCondition{cond(corev1.ConditionTrue, t1), cond(corev1.ConditionTrue, t2)}, true, t1.Truncate(time.Second)},
	} {
		p := &corev1.Pod{Status: corev1.PodStatus{Conditions: c.conds}}
		ep := FromPod(p)
		if ep.Ready != c.ready || !ep.ReadyTime.Equal(c.since) || !ReadySince(p).Equal(c.since) {
			t.Errorf("%v: ready %v since %v, want %v %v", c.conds, ep.Ready, ep.ReadyTime, c.ready, c.since)
		}
	}
}

// IsPodAvailable's boundary moved in 1.34: the exact moment
// ready+minReadySeconds counts as available only from then on.
func TestAvailableBoundary(t *testing.T) {
	ready := now.Add(-30 * time.Second)
	p := &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready)}}}}
	for _, c := range []struct {
		minReady   int32
		atBoundary bool
		want       bool
	}{
		{0, false, true}, {29, false, true}, {30, false, false}, {30, true, true}, {31, true, false},
	} {
		if got := Available(p, c.minReady, now, c.atBoundary); got != c.want {
			t.Errorf("minReady %d, atBoundary %v: available %v, want %v", c.minReady, c.atBoundary, got, c.want)
		}
	}
	for _, m := range []int{33, 34} {
		if r := rules.Defaults(m); r.AvailableAtBoundary != (m >= 34) {
			t.Errorf("1.%d: AvailableAtBoundary %v", m, r.AvailableAtBoundary)
		}
	}
}
