// Package snapshot is the data a source reads (from a cluster or a file)
// and a workload model consumes: the objects of one namespace.
package snapshot

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
)

// Kinds the plugin models.
const (
	Deployment            = "Deployment"
	ReplicaSet            = "ReplicaSet"
	ReplicationController = "ReplicationController"
	StatefulSet           = "StatefulSet"
	// HorizontalPodAutoscaler: preview the autoscaler's next step for its target.
	HorizontalPodAutoscaler = "HorizontalPodAutoscaler"
	// Node: preview the kubelet's node-pressure eviction (kubelet.go).
	Node = "Node"
	Job  = "Job" // batch/v1: previewed by --parallelism
)

// Ref names the object to scale.
type Ref struct {
	Kind      string
	Namespace string
	Name      string
}

// Snapshot holds one namespace's relevant objects at one moment.
type Snapshot struct {
	Deployments            []*appsv1.Deployment
	ReplicaSets            []*appsv1.ReplicaSet
	ReplicationControllers []*corev1.ReplicationController
	StatefulSets           []*appsv1.StatefulSet
	Jobs                   []*batchv1.Job
	Pods                   []*corev1.Pod
	// Claims are read only for StatefulSets; ClaimsKnown is false when they
	// could not be read (for example forbidden).
	Claims      []*corev1.PersistentVolumeClaim
	ClaimsKnown bool
	Nodes       []*corev1.Node
	HPAs        []*autoscalingv2.HorizontalPodAutoscaler
	PDBs        []*policyv1.PodDisruptionBudget
	// Notes are one-line remarks from the source, e.g. what it could not read.
	Notes []string
	// Kubelet holds kubelet documents (stats summary, configz).
	Kubelet KubeletDocs
	// Unsettled says why the reads may not show one moment, e.g. the
	// workload kept changing while a live source read it. Each reason makes
	// the prediction uncertain.
	Unsettled []string
}

// AutoscalerTarget is the object an autoscaler scales, when it is of a kind
// the plugin models.
func AutoscalerTarget(h *autoscalingv2.HorizontalPodAutoscaler) (Ref, bool) {
	t := h.Spec.ScaleTargetRef
	group, _, _ := strings.Cut(t.APIVersion, "/")
	if !strings.Contains(t.APIVersion, "/") {
		group = ""
	}
	ref := Ref{Kind: t.Kind, Namespace: h.Namespace, Name: t.Name}
	switch {
	case group == "apps" && (t.Kind == Deployment || t.Kind == ReplicaSet || t.Kind == StatefulSet):
		return ref, true
	case group == "" && t.Kind == ReplicationController:
		return ref, true
	}
	return Ref{}, false
}
