// Package drain predicts what `kubectl drain NODE...` does: which pods
// kubectl's pre-checks refuse or skip (k8s.io/kubectl pkg/drain), which
// evictions the Eviction API lets through at once and which wait on a
// PodDisruptionBudget (pkg/registry/core/pod/storage/eviction.go), the
// replacements the controllers create and where the scheduler can put
// them (pkg/scheduling), the budgets' status as the disruption controller
// recomputes it (pkg/disruption), and whether each node's drain ends.
// Pure: no clients, no clock; the time is an input.
package drain

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

// Options are kubectl drain's flags, with its defaults and meanings.
type Options struct {
	IgnoreDaemonSets   bool
	DeleteEmptyDirData bool
	Force              bool
	DisableEviction    bool
	// PodSelector limits the pods kubectl lists on each node (nil: all).
	PodSelector labels.Selector
	// GracePeriodSeconds: negative means each pod's own.
	GracePeriodSeconds int
	// Timeout: 0 waits forever, so a drain that never ends stops the
	// command on that node and later nodes are never drained.
	Timeout                         time.Duration
	SkipWaitForDeleteTimeoutSeconds int
}

// Input is the cluster as read, and what to drain.
type Input struct {
	Nodes []*corev1.Node
	// Drain are the nodes to drain, in kubectl's order.
	Drain      []string
	Pods       []*corev1.Pod
	PDBs       []*policyv1.PodDisruptionBudget
	Workloads  disruption.Workloads
	Namespaces []*corev1.Namespace // nil when not read
	// OwnersRead says which owner kinds were read: an owner of a kind not
	// read is unknown, not absent.
	OwnersRead map[string]bool
	Scheduler  rules.SchedulerRules
	Disruption rules.DisruptionRules
	Now        time.Time
	Options    Options
}

// Node outcomes.
const (
	OutcomeDrained = "drained"
	OutcomeBlocked = "blocked"
	OutcomeRefused = "refused"
)

// Pod actions.
const (
	ActionEvicted          = "evicted"            // at once
	ActionEvictedAfterWait = "evicted-after-wait" // after a PDB let it through
	ActionDeleted          = "deleted"            // --disable-eviction
	ActionSkipped          = "skipped"            // kubectl's filters leave it
	ActionBlocking         = "blocking"           // never leaves
	ActionRefused          = "refused"            // a pre-check kubectl refuses the node for
	ActionNotEvicted       = "not-evicted"        // kubectl refused the node or never reached it
)

// Result is the prediction.
type Result struct {
	Nodes        []NodeResult
	Replacements []Replacement
	// Victims are every pod evicted or deleted, in drain order.
	Victims []string
	// Certain: every node's outcome and pod lists, and whether each
	// replacement is scheduled, hold whatever the scheduler's scoring and
	// the timing do.
	Certain   bool
	Uncertain []string
	Warnings  []string
	// BrokenBudgets: with --disable-eviction, the budgets the deletions
	// take below their minimum.
	BrokenBudgets []string
	// Unweighed: the races had too many branches to run them all, so the
	// Outcomes and Placements list what the runs met, without chances.
	Unweighed bool
}

// Chance is one branch's answer in a race (branches.go) and how likely it
// is: the sum of the chances of the branches that give it.
type Chance struct {
	// Value is an outcome (NodeResult.Outcomes) or a node, "" for fits
	// nowhere (Replacement.Placements).
	Value string
	P     float64
	// Reason: for an outcome, what the node's drain does in those
	// branches; for fits nowhere, the scheduler's FitError.
	Reason string
}

// NodeResult is one node's drain.
type NodeResult struct {
	Node      string
	Outcome   string
	Evicted   []string
	Remaining []string
	Skipped   []string
	Certain   bool
	Pods      []PodResult
	Reason    string
	// Outcomes: set when the branches of a race end the node's drain
	// differently, the likeliest first (Outcome is the first's).
	Outcomes []Chance
}

// PodResult is what happens to one pod kubectl lists on the node.
type PodResult struct {
	Pod                string
	Action             string
	PDB                string
	Why                string
	GracePeriodSeconds int64
	// WaitsFor names the replacement pods whose Readiness the eviction
	// waited for.
	WaitsFor []string
}

// Replacement is a pod a controller creates for an evicted one.
type Replacement struct {
	For   string // namespace/name of the pod replaced
	Owner string // Kind/name
	// Node is where the scheduler binds it; "" when it fits nowhere.
	Node string
	// Candidates are the nodes where every filter passes, over every
	// branch of the races.
	Candidates []string
	Reason     string
	Certain    bool
	// Placements: set when the branches of a race place it differently,
	// the likeliest first (Node is the first's). The chances sum below 1
	// when some branches never create it.
	Placements []Chance

	// batch (the scheduling pass it was created before), class (raceClass)
	// and raced (checkRace) tell which replacements are alike in a race.
	batch int
	class string
	raced bool
}
