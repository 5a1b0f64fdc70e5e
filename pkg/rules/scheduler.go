package rules

import (
	"maps"
	"slices"
)

// The scheduler's preemption switches live apart from the scale-in table
// (Switches, gateHistory): their gates belong to kube-scheduler, not to
// kube-controller-manager, and --feature-gates for scale-in must keep
// rejecting them. Each entry was read from that release's
// pkg/scheduler/framework/{preemption,plugins} and pkg/features.

// Scheduler gates that change what preemption decides.
const (
	SidecarContainers                      = "SidecarContainers"
	NodeInclusionPolicyInPodTopologySpread = "NodeInclusionPolicyInPodTopologySpread"
	MinDomainsInPodTopologySpread          = "MinDomainsInPodTopologySpread"
	MatchLabelKeysInPodTopologySpread      = "MatchLabelKeysInPodTopologySpread"
	PodDisruptionConditions                = "PodDisruptionConditions"
	InPlacePodVerticalScaling              = "InPlacePodVerticalScaling"
)

var schedulerGateHistory = map[string]gateSpan{
	SidecarContainers:                      {added: 28, defaultOn: 29, locked: 33},
	PodLevelResources:                      gateHistory[PodLevelResources], // the kubelet reads it too
	NodeInclusionPolicyInPodTopologySpread: {added: 25, defaultOn: 26, locked: 33},
	MinDomainsInPodTopologySpread:          {added: 24, defaultOn: 27, locked: 30, removed: 32},
	MatchLabelKeysInPodTopologySpread:      {added: 25, defaultOn: 27},
	PodDisruptionConditions:                {added: 25, defaultOn: 26, locked: 31, removed: 33},
	InPlacePodVerticalScaling:              {added: 27, defaultOn: 33, locked: 35},
}

// SchedulerRules are the switches of kube-scheduler's DefaultPreemption and
// of the Filter plugins whose answer changes when pods are removed.
type SchedulerRules struct {
	Minor int
	Gates map[string]bool

	// MinCandidateNodesPercentage and MinCandidateNodesAbsolute are
	// DefaultPreemptionArgs (defaults 10 and 100 in every release).
	MinCandidateNodesPercentage int32
	MinCandidateNodesAbsolute   int32

	// TerminatingNeedsPreemptionCondition: a terminating pod on the
	// nominated node blocks a new preemption only when its DisruptionTarget
	// condition says PreemptionByScheduler (before 1.27 any terminating
	// lower-priority pod did).
	TerminatingNeedsPreemptionCondition bool
	// RequestAboveAllocatableUnresolvable: a request larger than the node's
	// whole allocatable makes the node UnschedulableAndUnresolvable, so it
	// is not a preemption candidate (1.34+). Earlier such nodes were tried
	// and failed after removing all victims: the same outcome.
	RequestAboveAllocatableUnresolvable bool
	// VictimsSortedAfterReprieve: when a node's victims come from both the
	// PDB-violating and the other group, they are sorted by importance
	// again (1.29+). Before, the violating ones came first, and the
	// node-selection criterion "lowest highest-victim priority" read the
	// first victim's priority, which then need not be the highest.
	VictimsSortedAfterReprieve bool
	SidecarContainers          bool // restartable init containers add to the pod's request
	PodLevelResources          bool // spec.resources replaces the containers' sum
	UseStatusResources         bool // running pods count max(spec, allocated) (in-place resize)
	NodeInclusionPolicy        bool // topology spread honours nodeAffinityPolicy/nodeTaintsPolicy
	// SpreadCountsMatchingNodesOnly: topology spread counts the pods of the
	// nodes that match the pod's required node affinity (1.24+). Before,
	// a domain with one such node counted the pods of all its nodes.
	SpreadCountsMatchingNodesOnly bool
	MinDomains                    bool // topology spread honours minDomains
	MatchLabelKeys                bool // topology spread merges matchLabelKeys into the selector

	// ScoreTiesInEvaluationOrder: among nodes tied at the top score the
	// scheduler pops a heap built over the feasible nodes in the order the
	// parallel filters found them from a rotating start index (1.35+,
	// NewSortedScoredNodes; the Randomizer is set only by extenders): no
	// chance is justified. Before, selectHost's reservoir sampling picked
	// one uniformly.
	ScoreTiesInEvaluationOrder bool
	// BalancedAllocationDelta: NodeResourcesBalancedAllocation scores the
	// change the pod brings to the node's balance, 50 + (50 + with -
	// without)/2 (1.36+); before, the balance with the pod, (1 - std)·100.
	BalancedAllocationDelta bool
	// BalancedSkipsBestEffort: a pod requesting no CPU and no memory gets
	// no NodeResourcesBalancedAllocation score (1.33+); before, the node's
	// own balance scored it.
	BalancedSkipsBestEffort bool
	// ScoreWeightsV1beta3: the default profile weighs TaintToleration 3,
	// NodeAffinity 2 and InterPodAffinity 2 (config v1beta3, 1.23+);
	// before, 1 each (PodTopologySpread 2 and the others 1 throughout).
	ScoreWeightsV1beta3 bool
	// NoPreferAvoidPods: the default profile has no NodePreferAvoidPods
	// score (1.22+: config v1beta2 dropped it); in 1.21 it weighs 10000.
	NoPreferAvoidPods bool
}

