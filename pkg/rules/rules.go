// Package rules holds, per Kubernetes minor version, every switch that
// changes how the controllers pick scale-in victims, for every workload kind:
// the comparator's rules, the ReplicaSet/ReplicationController sibling
// lookup, the Deployment's arithmetic, the StatefulSet's scale-down path, the
// feature gates behind them and their per-version defaults.
//
// It is the only package that knows versions. Each entry was read from that
// release's k8s.io/kubernetes source (pkg/controller/controller_utils.go,
// pkg/controller/{replicaset,deployment,statefulset}, pkg/features); the
// table is written out in docs/rules.md.
package rules

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	cliflag "k8s.io/component-base/cli/flag"
)

// Oldest and Newest bound the supported Kubernetes minor versions (1.x).
// Supporting a new release means raising Newest and adding its switches and
// gates to the tables below (and its oracle in test/versions).
const (
	Oldest = 21
	Newest = 37
)

// BurstReplicas is the most pods a ReplicaSet deletes in one sync
// (replicaset.BurstReplicas, passed by kube-controller-manager for RS and RC).
const BurstReplicas = 500

// Gate names that matter for scale-in.
const (
	PodDeletionCost             = "PodDeletionCost"
	LogarithmicScaleDown        = "LogarithmicScaleDown"
	StatefulSetMinReadySeconds  = "StatefulSetMinReadySeconds"
	StatefulSetAutoDeletePVC    = "StatefulSetAutoDeletePVC"
	StatefulSetStartOrdinal     = "StatefulSetStartOrdinal"
	StatefulSetRecreateStrategy = "StatefulSetRecreateStrategy"
	// MaxUnavailableStatefulSet: a rolling update honours maxUnavailable
	// (alpha 1.24, beta off 1.35, beta on 1.37: kube_features.go).
	MaxUnavailableStatefulSet = "MaxUnavailableStatefulSet"
	// HPAConfigurableTolerance lets an autoscaler's behavior override the
	// controller-wide tolerance.
	HPAConfigurableTolerance = "HPAConfigurableTolerance"
)

// gateSpan is one gate's life: the minor version it appeared in, the
// version its default became true (0: never so far), the version it was
// locked to its default (GA) and the version it was removed (0: not yet).
type gateSpan struct {
	added, defaultOn, locked, removed int
}

var gateHistory = map[string]gateSpan{
	PodDeletionCost:                              {added: 21, defaultOn: 22},
	LogarithmicScaleDown:                         {added: 21, defaultOn: 22, locked: 31, removed: 37},
	StatefulSetMinReadySeconds:                   {added: 22, defaultOn: 23, locked: 25, removed: 27},
	StatefulSetAutoDeletePVC:                     {added: 23, defaultOn: 27, locked: 32, removed: 35},
	StatefulSetStartOrdinal:                      {added: 26, defaultOn: 27, locked: 31, removed: 34},
	StatefulSetRecreateStrategy:                  {added: 37},
	MaxUnavailableStatefulSet:                    {added: 24, defaultOn: 37},
	HPAConfigurableTolerance:                     {added: 33, defaultOn: 35, locked: 37},
	KubeletSeparateDiskGC:                        {added: 29, defaultOn: 31},
	AllowOverwriteTerminationGracePeriodSeconds:  {added: 32, locked: 35, removed: 38},
	PodLevelResources:                            {added: 32, defaultOn: 34},
	InPlacePodVerticalScalingMemoryBackedVolumes: {added: 37},
	ElasticIndexedJob:                            {added: 27, defaultOn: 27, locked: 31, removed: 34},
	JobTrackingWithFinalizers:                    {added: 22, defaultOn: 25, locked: 26, removed: 29},
	DaemonSetUpdateSurge:                         {added: 21, defaultOn: 22, locked: 25, removed: 27},
}

func (h gateSpan) exists(minor int) bool {
	return minor >= h.added && (h.removed == 0 || minor < h.removed)
}

func (h gateSpan) defaultFor(minor int) bool { return h.defaultOn != 0 && minor >= h.defaultOn }

func (h gateSpan) lockedIn(minor int) bool { return h.locked != 0 && minor >= h.locked }

