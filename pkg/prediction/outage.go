package prediction

// KindOutage is the target kind of an outage preview (outage NODE...).
const KindOutage = "Outage"

// Outage is what the control plane does when the nodes stop answering
// (outage NODE...). Times are seconds after the failure, from the assumed
// settings; a [min, max] pair is a window.
type Outage struct {
	// Condition: unreachable or not-ready.
	Condition    string              `json:"condition"`
	Assumed      OutageSettings      `json:"assumed"`
	Nodes        []OutageNode        `json:"nodes"`
	Zones        []OutageZone        `json:"zones"`
	Pods         []OutagePod         `json:"pods"`
	Replacements []OutageReplacement `json:"replacements"`
	Workloads    []OutageWorkload    `json:"workloads"`
	Budgets      []OutageBudget      `json:"budgets"`
}

// OutageSettings are the kube-controller-manager (and kubelet) settings
// the times follow from: the version's defaults unless flags set them.
type OutageSettings struct {
	NodeMonitorGracePeriodSeconds float64 `json:"nodeMonitorGracePeriodSeconds"`
	NodeMonitorPeriodSeconds      float64 `json:"nodeMonitorPeriodSeconds"`
	NodeEvictionRate              float64 `json:"nodeEvictionRate"`
	SecondaryNodeEvictionRate     float64 `json:"secondaryNodeEvictionRate"`
	UnhealthyZoneThreshold        float64 `json:"unhealthyZoneThreshold"`
	LargeClusterSizeThreshold     int     `json:"largeClusterSizeThreshold"`
	LeaseRenewIntervalSeconds     float64 `json:"leaseRenewIntervalSeconds"`
}

// OutageNode is one failed node.
type OutageNode struct {
	Node string `json:"node"`
	Zone string `json:"zone"`
	// TaintedAfterSeconds: when the NoExecute taint is set; null when never.
	TaintedAfterSeconds []float64 `json:"taintedAfterSeconds"`
	Taint               string    `json:"taint"`
	Reason              string    `json:"reason"`
	Excluded            bool      `json:"excludedFromDisruption"`
	Certain             bool      `json:"certain"`
}

// OutageZone is a zone's state once every failed node is marked.
type OutageZone struct {
	Zone string `json:"zone"`
	// State: Normal, PartialDisruption or FullDisruption; Passes the
	// states on the way.
	State    string   `json:"state"`
	Passes   []string `json:"passes"`
	Nodes    int      `json:"nodes"`
	NotReady int      `json:"notReady"`
	Failed   int      `json:"failed"`
	// Rate: NoExecute taints per second in the final state.
	Rate float64 `json:"rate"`
}

// OutagePod is one pod on a failed node.
type OutagePod struct {
	Pod  string `json:"pod"`
	Node string `json:"node"`
	// Fate: deleted, stays or stuck (deleted but left Terminating).
	Fate                string    `json:"fate"`
	DeletedAfterSeconds []float64 `json:"deletedAfterSeconds"`
	// TerminatingAfterSeconds: for stuck, when the DELETE is issued.
	TerminatingAfterSeconds []float64 `json:"terminatingAfterSeconds,omitempty"`
	Toleration              string    `json:"toleration"`
	Reason                  string    `json:"reason"`
	Owner                   string    `json:"owner"`
	Replaced                bool      `json:"replaced"`
	Certain                 bool      `json:"certain"`
}

// OutageReplacement is the pod a controller creates for a deleted one.
type OutageReplacement struct {
	For   string `json:"for"`
	Owner string `json:"owner"`
	// Node: where the scheduler likely binds it; "" when it fits nowhere
	// (Reason is then the scheduler's FitError message).
	Node       string    `json:"node"`
	Candidates []string  `json:"candidates"`
	Reason     string    `json:"reason"`
	AtSeconds  []float64 `json:"createdAfterSeconds"`
	Certain    bool      `json:"certain"`
}

// OutageWorkload is an owner with pods on failed nodes.
type OutageWorkload struct {
	Kind         string   `json:"kind"`
	Name         string   `json:"name"`
	Replicas     int      `json:"replicas"`
	AvailableMin int      `json:"availableMin"`
	ReachesZero  bool     `json:"reachesZero"`
	BudgetBroken bool     `json:"budgetBroken"`
	BrokenFrom   *float64 `json:"brokenFromSeconds"`
	BrokenUntil  *float64 `json:"brokenUntilSeconds"`
	Budgets      []string `json:"budgets"`
}

// OutageBudget is a PodDisruptionBudget over pods on failed nodes.
type OutageBudget struct {
	Name           string   `json:"name"`
	DesiredHealthy int32    `json:"desiredHealthy"`
	HealthyMin     int32    `json:"healthyMin"`
	Broken         bool     `json:"broken"`
	BrokenFrom     *float64 `json:"brokenFromSeconds"`
	BrokenUntil    *float64 `json:"brokenUntilSeconds"`
}

func (o *Outage) normalize() {
	nonNil(&o.Nodes)
	nonNil(&o.Zones)
	nonNil(&o.Pods)
	nonNil(&o.Replacements)
	nonNil(&o.Workloads)
	nonNil(&o.Budgets)
	for i := range o.Zones {
		nonNil(&o.Zones[i].Passes)
	}
	for i := range o.Replacements {
		nonNil(&o.Replacements[i].Candidates)
	}
	for i := range o.Workloads {
		nonNil(&o.Workloads[i].Budgets)
	}
}
