package deployment

import (
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// Strategy types, as in apps/v1 DeploymentStrategyType.
const (
	StrategyRollingUpdate = "RollingUpdate"
	StrategyRecreate      = "Recreate"
)

// Steps that produce a Change.
const (
	StepScale   = "scale"   // sync() -> scale(): scaling event, or any sync while paused
	StepRollout = "rollout" // rolloutRolling / rolloutRecreate
)

// Annotation keys written by SetReplicasAnnotations.
const (
	DesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	MaxReplicasAnnotation     = "deployment.kubernetes.io/max-replicas"
)

// Version is the kube-controller-manager minor version (1.x). What depends
// on it (the rounding of the proportional split and the parsing of the
// desired-/max-replicas annotations) is read from pkg/rules'
// DeploymentRules. Values outside the supported range behave like the
// nearest end. 0 means Latest.
type Version int

// Latest is the newest version modelled.
const Latest = Version(rules.Newest)

// switches are the deployment controller's version switches in v.
func (v Version) switches() rules.DeploymentRules {
	m := int(v)
	if v == 0 {
		m = int(Latest)
	}
	return rules.Defaults(m).Deployment
}

// ReplicaSet is the part of a Deployment-owned ReplicaSet the controller reads.
type ReplicaSet struct {
	Name string
	UID  string
	// Created is metadata.creationTimestamp. Compared at whole seconds, as
	// the API stores it; ties are broken by Name.
	Created time.Time

	Replicas  int32 // spec.replicas
	Available int32 // status.availableReplicas, supplied by the caller

	// StatusReplicas (status.replicas) and RunningPods (owned pods not in
	// phase Succeeded/Failed, terminating ones included) are read only by
	// Recreate, which waits until both are 0 for every old RS.
	StatusReplicas int32
	RunningPods    int32

	// Raw annotation values; "" when missing (the controller cannot tell
	// the two apart).
	DesiredAnnotation string
	MaxAnnotation     string

	// New marks an RS whose template equals the Deployment's. If several
	// are marked, the oldest is the new RS (FindNewReplicaSet) and the
	// others are treated as old.
	New bool
}

// Deployment is the part of a Deployment the controller reads.
type Deployment struct {
	Replicas       int32 // spec.replicas (the new value on a scale)
	StatusReplicas int32 // status.replicas; fallback denominator of the proportion

	// Strategy is StrategyRollingUpdate or StrategyRecreate; "" is read as
	// RollingUpdate (the API default).
	Strategy string

	// MaxSurge/MaxUnavailable as stored. The API server defaults both to
	// 25% for RollingUpdate, so callers should pass the stored values. nil
	// is treated as the code treats it: 0 in ResolveFenceposts, and an error
	// in NewRSNewReplicas (the rollout then stops with Change.Error).
	MaxSurge       *intstr.IntOrString
	MaxUnavailable *intstr.IntOrString

	// Paused: every sync runs scale() (never the rollout).
	Paused bool

	// When no RS is New, a rollout creates the new RS (RollingUpdate: at
	// once; Recreate: once old pods are gone). It gets this name ("" gives
	// "<new>") and this creation time (normally "now").
	NewReplicaSetName    string
	NewReplicaSetCreated time.Time
}

// Change is one ReplicaSet update the controller makes in a sync.
type Change struct {
	ReplicaSet string
	From, To   int32
	Step       string // StepScale or StepRollout
	Reason     string // the controller function and the arithmetic
	// Error is set when the controller attempts the update but it fails
	// (e.g. the API server rejects negative replicas) or the sync errors
	// before it. Such a change is not applied and the sync stops there.
	Error string
}

func (d Deployment) isRolling() bool {
	return d.Strategy == StrategyRollingUpdate || d.Strategy == ""
}
