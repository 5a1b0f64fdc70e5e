package inprocess

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/controller/nodelifecycle/scheduler"

	"github.com/scale-preview/scale-preview/pkg/outage"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

// The zone queue of 1.37.1 itself, swapped as handleDisruption swaps it:
// from rate 0 (client-go's never limiter, whose QPS() says 1) back to
// exactly 1/s the swap is skipped and nothing is tainted; back to 0.5/s
// the queue resumes. pkg/outage's walkLimiter says the same.
func TestZoneQueueSwapFromNever(t *testing.T) {
	t.Parallel()
	type swap struct {
		rate  float32
		taint bool
	}
	cases := []swap{{1, false}, {2, true}}
	if !testing.Short() {
		cases = append(cases, swap{0.5, true}) // the e2e's rate
	}
	for _, c := range cases {
		q := scheduler.NewRateLimitedTimedQueue(flowcontrol.NewTokenBucketRateLimiter(c.rate, scheduler.EvictionRateLimiterBurst))
		q.SwapLimiter(0) // a small zone in PartialDisruption
		q.Add("node", "uid")
		q.SwapLimiter(c.rate) // FullDisruption while another zone is healthy
		tainted := false
		deadline := time.Now().Add(time.Duration(2.5/c.rate*float32(time.Second)) + 200*time.Millisecond)
		for !tainted && time.Now().Before(deadline) {
			q.Try(klog.Background(), func(scheduler.TimedValue) (bool, time.Duration) { tainted = true; return true, 0 })
			time.Sleep(100 * time.Millisecond) // NodeEvictionPeriod
		}
		if tainted != c.taint {
			t.Errorf("rate %v: tainted %v, want %v", c.rate, tainted, c.taint)
		}
		s := outage.Settings{Condition: outage.ConditionUnreachable, OutageRules: rules.Outage(rules.Newest)}
		s.NodeEvictionRate = float64(c.rate)
		res, err := outage.Predict(outage.Input{Nodes: limiterZone(), Failed: []string{"a-0", "a-1"}, Settings: s})
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Nodes[0].Tainted != nil; got != c.taint || !res.Nodes[0].Certain {
			t.Errorf("rate %v: the model says tainted %v (certain %v), the queue %v", c.rate, got, res.Nodes[0].Certain, tainted)
		}
	}
}

// limiterZone: zone a of 5 nodes, 3 already not Ready (PartialDisruption,
// a small zone: rate 0) before a-0 and a-1 fail (FullDisruption at the
// eviction rate, zone b still healthy).
func limiterZone() []*corev1.Node {
	var out []*corev1.Node
	add := func(name, zone string, ready corev1.ConditionStatus) {
		out = append(out, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelTopologyZone: zone}},
			Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: ready}}}})
	}
	for i := range 5 {
		ready := corev1.ConditionTrue
		if i >= 2 {
			ready = corev1.ConditionUnknown
		}
		add(fmt.Sprintf("a-%d", i), "a", ready)
	}
	add("b-0", "b", corev1.ConditionTrue)
	return out
}
