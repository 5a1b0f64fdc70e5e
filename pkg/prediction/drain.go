package prediction

// KindDrain is the target kind of a drain preview (drain NODE...).
const KindDrain = "Drain"

// Drain is what `kubectl drain` does to each node, in drain order, and
// where the replacements go (drain NODE...).
type Drain struct {
	Nodes        []DrainNode        `json:"nodes"`
	Replacements []DrainReplacement `json:"replacements"`
	// BrokenBudgets: with --disable-eviction, the budgets the deletions
	// take below their minimum.
	BrokenBudgets []string `json:"brokenBudgets"`
}

// DrainNode is one node's drain.
type DrainNode struct {
	Node string `json:"node"`
	// Outcome is drained, blocked or refused.
	Outcome string `json:"outcome"`
	// Evicted are the pods the drain removes from the node (evicted, or
	// deleted with --disable-eviction); Remaining, for blocked, the pods
	// still there when the drain gives up, and for refused every pod
	// kubectl would have acted on; Skipped the pods kubectl's filters
	// leave. Each namespace/name.
	Evicted   []string   `json:"evicted"`
	Remaining []string   `json:"remaining"`
	Skipped   []string   `json:"skipped"`
	Certain   bool       `json:"certain"`
	Reason    string     `json:"reason"`
	Pods      []DrainPod `json:"pods"`
	// Outcomes: set when the branches of a race between replacements end
	// the node's drain differently; each outcome with its chance, the
	// likeliest first (Outcome, and the lists above, are the first's).
	Outcomes []DrainOutcome `json:"outcomes,omitempty"`
}

// DrainOutcome is one outcome of a node's drain in a race.
type DrainOutcome struct {
	Outcome string `json:"outcome"`
	// Probability is nil when the race has too many branches to weigh.
	Probability *float64 `json:"probability,omitempty"`
	// Reason is what the drain does in those branches.
	Reason string `json:"reason"`
}

// DrainPod is what happens to one pod kubectl lists on the node.
type DrainPod struct {
	Pod string `json:"pod"`
	// Action: evicted, evicted-after-wait, deleted, skipped, blocking,
	// refused or not-evicted.
	Action             string   `json:"action"`
	PDB                string   `json:"pdb"`
	Why                string   `json:"why"`
	GracePeriodSeconds int64    `json:"gracePeriodSeconds"`
	WaitsFor           []string `json:"waitsFor"`
}

// DrainReplacement is the pod a controller creates for an evicted one.
type DrainReplacement struct {
	For   string `json:"for"`
	Owner string `json:"owner"`
	// Node is where the scheduler binds it, "" when it fits nowhere
	// (Reason is then the scheduler's FitError message).
	Node       string   `json:"node"`
	Reason     string   `json:"reason"`
	Candidates []string `json:"candidates"`
	Certain    bool     `json:"certain"`
	// Placements: set when the branches of a race place it differently;
	// each node ("" for fits nowhere) with its chance, the likeliest first
	// (Node is the first's). The chances sum below 1 when some branches
	// never create it.
	Placements []DrainPlacement `json:"placements,omitempty"`
}

// DrainPlacement is one node a replacement gets in a race.
type DrainPlacement struct {
	Node string `json:"node"`
	// Probability is nil when the race has too many branches to weigh.
	Probability *float64 `json:"probability,omitempty"`
	// Reason: for node "", the scheduler's FitError in those branches.
	Reason string `json:"reason,omitempty"`
}

func (d *Drain) normalize() {
	nonNil(&d.Nodes)
	nonNil(&d.Replacements)
	nonNil(&d.BrokenBudgets)
	for i := range d.Nodes {
		n := &d.Nodes[i]
		nonNil(&n.Evicted)
		nonNil(&n.Remaining)
		nonNil(&n.Skipped)
		nonNil(&n.Pods)
		for j := range n.Pods {
			nonNil(&n.Pods[j].WaitsFor)
		}
	}
	for i := range d.Replacements {
		nonNil(&d.Replacements[i].Candidates)
	}
}
