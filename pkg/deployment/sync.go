package deployment

import (
	"fmt"
	"slices"
	"strconv"
)

// Sync reproduces one syncDeployment pass: paused or a scaling event runs
// sync() -> scale(); otherwise the rollout of the strategy runs.
// (Deleting Deployments, the legacy rollback annotation and status updates
// are not modelled.)
func Sync(d Deployment, rss []ReplicaSet, v Version) (next []ReplicaSet, changes []Change) {
	if d.Paused || IsScalingEvent(d, rss, v) {
		return Scale(d, rss, v)
	}
	return Rollout(d, rss, v)
}

// IsScalingEvent is isScalingEvent: some active RS (spec.replicas > 0) has a
// desired-replicas annotation that parses (per v) and differs from
// d.Replicas.
func IsScalingEvent(d Deployment, rss []ReplicaSet, v Version) bool {
	for i := range rss {
		if rss[i].Replicas <= 0 {
			continue
		}
		if desired, ok := parseReplicasAnnotation(rss[i].DesiredAnnotation, v); ok && desired != d.Replicas {
			return true
		}
	}
	return false
}

// Scale reproduces sync() -> scale(), which runs on a scaling event and on
// every sync of a paused Deployment. It returns the ReplicaSets in input
// order with new sizes and annotations, and the size changes in the order
// the controller makes them. It never creates the new RS.
func Scale(d Deployment, rss []ReplicaSet, v Version) (next []ReplicaSet, changes []Change) {
	s := newSyncer(d, rss, v, StepScale)
	s.scale()
	return s.result()
}

// syncer holds the state of one sync; RS pointers point into items.
type syncer struct {
	d       Deployment
	v       Version
	step    string
	items   []*ReplicaSet // input order; a created RS is appended
	newRS   *ReplicaSet
	oldRSs  []*ReplicaSet // every old RS, oldest first (FindNewReplicaSet sorts rsList)
	changes []Change
}

func newSyncer(d Deployment, rss []ReplicaSet, v Version, step string) *syncer {
	s := &syncer{d: d, v: v, step: step}
	for i := range rss {
		rs := rss[i]
		s.items = append(s.items, &rs)
	}
	sorted := slices.Clone(s.items)
	sortRS(sorted, olderFirst)
	for _, rs := range sorted {
		if rs.New && s.newRS == nil {
			s.newRS = rs
			continue
		}
		s.oldRSs = append(s.oldRSs, rs)
	}
	return s
}

func (s *syncer) result() ([]ReplicaSet, []Change) {
	next := make([]ReplicaSet, len(s.items))
	for i, rs := range s.items {
		next[i] = *rs
	}
	return next, s.changes
}

func (s *syncer) annotations() (desired, max string) {
	return strconv.FormatInt(int64(s.d.Replicas), 10), strconv.FormatInt(int64(s.d.Replicas+MaxSurge(s.d)), 10)
}

func (s *syncer) record(rs *ReplicaSet, from, to int32, reason string) {
	s.changes = append(s.changes, Change{ReplicaSet: rs.Name, From: from, To: to, Step: s.step, Reason: reason})
}

func (s *syncer) fail(rs *ReplicaSet, to int32, reason, err string) {
	s.changes = append(s.changes, Change{ReplicaSet: rs.Name, From: rs.Replicas, To: to, Step: s.step, Reason: reason, Error: err})
}

// scaleReplicaSet is the controller's scaleReplicaSet: unless forced it acts
// only on a size change; when it writes, it also sets both annotations. It
// reports whether the size changed and whether the update succeeded.
func (s *syncer) scaleReplicaSet(rs *ReplicaSet, newScale int32, force bool, reason string) (scaled, ok bool) {
	if !force && rs.Replicas == newScale {
		return false, true
	}
	desired, max := s.annotations()
	sizeNeedsUpdate := rs.Replicas != newScale
	if !sizeNeedsUpdate && rs.DesiredAnnotation == desired && rs.MaxAnnotation == max {
		return false, true
	}
	if newScale < 0 {
		// ReplicaSet validation; the sync returns the error and is requeued.
		s.fail(rs, newScale, reason, fmt.Sprintf("spec.replicas: Invalid value: %d: must be greater than or equal to 0", newScale))
		return false, false
	}
	from := rs.Replicas
	rs.Replicas, rs.DesiredAnnotation, rs.MaxAnnotation = newScale, desired, max
	if sizeNeedsUpdate {
		s.record(rs, from, newScale, reason)
	}
	return sizeNeedsUpdate, true
}

