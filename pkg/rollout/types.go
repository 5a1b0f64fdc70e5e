package rollout

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

// Changes that start a rollout.
const (
	ChangeRestart = "restart" // kubectl rollout restart
	ChangeImage   = "image"   // kubectl set image
	ChangeResume  = "resume"  // kubectl rollout resume
	// ChangeDesired: the workload already carries the manifest's spec
	// (scale-preview --desired); the template is taken as it is.
	ChangeDesired = "desired"
)

// RestartedAtAnnotation is the template annotation kubectl rollout restart sets.
const RestartedAtAnnotation = "kubectl.kubernetes.io/restartedAt"

// Change is what the user is about to do.
type Change struct {
	Kind string
	// Images maps a container name, or "*" for every container, to its new
	// image (kubectl set image).
	Images map[string]string
}

// Input is everything the rollout reads.
type Input struct {
	Deployment  *appsv1.Deployment
	StatefulSet *appsv1.StatefulSet  // instead of Deployment
	ReplicaSets []*appsv1.ReplicaSet // at least the Deployment's namespace
	Pods        []*corev1.Pod        // every pod (the scheduler's view)
	Nodes       []*corev1.Node
	Namespaces  []*corev1.Namespace // nil when not read
	PDBs        []*policyv1.PodDisruptionBudget
	Quotas      []*corev1.ResourceQuota // the namespace's (others are ignored)
	Workloads   disruption.Workloads    // the pods' owners, for the budgets' expected counts
	Change      Change
	Rules       rules.RuleSet // the ReplicaSet controller's ranking
	Scheduler   rules.SchedulerRules
	Now         time.Time

	DaemonSet *appsv1.DaemonSet // instead of Deployment
	// Revisions are the ControllerRevisions read (a DaemonSet's history);
	// RevisionsRead says the input had the kind at all.
	Revisions     []*appsv1.ControllerRevision
	RevisionsRead bool
}

// Result is the rollout and the top-level answers.
type Result struct {
	Rollout prediction.Rollout
	// Victims are every old pod deleted, namespace/name, in deletion order.
	Victims  []string
	Certain  bool
	Warnings []string
	// Contenders: where chance picks k of n pods (a DaemonSet's nodes in
	// Go map order), per step.
	Contenders []prediction.ContenderGroup
}

// ChangeError: the change cannot be made as asked (kubectl refuses it).
type ChangeError struct{ Msg string }

func (e *ChangeError) Error() string { return e.Msg }

// InputError: the snapshot is wrong or incomplete for a rollout.
type InputError struct{ Msg string }

func (e *InputError) Error() string { return e.Msg }

func changeErr(format string, args ...any) error {
	return &ChangeError{Msg: fmt.Sprintf(format, args...)}
}

func inputErr(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}
