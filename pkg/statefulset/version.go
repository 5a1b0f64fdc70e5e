package statefulset

// Gate names this package reads from Input.Gates.
const (
	GateMinReadySeconds  = "StatefulSetMinReadySeconds"
	GateAutoDeletePVC    = "StatefulSetAutoDeletePVC"
	GateStartOrdinal     = "StatefulSetStartOrdinal"
	GateRecreateStrategy = "StatefulSetRecreateStrategy"
)

// Supported Kubernetes minor versions (1.x).
const (
	OldestMinor = 21
	NewestMinor = 37
)

// rules is every version switch of the scale-down path, read from the
// k8s.io/kubernetes source of each minor (see doc.go for the list).
type rules struct {
	minor int

	// minReady: processReplica/processCondemned also require availability
	// (1.22–1.24 behind StatefulSetMinReadySeconds, unconditional from 1.25).
	minReady bool
	// firstByAvailability: the "first unhealthy pod" is the first
	// unavailable one (isUnavailable, 1.34+) rather than the first one that
	// is not Running+Ready (isHealthy, ≤1.33).
	firstByAvailability bool
	// availableAtBoundary: IsPodAvailable accepts ready+minReady == now
	// (1.34+ Compare <= 0); before, it needed ready+minReady < now (Before).
	availableAtBoundary bool
	// startOrdinal: spec.ordinals.start is honoured (1.26–1.30 gated, 1.31+).
	startOrdinal bool
	// succeededRecreated: in-range Succeeded pods are deleted for
	// recreation like Failed ones (1.27+).
	succeededRecreated bool
	// recreateSameSync: a finished in-range pod is created again in the
	// sync that deletes it (≤1.27 and 1.28.0); later patches return and
	// create it in the next sync.
	recreateSameSync bool
	// pvcPolicy: whenScaled/whenDeleted are acted on (1.23–1.34 gated, 1.35+).
	pvcPolicy bool
	// unexpectedController: claims with a foreign controller or a stale
	// owner reference are left alone (hasUnexpectedController; present in
	// 1.28.15+, 1.29.15, 1.30.14+, absent from 1.28.0 and 1.30.0).
	unexpectedController bool
	// ownerIndex: pods are listed through the controller-ref index keyed by
	// kind/name/UID (1.34+), not by listing the namespace.
	ownerIndex bool
	// concurrentParallel: Parallel deletions are issued in slow-start
	// batches (1.25+), not one after another.
	concurrentParallel bool
	// recreateStrategy: the Recreate update strategy exists (1.37, alpha).
	recreateStrategy bool
	recreateGate     bool
}

func newRules(minor int, gates map[string]bool) rules {
	gate := func(name string, def bool) bool {
		if v, ok := gates[name]; ok {
			return v
		}
		return def
	}
	r := rules{
		minor:                minor,
		firstByAvailability:  minor >= 34,
		availableAtBoundary:  minor >= 34,
		succeededRecreated:   minor >= 27,
		recreateSameSync:     minor <= 27,
		unexpectedController: minor >= 28,
		ownerIndex:           minor >= 34,
		concurrentParallel:   minor >= 25,
		recreateStrategy:     minor >= 37,
	}
	switch {
	case minor >= 25:
		r.minReady = true
	case minor >= 22:
		r.minReady = gate(GateMinReadySeconds, minor >= 23)
	}
	switch {
	case minor >= 31:
		r.startOrdinal = true
	case minor >= 26:
		r.startOrdinal = gate(GateStartOrdinal, minor >= 27)
	}
	switch {
	case minor >= 35:
		r.pvcPolicy = true
	case minor >= 23:
		r.pvcPolicy = gate(GateAutoDeletePVC, minor >= 27)
	}
	if r.recreateStrategy {
		r.recreateGate = gate(GateRecreateStrategy, false)
	}
	return r
}
