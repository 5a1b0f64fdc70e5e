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
