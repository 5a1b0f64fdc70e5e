package prediction

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// SchemaVersion is the version of the JSON document's field set. It grows
// by one only when a field is removed or changes meaning; added fields do
// not change it.
const SchemaVersion = 1

// GroupVersion is the document's apiVersion as a group and a version, so
// kubectl's printers (json, yaml, jsonpath, go-template) can type it.
var GroupVersion = schema.GroupVersion{Group: "scale-preview", Version: "v1"}

// Scheme knows the one type the plugin prints.
var Scheme = newScheme()

func newScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	s.AddKnownTypeWithName(GroupVersion.WithKind(Kind), &Prediction{})
	s.AddKnownTypeWithName(GroupVersion.WithKind(ListKind), &List{})
	return s
}

// GetObjectKind makes Prediction a runtime.Object; its apiVersion and kind
// are plain fields (kept first in the JSON).
func (p *Prediction) GetObjectKind() schema.ObjectKind { return p }

// SetGroupVersionKind sets apiVersion and kind.
func (p *Prediction) SetGroupVersionKind(gvk schema.GroupVersionKind) {
	p.APIVersion, p.Kind = gvk.GroupVersion().String(), gvk.Kind
}

// GroupVersionKind reads apiVersion and kind.
func (p *Prediction) GroupVersionKind() schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(p.APIVersion, p.Kind)
}

// DeepCopyObject copies p through its JSON form. The document is exactly its
// JSON (every field is exported and serialized), so the copy is complete by
// construction, and it stays so when fields are added. deepcopy-gen cannot
// be used: it does not copy time.Time fields. kubectl's printers copy once
// per print, so the cost does not matter.
func (p *Prediction) DeepCopyObject() runtime.Object {
	if p == nil {
		return nil
	}
	out := &Prediction{}
	b, err := json.Marshal(p)
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		// Only a value JSON cannot hold (a NaN) gets here; the printer
		// meets the same error and reports it, so a shallow copy will do.
		c := *p
		return &c
	}
	return out
}