// RuleSet is everything version-dependent the prediction needs. Build it
// with For (validated) or Resolve; every bool below is set from Switches.
type RuleSet struct {
	Minor int             // Kubernetes 1.<Minor>
	Gates map[string]bool // effective gates that exist in this version
	// Overridden names the gates set by the user rather than by default.
	Overridden []string

	// The comparator (ActivePodsWithRanks.Less).
	DeletionCost    bool // rule 4 is active
	LogScale        bool // rules 6 and 8 compare log2 age buckets, ties by UID
	SidecarRestarts bool // rule 7 also compares restartable init containers

	// The ReplicaSet/ReplicationController sibling lookup (rule 5's ranks).
	RCRanks bool // a ReplicationController's siblings are ranked too
	// BadSiblingSelectorZeroesRanks: one sibling ReplicaSet with an invalid
	// selector makes the whole lookup fail (every rank 0) rather than
	// skipping that ReplicaSet.
	BadSiblingSelectorZeroesRanks bool

	// AvailableAtBoundary: a pod is available (IsPodAvailable, read by
	// Deployments and StatefulSets) when ready+minReadySeconds equals now,
	// not only after it.
	AvailableAtBoundary bool

	Deployment  DeploymentRules
	StatefulSet StatefulSetRules
	Autoscaler  AutoscalerRules
	Kubelet     KubeletRules // node-pressure eviction (kubelet.go)
	Job         JobRules
	DaemonSet   DaemonSetRules // its rolling update (daemonset.go)
}

// AutoscalerRules are the HorizontalPodAutoscaler controller's switches.
type AutoscalerRules struct {
	ConfigurableTolerance bool // behavior's per-direction tolerance is honoured
}

// DeploymentRules are the deployment controller's version switches.
type DeploymentRules struct {
	// MathRound: integer.RoundToInt32 is int32(math.Round(a)) rather than
	// int32(a±0.5).
	MathRound bool
	// StrictReplicasAnnotations: desired-/max-replicas are read as
	// non-negative int32 and a max-replicas of 0 falls back to
	// status.replicas, rather than strconv.Atoi then int32() (signs
	// accepted, values wrap, 0 divides by zero).
	StrictReplicasAnnotations bool
}

// StatefulSetRules are the StatefulSet controller's scale-down switches.
type StatefulSetRules struct {
	MinReadySeconds bool // deletions also wait for availability
	// UnavailableFirst: the "first unhealthy pod" is the first unavailable
	// one, not the first that is not Running and Ready.
	UnavailableFirst bool
	StartOrdinal     bool // spec.ordinals.start is honoured
	// SucceededRecreated: in-range Succeeded pods are deleted for
	// recreation like Failed ones.
	SucceededRecreated bool
	// RecreateSameSync: a finished in-range pod is created again in the
	// sync that deletes it; later releases create it in the next sync.
	RecreateSameSync bool
	AutoDeletePVC    bool // persistentVolumeClaimRetentionPolicy is acted on
	// UnexpectedController: claims with a foreign controller or a stale
	// owner reference are left alone.
	UnexpectedController bool
	// OwnerIndex: pods are listed by the owner index (owned first, then
	// orphans), not by listing the namespace.
	OwnerIndex bool
	// ConcurrentParallel: Parallel deletions go out in slow-start batches,
	// not one after another.
	ConcurrentParallel bool
	RecreateStrategy   bool // the Recreate update strategy exists
	RecreateGate       bool // and its gate is on
	// MaxUnavailable: a rolling update deletes up to maxUnavailable pods
	// (updateStatefulSetAfterInvariantEstablished), not one at a time.
	MaxUnavailable bool
	// ParallelUnavailableFirst: with MaxUnavailable, Parallel first deletes
	// the old pods already unavailable, whatever the budget (1.37's
	// two-phase deletion); before, they count against it and may stall it.
	ParallelUnavailableFirst bool
}

// Switch is one version-dependent behaviour: on from Since (0: every
// supported version) until before Until (0: still on in Newest) and, when
// Gate is set, only while that gate is on. A gate that was removed counts as
// on (every removal here is a graduation); a gate locked to its default
// counts at its default, since the controller no longer reads it.
type Switch struct {
	Field string // the RuleSet field it sets
	Kind  string // which controller it changes
	Since int
	Until int
	Gate  string
	What  string // one line, for docs/rules.md
	ref   func(*RuleSet) *bool
}

// Kinds of controller a switch belongs to.
const (
	KindComparator  = "comparator"
	KindPods        = "availability"
	KindReplicaSet  = "ReplicaSet/RC"
	KindDeployment  = "Deployment"
	KindStatefulSet = "StatefulSet"
	// KindStatefulSetUpdate: the StatefulSet controller's rolling update
	// only (a scale-in never reads these).
	KindStatefulSetUpdate = "STS update"
	KindAutoscaler        = "HorizontalPodAutoscaler"
)

