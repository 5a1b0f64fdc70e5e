package prediction

// Rollout outcomes.
const (
	RolloutCompletes  = "completes"
	RolloutStalls     = "stalls"
	RolloutNotStarted = "not-started"
)

// Rollout is what a rollout of a workload does, step by step (rollout
// TYPE/NAME). See docs/rollout.md.
type Rollout struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Strategy  string `json:"strategy"`
	// Change is restart, image, resume or desired.
	Change string `json:"change"`
	// Outcome is completes, stalls or not-started.
	Outcome string `json:"outcome"`
	// Reason says why it stalls or does not start; "" when it completes.
	Reason string `json:"reason"`
	// Unblock is the one thing that would unblock a stall.
	Unblock string `json:"unblock"`
	// Remaining are the old pods still there when it stalls.
	Remaining     []string      `json:"remaining"`
	Steps         []RolloutStep `json:"steps"`
	IfNewPodsFail IfNewPodsFail `json:"ifNewPodsFail"`
}

// RolloutStep ends where the controller must wait for new pods to become
// available.
type RolloutStep struct {
	// Deleted are the old pods the step deletes, namespace/name, in rank order.
	Deleted []string        `json:"deleted"`
	Created []RolloutCreate `json:"created"`
	// WaitsFor is how many new pods must become available before the next step.
	WaitsFor int `json:"waitsFor"`
	// AvailableMin is the lowest number of available pods of the workload
	// during the step.
	AvailableMin int32           `json:"availableMin"`
	Budgets      []RolloutBudget `json:"budgets"`
	Certain      bool            `json:"certain"`
	// Why holds, per deleted pod, the rule that chose it (the WHY column).
	Why []string `json:"why"`
}

// RolloutCreate is one new pod of a step.
type RolloutCreate struct {
	// Pod is the new pod's name where the controller determines it; "" for
	// generated names.
	Pod string `json:"pod"`
	// Node is where the scheduler binds it; "" when it fits nowhere or the
	// node is not determined (Candidates then lists where it may go).
	Node       string   `json:"node"`
	Candidates []string `json:"candidates"`
	Reason     string   `json:"reason"`
}

// RolloutBudget is one PodDisruptionBudget selecting the workload's pods,
// at the step's lowest point.
type RolloutBudget struct {
	Name              string `json:"name"`
	DesiredHealthy    int32  `json:"desiredHealthy"`
	CurrentHealthyMin int32  `json:"currentHealthyMin"`
	Violated          bool   `json:"violated"`
}

// IfNewPodsFail is what a bad release costs: the old pods deleted before
// the rollout stops when no new pod ever becomes available.
type IfNewPodsFail struct {
	Deleted      []string `json:"deleted"`
	AvailableMin int32    `json:"availableMin"`
}

func (r *Rollout) normalize() {
	nonNil(&r.Remaining)
	nonNil(&r.Steps)
	nonNil(&r.IfNewPodsFail.Deleted)
	for i := range r.Steps {
		s := &r.Steps[i]
		nonNil(&s.Deleted)
		nonNil(&s.Created)
		nonNil(&s.Budgets)
		nonNil(&s.Why)
		for j := range s.Created {
			nonNil(&s.Created[j].Candidates)
		}
	}
}
