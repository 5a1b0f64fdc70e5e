package prediction

// Preemption is the scheduler's preemption for a pending pod (target kind
// Pod): whether it may preempt, the possible nominated nodes with their
// victims, and why the winner beat the runner-up.
type Preemption struct {
	// Priority, PriorityClass and PreemptionPolicy are the pending pod's,
	// resolved as admission would for a manifest.
	Priority         int32  `json:"priority"`
	PriorityClass    string `json:"priorityClass,omitempty"`
	PreemptionPolicy string `json:"preemptionPolicy"`
	// Eligible is false when the pod may not preempt (reason says why).
	Eligible bool   `json:"eligible"`
	Reason   string `json:"reason,omitempty"`
	// FitsOn lists nodes where the pod fits without preempting anything.
	FitsOn []string `json:"fitsOn"`
	// PotentialNodes failed only filters that removing pods can fix;
	// TriedNodes is how many of them the scheduler dry-runs.
	PotentialNodes int                 `json:"potentialNodes"`
	TriedNodes     int                 `json:"triedNodes"`
	Outcomes       []PreemptionOutcome `json:"outcomes"`
	RunnerUp       *PreemptionRunnerUp `json:"runnerUp,omitempty"`
	Excluded       []ExcludedNode      `json:"excluded"`
}

// PreemptionOutcome is one node the scheduler may nominate.
type PreemptionOutcome struct {
	Node          string             `json:"node"`
	Probability   float64            `json:"probability"`
	PDBViolations int                `json:"pdbViolations"`
	Victims       []PreemptionVictim `json:"victims"`
}

// PreemptionVictim is a pod deleted on that node, most important first.
type PreemptionVictim struct {
	Namespace   string   `json:"namespace"`
	Name        string   `json:"name"`
	Priority    int32    `json:"priority"`
	Owner       string   `json:"owner,omitempty"`
	PDBs        []string `json:"pdbs"`
	ViolatesPDB bool     `json:"violatesPDB"`
}

// PreemptionRunnerUp is the best other candidate and the first criterion
// (in the scheduler's order) that separates it from the nominated node.
type PreemptionRunnerUp struct {
	Node      string `json:"node"`
	Criterion string `json:"criterion"`
	Nominated string `json:"nominated"` // the nominated node's value
	Other     string `json:"other"`     // the runner-up's value
}

// ExcludedNode is a node that is no preemption candidate, and why.
type ExcludedNode struct {
	Node   string `json:"node"`
	Reason string `json:"reason"`
}

// PreemptionCriteria are pickOneNodeForPreemption's criteria in order, as
// runnerUp.criterion names them.
var PreemptionCriteria = []string{
	"fewest PDB violations",
	"lowest highest-victim priority",
	"lowest sum of victim priorities",
	"fewest victims",
	"latest start of the highest-priority victims",
}