// Switches is the version table: every version-dependent behaviour.
var Switches = append([]Switch{
	{Field: "DeletionCost", Kind: KindComparator, Gate: PodDeletionCost,
		What: "rule 4: lower pod-deletion-cost goes first", ref: func(r *RuleSet) *bool { return &r.DeletionCost }},
	{Field: "LogScale", Kind: KindComparator, Gate: LogarithmicScaleDown,
		What: "rules 6 and 8 compare log2 age buckets, then UIDs, instead of exact times", ref: func(r *RuleSet) *bool { return &r.LogScale }},
	{Field: "SidecarRestarts", Kind: KindComparator, Since: 32,
		What: "rule 7 also compares restarts of sidecar (restartable init) containers", ref: func(r *RuleSet) *bool { return &r.SidecarRestarts }},
	{Field: "RCRanks", Kind: KindReplicaSet, Until: 24,
		What: "a ReplicationController with a controller owner ranks pods by its siblings (from 1.24 its ranks are 0)", ref: func(r *RuleSet) *bool { return &r.RCRanks }},
	{Field: "BadSiblingSelectorZeroesRanks", Kind: KindReplicaSet, Until: 24,
		What: "a sibling ReplicaSet with an invalid selector zeroes every rank (from 1.24 it is skipped)", ref: func(r *RuleSet) *bool { return &r.BadSiblingSelectorZeroesRanks }},
	{Field: "AvailableAtBoundary", Kind: KindPods, Since: 34,
		What: "a pod counts as available at exactly ready+minReadySeconds, not only after", ref: func(r *RuleSet) *bool { return &r.AvailableAtBoundary }},
	{Field: "Deployment.MathRound", Kind: KindDeployment, Since: 31,
		What: "the proportional split rounds with math.Round instead of adding 0.5 and truncating", ref: func(r *RuleSet) *bool { return &r.Deployment.MathRound }},
	{Field: "Deployment.StrictReplicasAnnotations", Kind: KindDeployment, Since: 32,
		What: "desired-/max-replicas annotations must be non-negative int32; a max of 0 falls back to status.replicas", ref: func(r *RuleSet) *bool { return &r.Deployment.StrictReplicasAnnotations }},
	{Field: "StatefulSet.MinReadySeconds", Kind: KindStatefulSet, Since: 22, Gate: StatefulSetMinReadySeconds,
		What: "scale-down waits for availability (minReadySeconds)", ref: func(r *RuleSet) *bool { return &r.StatefulSet.MinReadySeconds }},
	{Field: "StatefulSet.AutoDeletePVC", Kind: KindStatefulSet, Since: 23, Gate: StatefulSetAutoDeletePVC,
		What: "persistentVolumeClaimRetentionPolicy whenScaled is acted on", ref: func(r *RuleSet) *bool { return &r.StatefulSet.AutoDeletePVC }},
	{Field: "StatefulSet.ConcurrentParallel", Kind: KindStatefulSet, Since: 25,
		What: "Parallel deletions go out in slow-start batches", ref: func(r *RuleSet) *bool { return &r.StatefulSet.ConcurrentParallel }},
	{Field: "StatefulSet.StartOrdinal", Kind: KindStatefulSet, Since: 26, Gate: StatefulSetStartOrdinal,
		What: "spec.ordinals.start is honoured", ref: func(r *RuleSet) *bool { return &r.StatefulSet.StartOrdinal }},
	{Field: "StatefulSet.SucceededRecreated", Kind: KindStatefulSet, Since: 27,
		What: "in-range Succeeded pods are deleted and recreated like Failed ones", ref: func(r *RuleSet) *bool { return &r.StatefulSet.SucceededRecreated }},
	{Field: "StatefulSet.RecreateSameSync", Kind: KindStatefulSet, Until: 28,
		What: "a finished in-range pod is recreated in the same sync that deletes it", ref: func(r *RuleSet) *bool { return &r.StatefulSet.RecreateSameSync }},
	{Field: "StatefulSet.UnexpectedController", Kind: KindStatefulSet, Since: 28,
		What: "claims with a foreign controller or a stale owner are left alone", ref: func(r *RuleSet) *bool { return &r.StatefulSet.UnexpectedController }},
	{Field: "StatefulSet.UnavailableFirst", Kind: KindStatefulSet, Since: 34,
		What: "the first unhealthy pod is the first unavailable one", ref: func(r *RuleSet) *bool { return &r.StatefulSet.UnavailableFirst }},
	{Field: "StatefulSet.OwnerIndex", Kind: KindStatefulSet, Since: 34,
		What: "pods are listed by owner (owned first, then orphans)", ref: func(r *RuleSet) *bool { return &r.StatefulSet.OwnerIndex }},
	{Field: "StatefulSet.RecreateStrategy", Kind: KindStatefulSet, Since: 37,
		What: "the Recreate update strategy exists", ref: func(r *RuleSet) *bool { return &r.StatefulSet.RecreateStrategy }},
	{Field: "StatefulSet.RecreateGate", Kind: KindStatefulSet, Since: 37, Gate: StatefulSetRecreateStrategy,
		What: "the Recreate update strategy is enabled", ref: func(r *RuleSet) *bool { return &r.StatefulSet.RecreateGate }},
	{Field: "StatefulSet.MaxUnavailable", Kind: KindStatefulSetUpdate, Since: 24, Gate: MaxUnavailableStatefulSet,
		What: "a rolling update deletes up to maxUnavailable pods at a time", ref: func(r *RuleSet) *bool { return &r.StatefulSet.MaxUnavailable }},
	{Field: "StatefulSet.ParallelUnavailableFirst", Kind: KindStatefulSetUpdate, Since: 37,
		What: "Parallel updates delete already-unavailable old pods first, outside maxUnavailable", ref: func(r *RuleSet) *bool { return &r.StatefulSet.ParallelUnavailableFirst }},
	{Field: "Autoscaler.ConfigurableTolerance", Kind: KindAutoscaler, Gate: HPAConfigurableTolerance,
		What: "an autoscaler's behavior.scaleUp/scaleDown.tolerance replaces the controller-wide 0.1", ref: func(r *RuleSet) *bool { return &r.Autoscaler.ConfigurableTolerance }},
}, append(jobSwitches, daemonSetSwitches...)...)