func (s *syncer) oldNewestFirst() []*ReplicaSet {
	old := slices.Clone(s.oldRSs)
	sortRS(old, func(a, b *ReplicaSet) int { return olderFirst(b, a) })
	return old
}

// findActiveOrLatest is FindActiveOrLatest.
func (s *syncer) findActiveOrLatest() (*ReplicaSet, string) {
	if s.newRS == nil && len(s.oldRSs) == 0 {
		return nil, ""
	}
	old := s.oldNewestFirst()
	active := filterActive(append(old, s.newRS))
	switch len(active) {
	case 0:
		if s.newRS != nil {
			return s.newRS, "scale: no active replica set, the new one takes spec.replicas"
		}
		return old[0], "scale: no active replica set, the newest takes spec.replicas"
	case 1:
		return active[0], "scale: only active replica set takes spec.replicas"
	}
	return nil, ""
}

func (s *syncer) scale() {
	D := s.d.Replicas
	if rs, why := s.findActiveOrLatest(); rs != nil {
		if rs.Replicas != D {
			s.scaleReplicaSet(rs, D, false, why)
		}
		return
	}

	if isSaturated(s.d, s.newRS) {
		for _, old := range filterActive(s.oldNewestFirst()) {
			if _, ok := s.scaleReplicaSet(old, 0, false, "scale: new replica set saturated, old scaled to 0"); !ok {
				return
			}
		}
		return
	}

	if !s.d.isRolling() {
		return
	}
	all := filterActive(append(s.oldNewestFirst(), s.newRS))
	var allowed int32
	if D > 0 {
		allowed = D + MaxSurge(s.d)
	}
	toAdd := allowed - sumReplicas(all)
	switch {
	case toAdd > 0:
		sortRS(all, bySizeNewer)
	case toAdd < 0:
		sortRS(all, bySizeOlder)
	}

	var added int32
	sizes := make([]int32, len(all))
	reasons := make([]string, len(all))
	for i, rs := range all {
		sizes[i] = rs.Replicas
		if toAdd == 0 {
			continue
		}
		prop, f, capped := proportion(rs, s.d, toAdd, added, s.v)
		reasons[i] = proportionReason(rs, f, prop, capped, toAdd, added)
		sizes[i] += prop
		added += prop
	}
	for i, rs := range all {
		if i == 0 && toAdd != 0 {
			leftover := toAdd - added
			sizes[i] += leftover
			if leftover != 0 {
				reasons[i] += fmt.Sprintf("; leftover %+d to the first (largest) replica set", leftover)
			}
			if sizes[i] < 0 {
				sizes[i] = 0
				reasons[i] += ", clamped to 0"
			}
		}
		if _, ok := s.scaleReplicaSet(rs, sizes[i], true, reasons[i]); !ok {
			return
		}
	}
}

func proportionReason(rs *ReplicaSet, f fraction, prop int32, capped bool, toAdd, added int32) string {
	const p = "proportional scaling: "
	switch {
	case rs.Replicas == 0 || toAdd == added:
		return p + "nothing left to distribute"
	case f.toZero:
		return p + "deployment scaled to 0"
	case f.noBase:
		return p + "no usable max-replicas and status.replicas 0, fraction 0"
	}
	r := p + fmt.Sprintf("%d*%d/%d -> %d%s", rs.Replicas, f.newMax, f.before, rs.Replicas+f.value, f)
	if capped {
		r += fmt.Sprintf(", capped at %+d remaining -> %d", toAdd-added, rs.Replicas+prop)
	}
	return r
}
