// Package outage predicts what the control plane does when nodes stop
// answering: when the node lifecycle controller marks each node and taints
// it NoExecute, at the rate its zone's state allows
// (pkg/controller/nodelifecycle), when the taint eviction controller
// deletes each pod (pkg/controller/tainteviction), which pods the
// controllers replace and where the scheduler can put them
// (pkg/scheduling), which stay Terminating, and which workloads and
// PodDisruptionBudgets fall short (pkg/disruption). Times are seconds
// after the failure, as windows where heartbeat timing or the zone queue's
// order decide. Pure: no clients, no clock.
package outage

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

// Conditions: how the nodes fail.
const (
	// ConditionUnreachable: the kubelet stops reporting (node down, network
	// lost); Ready turns Unknown after the grace period.
	ConditionUnreachable = "unreachable"
	// ConditionNotReady: the kubelet reports Ready=False.
	ConditionNotReady = "not-ready"
)

// Taint keys the node lifecycle controller sets.
const (
	TaintUnreachable = "node.kubernetes.io/unreachable"
	TaintNotReady    = "node.kubernetes.io/not-ready"
	// LabelExcludeDisruption keeps a node out of its zone's state.
	LabelExcludeDisruption = "node.kubernetes.io/exclude-disruption"
)

// Zone states, the controller's words.
const (
	StateNormal  = "Normal"
	StatePartial = "PartialDisruption"
	StateFull    = "FullDisruption"
)

// Pod fates.
const (
	FateDeleted = "deleted"
	FateStays   = "stays"
	FateStuck   = "stuck"
)

// Settings are kube-controller-manager's and the kubelet's, as assumed.
type Settings struct {
	Condition string
	rules.OutageRules
}

// Input is the cluster as read and the nodes that fail.
type Input struct {
	Nodes      []*corev1.Node
	Failed     []string
	Pods       []*corev1.Pod
	PDBs       []*policyv1.PodDisruptionBudget
	Workloads  disruption.Workloads
	Namespaces []*corev1.Namespace
	// OwnersRead says which owner kinds were read: an owner of a kind not
	// read is unknown, not absent.
	OwnersRead map[string]bool
	Scheduler  rules.SchedulerRules
	Now        time.Time
	Settings   Settings
}

// Window is a time range in seconds after the failure.
type Window struct{ Min, Max float64 }

// Add shifts the window by d seconds.
func (w Window) Add(d float64) Window { return Window{w.Min + d, w.Max + d} }

// NodeResult is one failed node.
type NodeResult struct {
	Node, Zone string
	// Tainted is when the NoExecute taint is set; nil when never.
	Tainted  *Window
	Taint    string
	Reason   string
	Excluded bool
	Certain  bool
}

// ZoneResult is one zone's state once every failed node is marked.
type ZoneResult struct {
	Zone string
	// State is the final state; Passes the states on the way, in order.
	State    string
	Passes   []string
	Nodes    int // counted in the state (without excluded nodes)
	NotReady int
	Failed   int
	// Rate is the taints per second in the final state.
	Rate float64
}

// PodResult is one pod on a failed node.
type PodResult struct {
	Pod, Node, Owner string
	Fate             string
	// Deleted: when the pod is deleted (fate deleted); Terminating: when
	// the DELETE of a stuck pod is issued.
	Deleted, Terminating *Window
	Toleration           string
	Reason               string
	Replaced             bool
	Certain              bool
}

// Replacement is a pod a controller creates for a deleted one.
type Replacement struct {
	For, Owner string
	// Node is where the scheduler binds it, "" when it fits nowhere.
	Node       string
	Candidates []string
	Reason     string
	// At is when it is created (and, startup not modelled, available).
	At      Window
	Certain bool
}

// Workload is one owner with pods on failed nodes.
type Workload struct {
	Kind, Name   string
	Replicas     int
	AvailableMin int
	ReachesZero  bool
	BudgetBroken bool
	// BrokenFrom/Until: seconds; Until nil when never restored.
	BrokenFrom, BrokenUntil *float64
	Budgets                 []string
}

// Budget is one PodDisruptionBudget the failure breaks or touches.
type Budget struct {
	Name                    string
	DesiredHealthy          int32
	HealthyMin              int32
	Broken                  bool
	BrokenFrom, BrokenUntil *float64
}

// Result is the prediction.
type Result struct {
	Nodes        []NodeResult
	Zones        []ZoneResult
	Pods         []PodResult
	Replacements []Replacement
	Workloads    []Workload
	Budgets      []Budget
	// Victims are the pods deleted (stuck ones too), by deletion time.
	Victims   []string
	Certain   bool
	Uncertain []string
	Warnings  []string
}