// GatesOf returns the effective gates read by the controllers of these
// kinds (KindComparator, KindStatefulSet, ...): what a prediction for one
// workload kind lists.
func (r RuleSet) GatesOf(kinds ...string) map[string]bool {
	out := map[string]bool{}
	for _, s := range Switches {
		if v, ok := r.Gates[s.Gate]; ok && slices.Contains(kinds, s.Kind) {
			out[s.Gate] = v
		}
	}
	return out
}

// On reports whether the switch is on in 1.<minor> with these effective gates.
func (s Switch) On(minor int, gates map[string]bool) bool {
	if (s.Since != 0 && minor < s.Since) || (s.Until != 0 && minor >= s.Until) {
		return false
	}
	if s.Gate == "" {
		return true
	}
	h := gateHistory[s.Gate]
	switch {
	case minor < h.added:
		return false
	case !h.exists(minor):
		return true // graduated and removed
	case h.lockedIn(minor):
		return h.defaultFor(minor)
	}
	if v, ok := gates[s.Gate]; ok {
		return v
	}
	return h.defaultFor(minor)
}

// Version renders "1.37".
func (r RuleSet) Version() string { return fmt.Sprintf("1.%d", r.Minor) }

// Supported lists "1.21" ... "1.37".
func Supported() []string {
	out := make([]string, 0, Newest-Oldest+1)
	for m := Oldest; m <= Newest; m++ {
		out = append(out, fmt.Sprintf("1.%d", m))
	}
	return out
}

// ParseMinor accepts "1.29", "v1.29", "v1.29.3", "1.29.0-eks-123" and
// "1.30+" (a managed cluster's minor), and returns the minor, 29.
func ParseMinor(s string) (int, error) {
	bad := func(why string) error {
		return fmt.Errorf("cannot read Kubernetes version %q: %s (want 1.NN, e.g. 1.%d)", s, why, Newest)
	}
	v := strings.TrimPrefix(strings.TrimSpace(s), "v")
	if v == "" {
		return 0, bad("it is empty")
	}
	major, rest, ok := strings.Cut(v, ".")
	if major != "1" {
		return 0, bad(fmt.Sprintf("the major version is %q, not 1", major))
	}
	if !ok || rest == "" {
		return 0, bad("no minor version after \"1.\"")
	}
	end := strings.IndexFunc(rest, func(c rune) bool { return c < '0' || c > '9' })
	if end == -1 {
		end = len(rest)
	}
	if end == 0 {
		return 0, bad(fmt.Sprintf("the minor version %q does not start with a digit", rest))
	}
	if end > 3 {
		return 0, bad(fmt.Sprintf("the minor version %q is too long", rest[:end]))
	}
	m, err := strconv.Atoi(rest[:end])
	if err != nil {
		return 0, bad(err.Error())
	}
	return m, nil
}

