// Package rules holds, per Kubernetes minor version, the switches that change
// how the controllers pick scale-in victims: the comparator's rules, the
// feature gates behind them and their per-version defaults.
//
// Every entry was read from that release's k8s.io/kubernetes source
// (pkg/controller/controller_utils.go, pkg/features/kube_features.go,
// pkg/controller/statefulset); see the README's version table.
package rules

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Oldest and Newest bound the supported Kubernetes minor versions (1.x).
const (
	Oldest = 21
	Newest = 37
)

// BurstReplicas is the most pods a ReplicaSet deletes in one sync
// (replicaset.BurstReplicas, passed by kube-controller-manager for RS and RC).
const BurstReplicas = 500

// Gate names that matter for scale-in.
const (
	PodDeletionCost            = "PodDeletionCost"
	LogarithmicScaleDown       = "LogarithmicScaleDown"
	StatefulSetMinReadySeconds = "StatefulSetMinReadySeconds"
	StatefulSetAutoDeletePVC   = "StatefulSetAutoDeletePVC"
	StatefulSetStartOrdinal    = "StatefulSetStartOrdinal"
)

// gateSpan is one gate's life: the minor version it appeared in, the
// version its default became true, the version it was locked on (GA) and
// the version it was removed (0 = not yet).
type gateSpan struct {
	added, defaultOn, locked, removed int
}

var gateHistory = map[string]gateSpan{
	PodDeletionCost:            {added: 21, defaultOn: 22},
	LogarithmicScaleDown:       {added: 21, defaultOn: 22, locked: 31, removed: 37},
	StatefulSetMinReadySeconds: {added: 22, defaultOn: 23, locked: 25, removed: 27},
	StatefulSetAutoDeletePVC:   {added: 23, defaultOn: 27, locked: 32, removed: 35},
	StatefulSetStartOrdinal:    {added: 26, defaultOn: 27, locked: 31, removed: 34},
}

// RuleSet is everything version-dependent the prediction needs.
type RuleSet struct {
	Minor int             // Kubernetes 1.<Minor>
	Gates map[string]bool // effective gates that exist in this version
	// Overridden names the gates set by the user rather than by default.
	Overridden []string

	DeletionCost    bool // comparator rule 4 is active
	LogScale        bool // rules 6 and 8 compare log2 age buckets, ties by UID
	SidecarRestarts bool // rule 7 also compares restartable init containers (1.32+)
	// RCRanks: before 1.24 the sibling lookup also worked for
	// ReplicationControllers with a controller owner; from 1.24 the
	// controllerUID indexer only understands ReplicaSets, so RCs rank 0.
	RCRanks bool
	// StatefulSet switches.
	StartOrdinal     bool // spec.ordinals.start honoured
	AutoDeletePVC    bool // persistentVolumeClaimRetentionPolicy honoured
	MinReadySeconds  bool // StatefulSet availability checks
	UnavailableFirst bool // 1.34+: first unhealthy pod chosen by availability
	// FilterByOwner: 1.34+ lists candidates by owner index (owned first, then orphans).
	FilterByOwner bool
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
// returns 29.
func ParseMinor(s string) (int, error) {
	v := strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 || parts[0] != "1" {
		return 0, fmt.Errorf("cannot read Kubernetes version %q: want 1.NN", s)
	}
	digits := parts[1]
	for i, c := range digits {
		if c < '0' || c > '9' {
			digits = digits[:i]
			break
		}
	}
	m, err := strconv.Atoi(digits)
	if err != nil || digits == "" {
		return 0, fmt.Errorf("cannot read Kubernetes version %q: want 1.NN", s)
	}
	return m, nil
}

// GatesFor returns the default value of every scale-in gate that exists in
// that version.
func GatesFor(minor int) map[string]bool {
	gates := map[string]bool{}
	for name, h := range gateHistory {
		if minor < h.added || (h.removed != 0 && minor >= h.removed) {
			continue
		}
		gates[name] = minor >= h.defaultOn
	}
	return gates
}

// ParseGates reads the components' --feature-gates syntax: "A=true,B=false".
func ParseGates(s string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		kv = strings.TrimSpace(kv)
		if kv == "" {
			continue
		}
		name, val, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("missing bool value for feature gate %q (want Name=true|false)", kv)
		}
		b, err := strconv.ParseBool(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("invalid value %q for feature gate %s (want true or false)", val, name)
		}
		out[strings.TrimSpace(name)] = b
	}
	return out, nil
}

// For builds the rule set of Kubernetes 1.<minor> with the given gate
// overrides. Like kube-controller-manager, it rejects gates the version does
// not know and attempts to change a gate that is locked to its default.
// Gates that do not affect scale-in are accepted and ignored.
func For(minor int, overrides map[string]bool) (RuleSet, error) {
	if minor < Oldest || minor > Newest {
		return RuleSet{}, fmt.Errorf("Kubernetes 1.%d is not supported: rules exist for 1.%d to 1.%d (use --kube-version to choose one)", minor, Oldest, Newest)
	}
	gates := GatesFor(minor)
	var overridden []string
	for name, val := range overrides {
		h, known := gateHistory[name]
		if !known {
			continue // a gate that does not change scale-in
		}
		if _, exists := gates[name]; !exists {
			return RuleSet{}, fmt.Errorf("feature gate %s does not exist in Kubernetes 1.%d", name, minor)
		}
		if h.locked != 0 && minor >= h.locked && val != gates[name] {
			return RuleSet{}, fmt.Errorf("feature gate %s is locked to %v in Kubernetes 1.%d", name, gates[name], minor)
		}
		gates[name] = val
		overridden = append(overridden, name)
	}
	sort.Strings(overridden)
	on := func(name string, whenRemoved bool) bool {
		if v, ok := gates[name]; ok {
			return v
		}
		return whenRemoved
	}
	startOrdinal := minor >= 26 && on(StatefulSetStartOrdinal, minor >= 34)
	if minor >= 31 {
		startOrdinal = true // the controller stopped checking the gate in 1.31
	}
	return RuleSet{
		Minor:            minor,
		Gates:            gates,
		Overridden:       overridden,
		DeletionCost:     on(PodDeletionCost, false),
		LogScale:         on(LogarithmicScaleDown, minor >= 37),
		SidecarRestarts:  minor >= 32,
		RCRanks:          minor <= 23,
		StartOrdinal:     startOrdinal,
		AutoDeletePVC:    minor >= 23 && on(StatefulSetAutoDeletePVC, minor >= 35),
		MinReadySeconds:  minor >= 22 && on(StatefulSetMinReadySeconds, minor >= 27),
		UnavailableFirst: minor >= 34,
		FilterByOwner:    minor >= 34,
	}, nil
}

// Default is the newest version with default gates.
func Default() RuleSet {
	r, err := For(Newest, nil)
	if err != nil {
		panic(err) // the table above is static; a failure is a programming error
	}
	return r
}
