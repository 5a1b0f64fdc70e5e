package prediction

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ListKind is the kind of the document `--desired -o json` prints: one
// prediction per workload that shrinks, and a line for every workload.
const ListKind = "ScalePreviewList"

// Changes of a workload under a desired manifest (WorkloadChange.Change).
const (
	ChangeScaleIn   = "scale-in"  // replicas shrink: a prediction in items
	ChangeScaleUp   = "scale-up"  // replicas grow: nothing deleted
	ChangeNone      = "unchanged" // the same replica count
	ChangeCreate    = "create"    // not in the cluster yet: nothing deleted
	ChangeNoTarget  = "no-target" // an autoscaler whose target does not exist
	ChangeAutoscale = "autoscaler-bounds"
)

// List is the summary over all workloads of the desired manifests.
type List struct {
	APIVersion    string `json:"apiVersion"`
	Kind          string `json:"kind"`
	SchemaVersion int    `json:"schemaVersion"`
	// Certain: every item is certain (true when nothing shrinks).
	Certain bool `json:"certain"`
	// Deleted counts the victims of all items.
	Deleted   int              `json:"deleted"`
	Workloads []WorkloadChange `json:"workloads"`
	// Items are the predictions of the workloads that shrink, in the
	// order of workloads.
	Items []Prediction `json:"items"`
}

// WorkloadChange is one workload or autoscaler of the manifests.
type WorkloadChange struct {
	Target Target `json:"target"`
	Change string `json:"change"`
	// CurrentReplicas and DesiredReplicas are absent for a workload that
	// does not exist yet.
	CurrentReplicas *int32 `json:"currentReplicas,omitempty"`
	DesiredReplicas *int32 `json:"desiredReplicas,omitempty"`
	// TemplateChanged: the pod template changes (a Deployment or
	// StatefulSet rolls out).
	TemplateChanged bool `json:"templateChanged"`
	Deleted         int  `json:"deleted"`
	Certain         bool `json:"certain"`
	// Item indexes items when the workload shrinks.
	Item    *int   `json:"item,omitempty"`
	Message string `json:"message"`
}

// Normalize puts the list and its items in their published form.
func (l *List) Normalize() {
	l.APIVersion, l.Kind, l.SchemaVersion = APIVersion, ListKind, SchemaVersion
	nonNil(&l.Workloads)
	nonNil(&l.Items)
	for i := range l.Items {
		l.Items[i].Normalize()
	}
}

// GetObjectKind makes List a runtime.Object for kubectl's printers.
func (l *List) GetObjectKind() schema.ObjectKind { return l }

// SetGroupVersionKind sets apiVersion and kind.
func (l *List) SetGroupVersionKind(gvk schema.GroupVersionKind) {
	l.APIVersion, l.Kind = gvk.GroupVersion().String(), gvk.Kind
}

// GroupVersionKind reads apiVersion and kind.
func (l *List) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(l.APIVersion, l.Kind)
}

// DeepCopyObject copies l through its JSON form, as Prediction does.
func (l *List) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &List{}
	b, err := json.Marshal(l)
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		c := *l
		return &c
	}
	return out
}
