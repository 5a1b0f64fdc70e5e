package deployment

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
)

// ResolveFenceposts resolves maxSurge (percent rounds up) and maxUnavailable
// (percent rounds down) against desired; nil counts as 0, and if both come
// out 0, maxUnavailable becomes 1.
func ResolveFenceposts(maxSurge, maxUnavailable *intstr.IntOrString, desired int32) (int32, int32, error) {
	surge, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(maxSurge, intstr.FromInt32(0)), int(desired), true)
	if err != nil {
		return 0, 0, err
	}
	unavailable, err := intstr.GetScaledValueFromIntOrPercent(intstr.ValueOrDefault(maxUnavailable, intstr.FromInt32(0)), int(desired), false)
	if err != nil {
		return 0, 0, err
	}
	if surge == 0 && unavailable == 0 {
		unavailable = 1
	}
	return int32(surge), int32(unavailable), nil
}

// MaxSurge is deploymentutil.MaxSurge: 0 unless RollingUpdate; errors give 0.
func MaxSurge(d Deployment) int32 {
	if !d.isRolling() {
		return 0
	}
	surge, _, _ := ResolveFenceposts(d.MaxSurge, d.MaxUnavailable, d.Replicas)
	return surge
}

// MaxUnavailable is deploymentutil.MaxUnavailable: 0 unless RollingUpdate
// with replicas > 0, capped at replicas.
func MaxUnavailable(d Deployment) int32 {
	if !d.isRolling() || d.Replicas == 0 {
		return 0
	}
	_, unavailable, _ := ResolveFenceposts(d.MaxSurge, d.MaxUnavailable, d.Replicas)
	return min(unavailable, d.Replicas)
}

// MinAvailable is deploymentutil.MinAvailable.
func MinAvailable(d Deployment) int32 {
	if !d.isRolling() {
		return 0
	}
	return d.Replicas - MaxUnavailable(d)
}

// parseReplicasAnnotation reads desired-/max-replicas as the version does.
func parseReplicasAnnotation(s string, v Version) (int32, bool) {
	if v.switches().StrictReplicasAnnotations {
		// getNonNegativeInt32FromAnnotation
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil || n > math.MaxInt32 {
			return 0, false
		}
		return int32(n), true
	}
	// getIntFromAnnotation: strconv.Atoi (64-bit int on a real KCM), then int32().
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return int32(n), true
}

// float64ToInt32 is Go's int32(f) as compiled for amd64 (CVTTSD2SL): NaN and
// out-of-range values give MinInt32. The Go spec leaves this
// implementation-defined (arm64 saturates instead); it only matters for the
// ≤1.31 division by zero.
func float64ToInt32(f float64) int32 {
	if math.IsNaN(f) {
		return math.MinInt32
	}
	t := math.Trunc(f)
	if t < math.MinInt32 || t > math.MaxInt32 {
		return math.MinInt32
	}
	return int32(t)
}

// roundToInt32 is k8s.io/utils integer.RoundToInt32 as vendored by v.
func roundToInt32(a float64, v Version) int32 {
	if v.switches().MathRound {
		return float64ToInt32(math.Round(a))
	}
	if a < 0 {
		return float64ToInt32(a - 0.5)
	}
	return float64ToInt32(a + 0.5)
}

// fraction is getReplicaSetFraction with the numbers that explain it.
type fraction struct {
	value    int32
	toZero   bool  // deployment scaled to 0
	newMax   int32 // D + maxSurge
	before   int32 // denominator actually used
	fallback bool  // max-replicas unusable: status.replicas used
	noBase   bool  // 1.32+: fallback was 0 too, fraction 0
}

func replicaSetFraction(rs *ReplicaSet, d Deployment, v Version) fraction {
	if d.Replicas == 0 {
		return fraction{value: -rs.Replicas, toZero: true}
	}
	f := fraction{newMax: d.Replicas + MaxSurge(d)}
	before, ok := parseReplicasAnnotation(rs.MaxAnnotation, v)
	if v.switches().StrictReplicasAnnotations {
		if !ok || before == 0 {
			f.fallback = true
			before = d.StatusReplicas
			if before == 0 {
				f.noBase = true
				return f
			}
		}
	} else if !ok {
		f.fallback = true
		before = d.StatusReplicas
	}
	f.before = before
	// int32 product as in the source; float division by 0 gives ±Inf/NaN.
	size := float64(rs.Replicas*f.newMax) / float64(before)
	f.value = roundToInt32(size, v) - rs.Replicas
	return f
}

