package rules

import "time"

// JobPodReplacementPolicy is the gate of a Job's spec.podReplacementPolicy:
// alpha in 1.28, on by default from 1.29, GA in 1.34, gone from 1.37's
// pkg/features. Off, the API server drops the field and the Job controller
// replaces a terminating pod at once.
const JobPodReplacementPolicy = "JobPodReplacementPolicy"

var outageGateHistory = map[string]gateSpan{
	JobPodReplacementPolicy: {added: 28, defaultOn: 29, locked: 34, removed: 37},
}

// OutageRules are kube-controller-manager's node lifecycle defaults and the
// switches of the controllers that act when nodes stop answering
// (pkg/controller/nodelifecycle/config/v1alpha1/defaults.go,
// cmd/kube-controller-manager/app/options/nodelifecyclecontroller.go).
type OutageRules struct {
	Minor int
	Gates map[string]bool
	// NodeMonitorGracePeriod: 40 s up to 1.31, 50 s from 1.32.
	NodeMonitorGracePeriod time.Duration
	// NodeMonitorPeriod: how often the controller checks every node (5 s).
	NodeMonitorPeriod time.Duration
	// NodeEvictionRate, SecondaryNodeEvictionRate: nodes tainted per
	// second in a healthy zone (0.1) and in a partially disrupted large
	// one (0.01).
	NodeEvictionRate          float64
	SecondaryNodeEvictionRate float64
	// UnhealthyZoneThreshold: the share of not Ready nodes (at least 3)
	// from which a zone is partially disrupted (0.55).
	UnhealthyZoneThreshold float64
	// LargeClusterSizeThreshold: a partially disrupted zone of at most
	// this many nodes stops tainting (50).
	LargeClusterSizeThreshold int
	// LeaseRenewInterval is the kubelet's: a quarter of its 40 s lease,
	// with the lease controller's 4% jitter on top.
	LeaseRenewInterval time.Duration
	LeaseRenewJitter   float64
	// DefaultTolerationSeconds is the admission plugin's default for the
	// not-ready and unreachable NoExecute tolerations (300 s).
	DefaultTolerationSeconds int64
	// JobReplacementPolicy: a Job's podReplacementPolicy is kept, and
	// Failed makes the controller wait for a terminating pod to finish.
	JobReplacementPolicy bool
}

// Outage builds the rules of 1.<minor> (clamped to the supported range).
func Outage(minor int) OutageRules {
	minor = min(max(minor, Oldest), Newest)
	r := OutageRules{Minor: minor, Gates: map[string]bool{}, NodeMonitorGracePeriod: 50 * time.Second, NodeMonitorPeriod: 5 * time.Second,
		NodeEvictionRate: 0.1, SecondaryNodeEvictionRate: 0.01, UnhealthyZoneThreshold: 0.55, LargeClusterSizeThreshold: 50,
		LeaseRenewInterval: 10 * time.Second, LeaseRenewJitter: 0.04, DefaultTolerationSeconds: 300}
	if minor < 32 {
		r.NodeMonitorGracePeriod = 40 * time.Second
	}
	h := outageGateHistory[JobPodReplacementPolicy]
	r.JobReplacementPolicy = minor >= h.added && (!h.exists(minor) || h.defaultFor(minor))
	if h.exists(minor) {
		r.Gates[JobPodReplacementPolicy] = r.JobReplacementPolicy
	}
	return r
}
