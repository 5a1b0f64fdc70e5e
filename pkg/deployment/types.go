package deployment

import (
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
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

// Version is the kube-controller-manager minor version (1.x). Only the
// behaviour switches found in the source between 1.21 and 1.37 depend on it:
//
//	< 31: integer.RoundToInt32 is int32(a±0.5) (k8s.io/utils before 2024-07);
//	      from 31 it is int32(math.Round(a)).
//	< 32: desired-/max-replicas are parsed with strconv.Atoi then int32() (a
//	      sign is accepted, values wrap), and a max-replicas of 0 (or a missing
//	      one with status.replicas 0) divides by zero; from 32 they are parsed
//	      with getNonNegativeInt32FromAnnotation and 0 falls back.
//
// Values below 21 or above 37 behave like the nearest end. 0 means Latest.
type Version int

// Latest is the newest version modelled.
const Latest Version = 37

func (v Version) minor() int {
	if v == 0 {
		return int(Latest)
	}
	return int(v)
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