func (f fraction) String() string {
	switch {
	case f.toZero:
		return "scaled to 0"
	case f.noBase:
		return "max-replicas unusable and status.replicas 0"
	}
	s := ""
	if f.before == 0 {
		s = " (division by zero)"
	}
	if f.fallback {
		s += " (max-replicas unusable: status.replicas)"
	}
	return s
}

// proportion is GetReplicaSetProportion; capped reports the min/max clamp.
func proportion(rs *ReplicaSet, d Deployment, toAdd, added int32, v Version) (prop int32, f fraction, capped bool) {
	if rs.Replicas == 0 || toAdd == 0 || toAdd == added {
		return 0, f, false
	}
	f = replicaSetFraction(rs, d, v)
	allowed := toAdd - added
	if toAdd > 0 {
		prop = min(f.value, allowed)
	} else {
		prop = max(f.value, allowed)
	}
	return prop, f, prop != f.value
}

// isSaturated is IsSaturated: the desired annotation is read with
// strconv.Atoi in every version.
func isSaturated(d Deployment, rs *ReplicaSet) bool {
	if rs == nil {
		return false
	}
	desired, err := strconv.ParseInt(rs.DesiredAnnotation, 10, 64)
	if err != nil {
		return false
	}
	return rs.Replicas == d.Replicas && int32(desired) == d.Replicas && rs.Available == d.Replicas
}

// newRSNewReplicas is NewRSNewReplicas. Unlike MaxSurge it reads maxSurge
// without defaulting, so nil is an error.
func newRSNewReplicas(d Deployment, allRSs []*ReplicaSet, newRS *ReplicaSet) (int32, error) {
	switch {
	case d.isRolling():
		surge, err := intstr.GetScaledValueFromIntOrPercent(d.MaxSurge, int(d.Replicas), true)
		if err != nil {
			return 0, err
		}
		current := sumReplicas(allRSs)
		maxTotal := d.Replicas + int32(surge)
		if current >= maxTotal {
			return newRS.Replicas, nil
		}
		up := min(maxTotal-current, d.Replicas-newRS.Replicas)
		return newRS.Replicas + up, nil
	case d.Strategy == StrategyRecreate:
		return d.Replicas, nil
	}
	return 0, fmt.Errorf("deployment type %v isn't supported", d.Strategy)
}

func sumReplicas(rss []*ReplicaSet) int32 {
	return sumOver(rss, func(rs *ReplicaSet) int32 { return rs.Replicas })
}

func sumAvailable(rss []*ReplicaSet) int32 {
	return sumOver(rss, func(rs *ReplicaSet) int32 { return rs.Available })
}

// sumOver adds count over the ReplicaSets, skipping nil ones.
func sumOver(rss []*ReplicaSet, count func(*ReplicaSet) int32) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += count(rs)
		}
	}
	return n
}

// filterActive is controller.FilterActiveReplicaSets (drops nil and 0).
func filterActive(rss []*ReplicaSet) []*ReplicaSet {
	var out []*ReplicaSet
	for _, rs := range rss {
		if rs != nil && rs.Replicas > 0 {
			out = append(out, rs)
		}
	}
	return out
}

func created(rs *ReplicaSet) time.Time { return rs.Created.Truncate(time.Second) }

// olderFirst is controller.ReplicaSetsByCreationTimestamp.
func olderFirst(a, b *ReplicaSet) int {
	ta, tb := created(a), created(b)
	switch {
	case ta.Equal(tb):
		return cmp.Compare(a.Name, b.Name)
	case ta.Before(tb):
		return -1
	}
	return 1
}

// bySizeOlder is controller.ReplicaSetsBySizeOlder (scale-down order).
func bySizeOlder(a, b *ReplicaSet) int {
	if c := cmp.Compare(b.Replicas, a.Replicas); c != 0 {
		return c
	}
	return olderFirst(a, b)
}

// bySizeNewer is controller.ReplicaSetsBySizeNewer (scale-up order).
func bySizeNewer(a, b *ReplicaSet) int {
	if c := cmp.Compare(b.Replicas, a.Replicas); c != 0 {
		return c
	}
	return olderFirst(b, a)
}

// The comparators are total orders (names are unique), so any sort gives
// the order sort.Sort gives.
func sortRS(rss []*ReplicaSet, cmp func(a, b *ReplicaSet) int) {
	slices.SortFunc(rss, cmp)
}