type schedulerSwitch struct {
	since int
	gate  string
	ref   func(*SchedulerRules) *bool
}

var schedulerSwitches = []schedulerSwitch{
	{since: 27, gate: PodDisruptionConditions, ref: func(r *SchedulerRules) *bool { return &r.TerminatingNeedsPreemptionCondition }},
	{since: 34, ref: func(r *SchedulerRules) *bool { return &r.RequestAboveAllocatableUnresolvable }},
	{since: 29, ref: func(r *SchedulerRules) *bool { return &r.VictimsSortedAfterReprieve }},
	{since: 24, ref: func(r *SchedulerRules) *bool { return &r.SpreadCountsMatchingNodesOnly }},
	{since: 35, ref: func(r *SchedulerRules) *bool { return &r.ScoreTiesInEvaluationOrder }},
	{since: 36, ref: func(r *SchedulerRules) *bool { return &r.BalancedAllocationDelta }},
	{since: 33, ref: func(r *SchedulerRules) *bool { return &r.BalancedSkipsBestEffort }},
	{since: 23, ref: func(r *SchedulerRules) *bool { return &r.ScoreWeightsV1beta3 }},
	{since: 22, ref: func(r *SchedulerRules) *bool { return &r.NoPreferAvoidPods }},
	{gate: SidecarContainers, ref: func(r *SchedulerRules) *bool { return &r.SidecarContainers }},
	{gate: PodLevelResources, ref: func(r *SchedulerRules) *bool { return &r.PodLevelResources }},
	{gate: InPlacePodVerticalScaling, ref: func(r *SchedulerRules) *bool { return &r.UseStatusResources }},
	{gate: NodeInclusionPolicyInPodTopologySpread, ref: func(r *SchedulerRules) *bool { return &r.NodeInclusionPolicy }},
	{gate: MinDomainsInPodTopologySpread, ref: func(r *SchedulerRules) *bool { return &r.MinDomains }},
	{gate: MatchLabelKeysInPodTopologySpread, ref: func(r *SchedulerRules) *bool { return &r.MatchLabelKeys }},
}

// SchedulerGatesFor returns the default of every preemption-relevant
// scheduler gate that exists in 1.<minor>.
func SchedulerGatesFor(minor int) map[string]bool {
	gates := map[string]bool{}
	for name, h := range schedulerGateHistory {
		if h.exists(minor) {
			gates[name] = h.defaultFor(minor)
		}
	}
	return gates
}

// SchedulerGateNames lists the gates Scheduler reads, sorted.
func SchedulerGateNames() []string { return slices.Sorted(maps.Keys(schedulerGateHistory)) }

// Scheduler builds the preemption rules of 1.<minor> (clamped to the
// supported range). Overrides of unknown, absent or locked gates are
// ignored, as Resolve does.
func Scheduler(minor int, overrides map[string]bool) SchedulerRules {
	minor = min(max(minor, Oldest), Newest)
	gates := SchedulerGatesFor(minor)
	for name, v := range overrides {
		if h, ok := schedulerGateHistory[name]; ok && h.exists(minor) && !h.lockedIn(minor) {
			gates[name] = v
		}
	}
	r := SchedulerRules{Minor: minor, Gates: gates, MinCandidateNodesPercentage: 10, MinCandidateNodesAbsolute: 100}
	for _, s := range schedulerSwitches {
		on := minor >= s.since
		if on && s.gate != "" {
			h := schedulerGateHistory[s.gate]
			switch {
			case minor < h.added:
				on = false
			case !h.exists(minor):
				on = true // graduated and removed
			case h.lockedIn(minor):
				on = h.defaultFor(minor)
			default:
				on = gates[s.gate]
			}
		}
		*s.ref(&r) = on
	}
	return r
}
