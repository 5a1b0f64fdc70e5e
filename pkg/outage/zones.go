package outage

import (
	"fmt"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	nodetopology "k8s.io/component-helpers/node/topology"
)

// taintTick is NodeEvictionPeriod: the tainting pass runs every 100 ms.
const taintTick = 0.1

// Detection is when the controller marks a failed node not Ready. Not
// Ready: the next monitor pass after the kubelet reports it. Unreachable:
// the pass that saw the kubelet's last lease renewal R (at most one
// renewal interval, jitter included, before the failure) stamps
// probeTimestamp, up to a period after R; Ready turns Unknown at the
// first pass after probeTimestamp + grace (tryUpdateNodeHealth), up to a
// period later (the passes slide by their own duration, so not a whole
// number of periods): within (R + grace, R + grace + 2 periods].
func Detection(s Settings) Window {
	p := s.NodeMonitorPeriod.Seconds()
	if s.Condition == ConditionNotReady {
		return Window{0, p}
	}
	renew := s.LeaseRenewInterval.Seconds() * (1 + s.LeaseRenewJitter)
	g := s.NodeMonitorGracePeriod.Seconds()
	return Window{math.Max(0, g-renew), g + 2*p}
}

// ComputeZoneState is the controller's ComputeZoneState: no Ready node is
// full disruption; more than 2 not Ready and at least the threshold's
// share is partial.
func ComputeZoneState(ready, notReady int, threshold float64) string {
	switch {
	case ready == 0 && notReady > 0:
		return StateFull
	case notReady > 2 && float32(notReady)/float32(notReady+ready) >= float32(threshold):
		return StatePartial
	}
	return StateNormal
}

// ZoneRate is setLimiterInZone's rate: normal and full disruption (while
// another zone is not fully down) at the eviction rate; partial at the
// secondary rate in a zone of more than the large-cluster threshold, else 0.
func ZoneRate(s Settings, state string, size int) float64 {
	if state == StatePartial {
		if size > s.LargeClusterSizeThreshold {
			return s.SecondaryNodeEvictionRate
		}
		return 0
	}
	return s.NodeEvictionRate
}

// zone is one zone key's nodes, as the controller counts them.
type zone struct {
	key, name string
	// total and preNotReady count the nodes not excluded; queued are the
	// failed nodes, excluded ones too (they share the zone's queue).
	total, preNotReady, failed int
	queued                     []string
}

// state is the zone's state once n of its failed nodes are marked.
func (z *zone) state(s Settings, n int) string {
	nr := z.preNotReady + n
	return ComputeZoneState(z.total-nr, nr, s.UnhealthyZoneThreshold)
}

// passes are the states the zone goes through as its failed nodes are
// marked one by one.
func (z *zone) passes(s Settings) []string {
	var out []string
	for n := 0; n <= z.failed; n++ {
		if st := z.state(s, n); len(out) == 0 || out[len(out)-1] != st {
			out = append(out, st)
		}
	}
	return out
}

// zoneName is the zone as printed: the zone label, region/zone when the
// node has a region.
func zoneName(n *corev1.Node) string {
	region, zone, _ := strings.Cut(nodetopology.GetZoneKey(n), ":\x00:")
	if region == "" {
		return zone
	}
	return region + "/" + zone
}

// zoneOf keys a node as the controller does (region and zone).
func zoneOf(n *corev1.Node) string { return nodetopology.GetZoneKey(n) }

