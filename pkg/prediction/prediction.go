package prediction

import "time"

// APIVersion and Kind identify the JSON document.
const (
	APIVersion = "scale-preview/v1"
	Kind       = "ScalePreview"
)

// Steps that kill a pod in a Deployment scale-in.
const (
	StepScale   = "scale"   // the scale itself (proportional split)
	StepRollout = "rollout" // the rollout continuing right after the scale
	// StepEither: certain to die, but chance decides whether the scale or
	// the rollout kills it (a tie cut by the scale, the rest taken by the rollout).
	StepEither = "scale-or-rollout"
)

// Prediction is everything the plugin predicts for one scale-in.
type Prediction struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// SchemaVersion is the field set's version (see SchemaVersion).
	SchemaVersion   int       `json:"schemaVersion"`
	Target          Target    `json:"target"`
	CurrentReplicas int32     `json:"currentReplicas"`
	DesiredReplicas int32     `json:"desiredReplicas"`
	ReferenceTime   time.Time `json:"referenceTime"`
	// StableUntil: the prediction holds until then if nothing else changes;
	// null when no age-based rule can change it.
	StableUntil *time.Time `json:"stableUntil"`
	// StableUntilIsLowerBound: no change was found up to stableUntil, but
	// the search stopped there; the prediction holds at least that long.
	StableUntilIsLowerBound bool      `json:"stableUntilIsLowerBound,omitempty"`
	Rules                   RulesInfo `json:"rules"`
	// Message is one sentence summary, e.g. "scale-up: no pod would be deleted".
	Message string `json:"message"`
	// Victims are the pods deleted, in deletion order; the most likely
	// outcome where chance decides. Names in the target's namespace for a
	// scale-in; namespace/name where they can span namespaces (node, pod).
	Victims []string `json:"victims"`
	// Certain is true when every pod's fate is determined.
	Certain    bool             `json:"certain"`
	Pods       []Pod            `json:"pods"`
	Contenders []ContenderGroup `json:"contenders"`
	// ReplicaSets shows a Deployment's split: sizes before, after the
	// scale step and after the rollout continues.
	ReplicaSets []ReplicaSetStep `json:"replicaSets"`
	// Creates counts pods the controllers would create (never victims).
	Creates     int              `json:"creates,omitempty"`
	StatefulSet *StatefulSetInfo `json:"statefulSet,omitempty"`
	Job         *JobInfo         `json:"job,omitempty"`
	// Impact is pods per node (and zone) before and after.
	Impact *Impact `json:"impact,omitempty"`
	// Conflicts are what will fight or be hurt by the change.
	Conflicts []Conflict `json:"conflicts"`
	Steering  *Steering  `json:"steering,omitempty"`
	// Autoscaler is set when the target is a HorizontalPodAutoscaler.
	Autoscaler *Autoscaler `json:"autoscaler,omitempty"`
	// Eviction is set when the target is a Node: the kubelet's
	// node-pressure eviction (eviction.go).
	Eviction *Eviction `json:"eviction,omitempty"`
	// NominatedNode and Preemption: the target is a pending Pod (preemption.go).
	NominatedNode string      `json:"nominatedNode,omitempty"`
	Preemption    *Preemption `json:"preemption,omitempty"`
	// Drain is set when the command is drain NODE... (drain.go).
	Drain *Drain `json:"drain,omitempty"`
	// Rollout is set when the command is rollout TYPE/NAME (rollout.go).
	Rollout *Rollout `json:"rollout,omitempty"`

	Warnings []string `json:"warnings"`
	// Incomplete says why the input may not show the whole workload at one
	// moment (status and pods disagree, a change not yet observed, the
	// workload moved while it was read). Non-empty makes Certain false.
	Incomplete []string `json:"incomplete"`
}

// Impact is where the replicas are before and after the scale-in.
type Impact struct {
	Nodes []Placement `json:"nodes"`
	Zones []Placement `json:"zones"`
	// ZonesKnown is false when Node objects could not be read.
	ZonesKnown bool `json:"zonesKnown"`
}

// Placement counts the workload's pods in one node or zone.
type Placement struct {
	Name   string `json:"name"`
	Before int    `json:"before"`
	After  int    `json:"after"`
	// Emptied: it had replicas and loses all of them.
	Emptied bool `json:"emptied,omitempty"`
}

// Conflict is one thing that will fight or be hurt by the change.
type Conflict struct {
	Kind    string `json:"kind"` // HorizontalPodAutoscaler, PodDisruptionBudget, Rollout, Terminating, DeletionCost, Note
	Name    string `json:"name,omitempty"`
	Message string `json:"message"`
}

// Steering is the smallest set of deletion-cost annotations that makes the
// controller delete exactly the wanted pods.
type Steering struct {
	Wanted      []string     `json:"wanted"`
	Possible    bool         `json:"possible"`
	Reason      string       `json:"reason,omitempty"`
	Annotations []Annotation `json:"annotations"`
	Commands    []string     `json:"commands"`
	// Verified: the engine, re-run with the annotations, deletes exactly
	// the wanted pods and every fate is certain.
	Verified bool   `json:"verified"`
	Note     string `json:"note"`
}

