package rules

// PDBUnhealthyPodEvictionPolicy is the kube-apiserver gate of a
// PodDisruptionBudget's spec.unhealthyPodEvictionPolicy: alpha in 1.26,
// on by default from 1.27, GA (locked) in 1.31, removed in 1.33. While it
// is off the API server drops the field, so the Eviction API never sees it.
const PDBUnhealthyPodEvictionPolicy = "PDBUnhealthyPodEvictionPolicy"

var disruptionGateHistory = map[string]gateSpan{
	PDBUnhealthyPodEvictionPolicy: {added: 26, defaultOn: 27, locked: 31, removed: 33},
}

// DisruptionRules are the switches of the Eviction API and the disruption
// controller.
type DisruptionRules struct {
	Minor int
	// Gates are the gates of 1.<minor> this reads, with their values.
	Gates map[string]bool
	// UnhealthyPodEvictionPolicy: spec.unhealthyPodEvictionPolicy is kept
	// and honoured; off, every budget behaves as IfHealthyBudget.
	UnhealthyPodEvictionPolicy bool
}

// DisruptionGateNames lists the gates Disruption reads.
func DisruptionGateNames() []string { return []string{PDBUnhealthyPodEvictionPolicy} }

// Disruption builds the eviction rules of 1.<minor> (clamped to the
// supported range); overrides of absent or locked gates are ignored.
func Disruption(minor int, overrides map[string]bool) DisruptionRules {
	minor = min(max(minor, Oldest), Newest)
	h := disruptionGateHistory[PDBUnhealthyPodEvictionPolicy]
	on := false
	switch {
	case minor < h.added:
	case !h.exists(minor) || h.lockedIn(minor):
		on = true
	default:
		on = h.defaultFor(minor)
		if v, ok := overrides[PDBUnhealthyPodEvictionPolicy]; ok {
			on = v
		}
	}
	r := DisruptionRules{Minor: minor, UnhealthyPodEvictionPolicy: on, Gates: map[string]bool{}}
	if h.exists(minor) {
		r.Gates[PDBUnhealthyPodEvictionPolicy] = on
	}
	return r
}