func excluded(n *corev1.Node) bool {
	_, ok := n.Labels[LabelExcludeDisruption]
	return ok
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// buildZones groups every node by zone key, in the order of the keys.
func buildZones(nodes []*corev1.Node, failed map[string]bool) []*zone {
	byKey := map[string]*zone{}
	for _, n := range nodes {
		k := zoneOf(n)
		z := byKey[k]
		if z == nil {
			z = &zone{key: k, name: zoneName(n)}
			byKey[k] = z
		}
		if failed[n.Name] {
			z.queued = append(z.queued, n.Name)
		}
		if excluded(n) {
			continue
		}
		z.total++
		switch {
		case failed[n.Name]:
			z.failed++
		case !nodeReady(n):
			z.preNotReady++
		}
	}
	out := make([]*zone, 0, len(byKey))
	for _, z := range byKey {
		out = append(out, z)
	}
	slices.SortFunc(out, func(a, b *zone) int { return strings.Compare(a.key, b.key) })
	return out
}

// allFullyDisrupted: every zone the controller tracks ends with no Ready
// node (handleDisruption's "master disruption mode").
func allFullyDisrupted(zones []*zone, s Settings) bool {
	tracked := 0
	for _, z := range zones {
		if z.total == 0 {
			continue
		}
		tracked++
		if z.state(s, z.failed) != StateFull {
			return false
		}
	}
	return tracked > 0
}

// timing is when one zone's failed nodes are tainted.
type timing struct {
	// tainted: the window, nil when never; maybe: the taint may or may
	// not be set (timing), within the window exposed.
	tainted, exposed *Window
	certain          bool
	// transient: every zone down: the node's doubt is said once for
	// all (markNodes); its pods' fates carry it.
	transient bool
	reason    string
}

// plan is the zone's result and its failed nodes' taint timing.
func (z *zone) plan(s Settings, det Window, allFull bool) (ZoneResult, timing) {
	passes := z.passes(s)
	final := passes[len(passes)-1]
	zr := ZoneResult{Zone: z.name, State: final, Passes: passes, Nodes: z.total, NotReady: z.preNotReady + z.failed, Failed: len(z.queued),
		Rate: ZoneRate(s, final, z.total)}
	if len(z.queued) == 0 {
		return zr, timing{certain: true}
	}
	lim := walkLimiter(s, passes, z.total)
	switch {
	case allFull:
		zr.Rate = 0
		return zr, z.allDown(s, det, lim)
	case zr.Rate == 0:
		return zr, z.paused(s, det, passes)
	case lim.stuck && lim.neverFirst:
		zr.Rate = 0
		return zr, timing{certain: true, reason: z.stuckReason(s, passes[0])}
	}
	k := len(z.queued) - 1
	if lim.swapped {
		k++ // the limiter was swapped on the way: its token is spent
	}
	w := Window{det.Min, det.Max + taintTick + float64(k)/zr.Rate}
	if lim.stuck {
		return zr, z.mayStick(s, w)
	}
	t := timing{tainted: &w, certain: true}
	if n := len(z.queued); n > 1 {
		t.reason = fmt.Sprintf("%d nodes share zone %s's queue, one taint every %ss; which goes when is heartbeat timing", n, orEmpty(z.name), secs(1/zr.Rate))
	}
	return zr, t
}

// allDown: the monitor pass that finds every zone fully down
// (handleDisruption) removes the taints its node list, read at the pass's
// start, shows, empties the queues and swaps every limiter to never. A
// taint set before comes off again. One set by the tainting pass (every
// 100 ms) after that list was read stays for good, since
// RemoveTaintOffNode returns early on the stale copy and no later pass
// retries: the zone queue's head, when its limiter has a token then. So
// at most one node per zone (more only if the pass outlasts 1/rate), set
// between the first marking and the last pass: which one is heartbeat
// timing. A zone whose limiter was never before the failure taints none.
func (z *zone) allDown(s Settings, det Window, lim limiter) timing {
	t := timing{certain: true, reason: "every zone is fully disrupted: the controller removes the taints and stops evicting"}
	if lim.neverFirst {
		t.reason += fmt.Sprintf(" (zone %s's limiter was already stopped: no taint here)", orEmpty(z.name))
		return t
	}
	exp := Window{det.Min, det.Max + taintTick}
	t.exposed, t.certain, t.transient = &exp, false, true // said once for every node (markNodes)
	t.reason += fmt.Sprintf("; but a taint set during the pass that finds every zone down (T+%s..%ss) stays for good: "+
		"at most one of zone %s's %d failed node(s), the queue's head then (which one is heartbeat timing), or none if its limiter has no token; "+
		"a taint set before comes off", secs(exp.Min), secs(exp.Max), orEmpty(z.name), len(z.queued))
	return t
}

// limiter is the zone's rate limiter after SwapLimiter went through its
// states (rate_limited_queue.go): a swap to rate 0 installs client-go's
// fakeNeverRateLimiter, whose QPS() says 1, and SwapLimiter returns early
// when QPS() equals the new rate, so from never a swap to exactly 1/s
// keeps never (the same since 1.21).
type limiter struct {
	// swapped: a swap to another rate happened (its token was spent);
	// stuck: a state of rate exactly 1 met the never limiter;
	// neverFirst: never already in the state before the failure.
	swapped, stuck, neverFirst bool
}

func walkLimiter(s Settings, passes []string, size int) limiter {
	var l limiter
	qps, never := float32(s.NodeEvictionRate), false // NewTokenBucketRateLimiter(evictionLimiterQPS) per new zone
	for i, st := range passes {
		r := float32(ZoneRate(s, st, size))
		cur := qps
		if never {
			cur = 1 // fakeNeverRateLimiter.QPS()
		}
		switch {
		case cur == r:
			l.stuck = l.stuck || never
		case r <= 0:
			never = true
		default:
			never, qps, l.swapped = false, r, l.swapped || i > 0
		}
		if i == 0 {
			l.neverFirst = never
		}
	}
	return l
}

// stuckReason: the zone was at rate 0 before the failure and its state's
// rate is exactly 1/s: the limiter stays never.
func (z *zone) stuckReason(s Settings, first string) string {
	return fmt.Sprintf("zone %s was %s at rate 0 before the failure; its rate is now exactly 1 node/s, and SwapLimiter keeps the stopped limiter "+
		"(it reports QPS 1, the same as the new rate): no more taints until the rate changes", orEmpty(z.name), first)
}

// mayStick: the zone may pass through a state of rate 0 on the way (its
// nodes marked in several monitor passes) and then back to exactly 1/s,
// which SwapLimiter skips: the nodes not tainted before the pause never
// are. Without the pause they are tainted within w.
func (z *zone) mayStick(s Settings, w Window) timing {
	return timing{exposed: &w, reason: fmt.Sprintf("zone %s may pass through a state of rate 0 (its nodes marked in several monitor passes) and back to exactly 1 node/s, "+
		"which SwapLimiter skips (the stopped limiter reports QPS 1): the nodes not tainted before that pause never are; otherwise tainted within T+%s..%ss",
		orEmpty(z.name), secs(w.Min), secs(w.Max))}
}

// paused: the zone ends partially disrupted at rate 0. The nodes marked
// while it was still Normal may be tainted first, at the normal rate.
func (z *zone) paused(s Settings, det Window, passes []string) timing {
	r0 := ZoneRate(s, passes[0], z.total)
	if r0 == 0 {
		return timing{certain: true, reason: fmt.Sprintf("zone %s is already %s at rate 0 (%d nodes, at most %d): no more taints", orEmpty(z.name), passes[0], z.total, s.LargeClusterSizeThreshold)}
	}
	nStar := 0
	for n := 1; n <= z.failed; n++ {
		if ZoneRate(s, z.state(s, n), z.total) == 0 {
			nStar = n
			break
		}
	}
	m := min(nStar, 1+int(math.Floor((det.Max-det.Min)*r0)), len(z.queued))
	exp := Window{det.Min, det.Max + taintTick}
	return timing{exposed: &exp, reason: fmt.Sprintf("zone %s enters %s once %d of its %d nodes are not Ready, and a zone of at most %d nodes stops tainting: "+
		"at most %d of the %d failed nodes are tainted before (timing decides which)", orEmpty(z.name), StatePartial, z.preNotReady+nStar, z.total, s.LargeClusterSizeThreshold, m, len(z.queued))}
}

func orEmpty(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// secs prints seconds without a needless fraction.
func secs(x float64) string {
	x = math.Round(x*10) / 10
	if x == math.Trunc(x) {
		return fmt.Sprintf("%.0f", x)
	}
	return fmt.Sprintf("%.1f", x)
}