// Annotation is one pod-deletion-cost to set.
type Annotation struct {
	Pod  string `json:"pod"`
	Cost int32  `json:"cost"`
	Was  string `json:"was,omitempty"`
}

// Target names the scaled object.
type Target struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// RulesInfo says which Kubernetes version's rules were applied and why.
type RulesInfo struct {
	KubernetesVersion string `json:"kubernetesVersion"`
	// VersionSource: "kube-controller-manager", "apiserver", "flag" or "default".
	VersionSource string          `json:"versionSource"`
	VersionDetail string          `json:"versionDetail,omitempty"`
	FeatureGates  map[string]bool `json:"featureGates"`
	Overridden    []string        `json:"overriddenGates"`
}

// Pod is one pod's predicted fate and the facts the rules read.
type Pod struct {
	Name       string     `json:"name"`
	UID        string     `json:"uid"`
	Owner      string     `json:"owner,omitempty"` // Kind/name of its controller
	Node       string     `json:"node"`
	Phase      string     `json:"phase"`
	Ready      bool       `json:"ready"`
	ReadySince *time.Time `json:"readySince,omitempty"`
	Created    time.Time  `json:"created"`
	// DeletionCost is what the controller uses (invalid values count as 0).
	DeletionCost        int32  `json:"deletionCost"`
	DeletionCostRaw     string `json:"deletionCostAnnotation,omitempty"`
	DeletionCostInvalid bool   `json:"deletionCostInvalid,omitempty"`
	Rank                int    `json:"rank"`
	Restarts            int    `json:"restarts"`
	SidecarRestarts     int    `json:"sidecarRestarts,omitempty"`
	ReadyBucket         *int64 `json:"readyAgeBucket,omitempty"`
	CreatedBucket       *int64 `json:"creationAgeBucket,omitempty"`
	Ordinal             *int   `json:"ordinal,omitempty"`
	CompletionIndex     *int   `json:"completionIndex,omitempty"` // Indexed Jobs

	// Position is 1-based in predicted deletion order (0: not ordered).
	Position          int     `json:"position"`
	Fate              string  `json:"fate"`
	Certain           bool    `json:"certain"`
	DeleteProbability float64 `json:"deleteProbability"`
	// DeleteProbabilityRange: a timing-decided chance at the ends of the
	// races' plausible ranges (docs/deployments.md), where they differ.
	DeleteProbabilityRange []float64 `json:"deleteProbabilityRange,omitempty"`
	Round                  int       `json:"round,omitempty"`
	Step                   string    `json:"step,omitempty"`
	ReplicaSet             string    `json:"replicaSet,omitempty"`
	// DecidedBy explains the comparison with the next pod in order.
	DecidedBy *Decision `json:"decidedBy,omitempty"`
	// VsBoundary explains the comparison that decided this pod's fate: a
	// victim against the first survivor, a survivor against the last victim.
	VsBoundary     *Decision `json:"vsBoundary,omitempty"`
	ContenderGroup *int      `json:"contenderGroup,omitempty"`
	Reason         string    `json:"reason,omitempty"`
}

// Decision is one comparison and the rule that decided it.
type Decision struct {
	Rule    string `json:"rule"` // "R1".."R8", "TIE", "ORDINAL"
	Name    string `json:"name"` // e.g. "ready-time"
	How     string `json:"how,omitempty"`
	Against string `json:"against"`
	This    string `json:"this"`  // this pod's compared value
	Other   string `json:"other"` // the other pod's
	Text    string `json:"text"`
}

// ContenderGroup is a set of pods among which chance decides.
type ContenderGroup struct {
	ReplicaSet string   `json:"replicaSet,omitempty"`
	Pods       []string `json:"pods"`
	Delete     int      `json:"delete"`
	Rule       string   `json:"rule"`
	Reason     string   `json:"reason"`
	Exact      bool     `json:"exact"`
	Trials     int      `json:"trials,omitempty"`
}

// ReplicaSetStep is one ReplicaSet of a Deployment through the scale-in.
type ReplicaSetStep struct {
	Name       string `json:"name"`
	New        bool   `json:"new"`
	Before     int32  `json:"before"`
	AfterScale int32  `json:"afterScale"`
	Final      int32  `json:"final"`
	Deleted    int    `json:"deleted"`
	Created    int    `json:"created"`
}

// StatefulSetInfo is what a StatefulSet scale-in adds.
type StatefulSetInfo struct {
	PodManagementPolicy string   `json:"podManagementPolicy"`
	Start               int      `json:"start"`
	End                 int      `json:"end"`
	Stalled             bool     `json:"stalled"`
	StallPod            string   `json:"stallPod,omitempty"`
	StallReason         string   `json:"stallReason,omitempty"`
	DeletedBeforeStall  []string `json:"deletedBeforeStall"`
	ClaimPolicy         string   `json:"claimPolicyWhenScaled"`
	Claims              []Claim  `json:"claims"`
}

// Claim is a PersistentVolumeClaim of a condemned StatefulSet pod.
type Claim struct {
	Name    string `json:"name"`
	Pod     string `json:"pod"`
	Fate    string `json:"fate"` // "delete" | "retain"
	Exists  *bool  `json:"exists,omitempty"`
	Ordinal int    `json:"ordinal"`
}
