package deployment

import (
	"fmt"
	"slices"
)

// Rollout reproduces one non-scaling sync: rolloutRolling or rolloutRecreate.
// It returns nothing for a paused Deployment (the controller runs scale()
// instead: use Sync). The rollout reads d.Replicas and each RS's Replicas and
// Available; after it shrinks an RS the caller picks the victims and lowers
// Available accordingly, and pods it adds stay unavailable until the caller
// says otherwise.
func Rollout(d Deployment, rss []ReplicaSet, v Version) (next []ReplicaSet, changes []Change) {
	s := newSyncer(d, rss, v, StepRollout)
	switch {
	case d.Paused:
	case d.isRolling():
		s.rolloutRolling()
	case d.Strategy == StrategyRecreate:
		s.rolloutRecreate()
	}
	return s.result()
}

// rolloutRolling: create the new RS if missing (the sync goes on), then
// reconcileNewReplicaSet; only if that did not scale, reconcileOldReplicaSets.
func (s *syncer) rolloutRolling() {
	if s.newRS == nil && !s.createNewRS() {
		return
	}
	all := append(slices.Clone(s.oldRSs), s.newRS)
	if scaled, ok := s.reconcileNewReplicaSet(all); scaled || !ok {
		return
	}
	s.reconcileOldReplicaSets(all, filterActive(s.oldRSs))
}

// createNewRS is the creating half of getNewReplicaSet: size from
// NewRSNewReplicas, annotations set, nothing available yet.
func (s *syncer) createNewRS() bool {
	name := s.d.NewReplicaSetName
	if name == "" {
		name = "<new>"
	}
	rs := &ReplicaSet{Name: name, Created: s.d.NewReplicaSetCreated, New: true}
	n, err := newRSNewReplicas(s.d, append(slices.Clone(s.oldRSs), rs), rs)
	if err != nil {
		s.fail(rs, 0, "getNewReplicaSet: create the new replica set", err.Error())
		return false
	}
	rs.Replicas = n
	rs.DesiredAnnotation, rs.MaxAnnotation = s.annotations()
	s.items = append(s.items, rs)
	s.newRS = rs
	s.record(rs, 0, n, "getNewReplicaSet: create the new replica set (NewRSNewReplicas)")
	return true
}

func (s *syncer) reconcileNewReplicaSet(all []*ReplicaSet) (scaled, ok bool) {
	D, nrs := s.d.Replicas, s.newRS
	if nrs.Replicas == D {
		return false, true
	}
	if nrs.Replicas > D {
		return s.scaleReplicaSet(nrs, D, false, "reconcileNewReplicaSet: new replica set above spec.replicas")
	}
	n, err := newRSNewReplicas(s.d, all, nrs)
	if err != nil {
		s.fail(nrs, nrs.Replicas, "reconcileNewReplicaSet", err.Error())
		return false, false
	}
	return s.scaleReplicaSet(nrs, n, false, fmt.Sprintf("reconcileNewReplicaSet: scale up, %d pods in all (spec.replicas+maxSurge) allowed, %d counted", D+MaxSurge(s.d), sumReplicas(all)))
}

func (s *syncer) reconcileOldReplicaSets(all, activeOld []*ReplicaSet) {
	if sumReplicas(activeOld) == 0 {
		return
	}
	minAvailable := s.d.Replicas - MaxUnavailable(s.d)
	newUnavailable := s.newRS.Replicas - s.newRS.Available
	maxScaledDown := sumReplicas(all) - minAvailable - newUnavailable
	if maxScaledDown <= 0 {
		return
	}
	if !s.cleanupUnhealthyReplicas(activeOld, maxScaledDown) {
		return
	}
	s.scaleDownOldReplicaSetsForRollingUpdate(slices.Concat(activeOld, []*ReplicaSet{s.newRS}), activeOld)
}

// cleanupUnhealthyReplicas removes unavailable old pods, oldest RS first,
// within maxCleanup. false means reconcileOldReplicaSets stops (the
// controller swallows the error).
func (s *syncer) cleanupUnhealthyReplicas(old []*ReplicaSet, maxCleanup int32) bool {
	sortRS(old, olderFirst)
	var total int32
	for _, rs := range old {
		if total >= maxCleanup {
			break
		}
		if rs.Replicas == 0 || rs.Replicas == rs.Available {
			continue
		}
		count := min(maxCleanup-total, rs.Replicas-rs.Available)
		newCount := rs.Replicas - count
		reason := fmt.Sprintf("cleanupUnhealthyReplicas: %d of %d unavailable, budget %d", rs.Replicas-rs.Available, rs.Replicas, maxCleanup-total)
		if newCount > rs.Replicas {
			// Available > Replicas: a status not yet caught up with a scale-down.
			s.fail(rs, newCount, reason, fmt.Sprintf("when cleaning up unhealthy replicas, got invalid request to scale down %s %d -> %d (reconcileOldReplicaSets stops)", rs.Name, rs.Replicas, newCount))
			return false
		}
		if _, ok := s.scaleReplicaSet(rs, newCount, false, reason); !ok {
			return false
		}
		total += count
	}
	return true
}

// scaleDownOldReplicaSetsForRollingUpdate removes available old pods down to
// minAvailable, oldest RS first. all is the active old RSes plus the new one.
func (s *syncer) scaleDownOldReplicaSetsForRollingUpdate(all, old []*ReplicaSet) {
	minAvailable := s.d.Replicas - MaxUnavailable(s.d)
	available := sumAvailable(all)
	if available <= minAvailable {
		return
	}
	sortRS(old, olderFirst)
	budget := available - minAvailable
	var total int32
	for _, rs := range old {
		if total >= budget {
			break
		}
		if rs.Replicas == 0 {
			continue
		}
		count := min(rs.Replicas, budget-total)
		reason := fmt.Sprintf("scaleDownOldReplicaSetsForRollingUpdate: %d available, minAvailable %d", available, minAvailable)
		if _, ok := s.scaleReplicaSet(rs, rs.Replicas-count, false, reason); !ok {
			return
		}
		total += count
	}
}
