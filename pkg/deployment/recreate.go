package deployment

// rolloutRecreate: scale every active old RS to 0 and return if any was
// scaled; wait while old pods exist; then create the new RS if missing and
// scale it to spec.replicas.
func (s *syncer) rolloutRecreate() {
	scaled := false
	for _, rs := range filterActive(s.oldRSs) {
		sc, ok := s.scaleReplicaSet(rs, 0, false, "rolloutRecreate: scale old replica sets to 0")
		if !ok {
			return
		}
		scaled = scaled || sc
	}
	if scaled || s.oldPodsRunning() {
		return
	}
	if s.newRS == nil && !s.createNewRS() {
		return
	}
	s.scaleReplicaSet(s.newRS, s.d.Replicas, false, "rolloutRecreate: old pods gone, scale the new replica set")
}

// oldPodsRunning: any old RS with status.replicas > 0 or a pod not in a
// terminal phase (terminating pods count).
func (s *syncer) oldPodsRunning() bool {
	for _, rs := range s.oldRSs {
		if rs.StatusReplicas > 0 || rs.RunningPods > 0 {
			return true
		}
	}
	return false
}