// GatesFor returns the default value of every scale-in gate that exists in
// that version.
func GatesFor(minor int) map[string]bool {
	gates := map[string]bool{}
	for name, h := range gateHistory {
		if h.exists(minor) {
			gates[name] = h.defaultFor(minor)
		}
	}
	return gates
}

// ParseGates reads the components' --feature-gates syntax,
// "A=true,B=false", with component-base's own parser.
func ParseGates(s string) (map[string]bool, error) {
	out := map[string]bool{}
	parser := cliflag.NewMapStringBool(&out)
	// One item at a time, so that an error can say which item is wrong.
	for _, item := range strings.Split(s, ",") {
		if err := parser.Set(item); err != nil {
			return nil, fmt.Errorf("%q: %v (want Name=true|false, comma-separated)", item, err)
		}
	}
	return out, nil
}

// For builds the rule set of Kubernetes 1.<minor> with the given gate
// overrides. Like kube-controller-manager, it rejects gates it does not
// know, gates the version does not have, and attempts to change a gate that
// is locked to its default. It knows only the gates that change scale-in.
func For(minor int, overrides map[string]bool) (RuleSet, error) {
	if minor < Oldest || minor > Newest {
		return RuleSet{}, fmt.Errorf("version 1.%d is not supported: rules exist for 1.%d to 1.%d (use --kube-version to choose one)", minor, Oldest, Newest)
	}
	defaults := GatesFor(minor)
	for _, name := range slices.Sorted(maps.Keys(overrides)) {
		h, known := gateHistory[name]
		if !known {
			return RuleSet{}, fmt.Errorf("unknown feature gate %s: the gates that change scale-in in Kubernetes 1.%d are %s (other gates do not affect the prediction; leave them out)", name, minor, knownList(defaults))
		}
		if !h.exists(minor) {
			return RuleSet{}, fmt.Errorf("feature gate %s does not exist in Kubernetes 1.%d (its gates that change scale-in are %s)", name, minor, knownList(defaults))
		}
		if h.lockedIn(minor) && overrides[name] != defaults[name] {
			return RuleSet{}, fmt.Errorf("feature gate %s is locked to %v in Kubernetes 1.%d", name, defaults[name], minor)
		}
	}
	return Resolve(minor, overrides), nil
}

func knownList(gates map[string]bool) string {
	return strings.Join(slices.Sorted(maps.Keys(gates)), ", ")
}

// Resolve builds the rule set of 1.<minor> without validating the
// overrides: gates the version does not have are ignored, and a gate locked
// to its default keeps it. For model packages that take a version and gates
// directly; user input goes through For.
func Resolve(minor int, overrides map[string]bool) RuleSet {
	gates := GatesFor(minor)
	var overridden []string
	for name, val := range overrides {
		h, ok := gateHistory[name]
		if !ok || !h.exists(minor) {
			continue
		}
		if !h.lockedIn(minor) {
			gates[name] = val
		}
		if gates[name] == val {
			overridden = append(overridden, name)
		}
	}
	slices.Sort(overridden)
	r := RuleSet{Minor: minor, Gates: gates, Overridden: overridden}
	for _, s := range Switches {
		*s.ref(&r) = s.On(minor, gates)
	}
	return r
}

// Default is the newest version with default gates.
func Default() RuleSet { return Resolve(Newest, nil) }

// byMinor is Resolve(m, nil) for every supported m, built once: model
// packages that ask per call (the Deployment arithmetic) get a copy.
var byMinor = sync.OnceValue(func() []RuleSet {
	out := make([]RuleSet, Newest+1)
	for m := Oldest; m <= Newest; m++ {
		out[m] = Resolve(m, nil)
	}
	return out
})

// Defaults is the rule set of 1.<minor> with default gates; a minor outside
// the supported range gets the nearest supported one. Its Gates map is
// shared: read it, never write it.
func Defaults(minor int) RuleSet { return byMinor()[min(max(minor, Oldest), Newest)] }
