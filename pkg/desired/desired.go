// Package desired compares a workload's desired manifest (what a GitOps
// change or `kubectl apply -f` would write) with its live object, the way
// `kubectl apply` merges them: which replica count and which pod template
// the workload ends up with. It is pure: no client calls.
package desired

import (
	"encoding/json"
	"fmt"
	"reflect"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// LastApplied is the annotation client-side `kubectl apply` (and Argo CD's
// default sync) writes: the manifest as last applied.
const LastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Manifest is one workload or autoscaler found in the desired files.
type Manifest struct {
	Ref    snapshot.Ref
	Object *unstructured.Unstructured
}

// Workloads picks the kinds a scale-in can come from, in file order:
// Deployments, ReplicaSets, StatefulSets, ReplicationControllers and
// HorizontalPodAutoscalers. The rest (Services, ConfigMaps, ...) is counted.
func Workloads(objs []*unstructured.Unstructured) (out []Manifest, others int) {
	for _, u := range objs {
		kind, ok := kindOf(u)
		if !ok {
			others++
			continue
		}
		out = append(out, Manifest{Ref: snapshot.Ref{Kind: kind, Namespace: u.GetNamespace(), Name: u.GetName()}, Object: u})
	}
	return out, others
}

func kindOf(u *unstructured.Unstructured) (string, bool) {
	gk := u.GroupVersionKind().GroupKind()
	switch {
	case gk.Group == "apps" && (gk.Kind == snapshot.Deployment || gk.Kind == snapshot.ReplicaSet || gk.Kind == snapshot.StatefulSet):
		return gk.Kind, true
	case gk.Group == "" && gk.Kind == snapshot.ReplicationController:
		return gk.Kind, true
	case gk.Group == "autoscaling" && gk.Kind == snapshot.HorizontalPodAutoscaler:
		return gk.Kind, true
	}
	return "", false
}

// Replicas is the replica count the workload has after the apply.
type Replicas struct {
	Value int32
	// Set: the manifest sets spec.replicas.
	Set bool
	// Dropped: the manifest omits spec.replicas that the last client-side
	// apply set. kubectl apply then removes the field and the API server
	// defaults it to 1; a server-side apply by another field manager may
	// keep it. Value is 1.
	Dropped bool
}

// DesiredReplicas reads spec.replicas of the manifest; without it the live
// count stays, unless the last applied configuration set it.
func DesiredReplicas(m *unstructured.Unstructured, live int32, lastApplied map[string]any) (Replicas, error) {
	v, found, err := unstructured.NestedFieldNoCopy(m.Object, "spec", "replicas")
	if err != nil {
		return Replicas{}, err
	}
	if found && v != nil {
		n, ok := toInt64(v)
		if !ok || n < 0 || n > 1<<31-1 {
			return Replicas{}, fmt.Errorf("spec.replicas %v is not a replica count", v)
		}
		return Replicas{Value: int32(n), Set: true}, nil
	}
	if lastApplied != nil {
		if _, was, _ := unstructured.NestedFieldNoCopy(lastApplied, "spec", "replicas"); was {
			return Replicas{Value: 1, Dropped: true}, nil
		}
	}
	return Replicas{Value: live}, nil
}

func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int:
		return int64(n), true
	case int32:
		return int64(n), true
	case float64:
		if n == float64(int64(n)) {
			return int64(n), true
		}
	}
	return 0, false
}

// ParseLastApplied decodes the last-applied-configuration annotation; nil
// when absent or unreadable.
func ParseLastApplied(annotations map[string]string) map[string]any {
	raw, ok := annotations[LastApplied]
	if !ok {
		return nil
	}
	var m map[string]any
	if json.Unmarshal([]byte(raw), &m) != nil {
		return nil
	}
	return m
}

// TemplateChanged says whether applying the manifest changes the pod
// template. The manifest is not defaulted (the live object is), so a field
// the manifest leaves out is no change; a field it sets to another value
// is, and so is one that the last applied configuration set and the
// manifest drops (kubectl apply removes it). Both sides are typed first, so
// equal values written differently ("0.5" and "500m" CPU) compare equal.
func TemplateChanged(kind string, manifest, live, lastApplied map[string]any) (bool, error) {
	want, err := normalTemplate(kind, manifest)
	if err != nil {
		return false, fmt.Errorf("spec.template: %v", err)
	}
	have, err := normalTemplate(kind, live)
	if err != nil {
		return false, err
	}
	if want == nil {
		return false, nil // the manifest leaves the template as it is
	}
	if !subset(want, have) {
		return true, nil
	}
	if lastApplied != nil {
		before, err := normalTemplate(kind, lastApplied)
		if err == nil && before != nil && !subset(before, want) {
			return true, nil
		}
	}
	return false, nil
}

// normalTemplate is spec.template after a round trip through the typed
// PodTemplateSpec; nil when the object has none.
func normalTemplate(kind string, obj map[string]any) (map[string]any, error) {
	path := []string{"spec", "template"}
	raw, found, err := unstructured.NestedFieldNoCopy(obj, path...)
	if err != nil || !found || raw == nil {
		return nil, err
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s spec.template is not an object", kind)
	}
	var t corev1.PodTemplateSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, &t); err != nil {
		return nil, err
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(&t)
}

// subset: every value a sets is in b. A zero value (empty, false, 0,
// null) also matches a field b leaves out. Lists of objects with a "name"
// (containers, env, ports, volumes) match by name, as kubectl apply's
// strategic merge does; other lists match element by element.
func subset(a, b any) bool {
	if isZero(a) && (b == nil || isZero(b)) {
		return true
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range x {
			if !subset(v, y[k]) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok {
			return false
		}
		if byName, ok := named(x); ok {
			other, ok2 := named(y)
			if !ok2 || len(byName) != len(x) {
				return false
			}
			for n, v := range byName {
				if !subset(v, other[n]) {
					return false
				}
			}
			return true
		}
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if !subset(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if xn, ok := toInt64(a); ok {
		yn, ok := toInt64(b)
		return ok && xn == yn
	}
	return reflect.DeepEqual(a, b)
}

func named(list []any) (map[string]any, bool) {
	out := make(map[string]any, len(list))
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		n, ok := m["name"].(string)
		if !ok {
			return nil, false
		}
		out[n] = m
	}
	return out, true
}

func isZero(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if !isZero(e) {
				return false
			}
		}
		return true
	case []any:
		return len(x) == 0
	case string:
		return x == ""
	case bool:
		return !x
	}
	n, ok := toInt64(v)
	return ok && n == 0
}

// Bounds are an autoscaler's replica bounds after the apply.
type Bounds struct {
	Min, Max int32
}

// AutoscalerBounds reads minReplicas (default 1) and maxReplicas of an
// autoscaling/v1 or v2 manifest; both versions carry them alike.
func AutoscalerBounds(m *unstructured.Unstructured) (Bounds, error) {
	b := Bounds{Min: 1}
	if v, found, _ := unstructured.NestedFieldNoCopy(m.Object, "spec", "minReplicas"); found && v != nil {
		n, ok := toInt64(v)
		if !ok || n < 0 || n > 1<<31-1 {
			return b, fmt.Errorf("spec.minReplicas %v is not a replica count", v)
		}
		b.Min = int32(n)
	}
	v, found, _ := unstructured.NestedFieldNoCopy(m.Object, "spec", "maxReplicas")
	n, ok := toInt64(v)
	if !found || !ok || n < 1 || n > 1<<31-1 {
		return b, fmt.Errorf("spec.maxReplicas %v is not a replica count", v)
	}
	b.Max = int32(n)
	return b, nil
}

// NewAutoscaler is the autoscaler a manifest creates, as autoscaling/v2
// (the API server converts v1's targetCPUUtilizationPercentage to a CPU
// Resource metric the same way).
func NewAutoscaler(m *unstructured.Unstructured) (*autoscalingv2.HorizontalPodAutoscaler, error) {
	h := &autoscalingv2.HorizontalPodAutoscaler{}
	if m.GroupVersionKind().Version == "v2" {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m.Object, h); err != nil {
			return nil, err
		}
		return h, nil
	}
	b, err := AutoscalerBounds(m)
	if err != nil {
		return nil, err
	}
	h.ObjectMeta.Name, h.ObjectMeta.Namespace = m.GetName(), m.GetNamespace()
	ref, _, _ := unstructured.NestedStringMap(m.Object, "spec", "scaleTargetRef")
	h.Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{Kind: ref["kind"], Name: ref["name"], APIVersion: ref["apiVersion"]}
	h.Spec.MinReplicas, h.Spec.MaxReplicas = &b.Min, b.Max
	cpu := int32(80) // the v1 default when the field is unset
	if v, found, _ := unstructured.NestedFieldNoCopy(m.Object, "spec", "targetCPUUtilizationPercentage"); found {
		if n, ok := toInt64(v); ok {
			cpu = int32(n)
		}
	}
	h.Spec.Metrics = []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &cpu}}}}
	return h, nil
}

// DeploymentAfter is the live Deployment as the apply leaves it, but for
// the replica count (the prediction takes the new one separately): the
// given template and the manifest's rollout settings (strategy, paused,
// minReadySeconds), defaulted as the API server does. Identity and status
// stay.
func DeploymentAfter(live *appsv1.Deployment, m *unstructured.Unstructured, template *corev1.PodTemplateSpec) (*appsv1.Deployment, error) {
	var want appsv1.Deployment
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m.Object, &want); err != nil {
		return nil, err
	}
	d := live.DeepCopy()
	if template != nil {
		d.Spec.Template = *template
	}
	if has(m, "spec", "strategy") {
		d.Spec.Strategy = want.Spec.Strategy
		// SetDefaults_Deployment: RollingUpdate with 25% and 25%.
		if d.Spec.Strategy.Type == "" {
			d.Spec.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
		}
		if d.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType {
			if d.Spec.Strategy.RollingUpdate == nil {
				d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{}
			}
			quarter := intstr.FromString("25%")
			if d.Spec.Strategy.RollingUpdate.MaxSurge == nil {
				d.Spec.Strategy.RollingUpdate.MaxSurge = &quarter
			}
			if d.Spec.Strategy.RollingUpdate.MaxUnavailable == nil {
				d.Spec.Strategy.RollingUpdate.MaxUnavailable = &quarter
			}
		}
	}
	if has(m, "spec", "paused") {
		d.Spec.Paused = want.Spec.Paused
	}
	if has(m, "spec", "minReadySeconds") {
		d.Spec.MinReadySeconds = want.Spec.MinReadySeconds
	}
	return d, nil
}

func has(m *unstructured.Unstructured, path ...string) bool {
	_, found, _ := unstructured.NestedFieldNoCopy(m.Object, path...)
	return found
}

// ManifestTemplate is the manifest's pod template, typed.
func ManifestTemplate(m *unstructured.Unstructured) (*corev1.PodTemplateSpec, error) {
	raw, found, err := unstructured.NestedMap(m.Object, "spec", "template")
	if err != nil || !found {
		return nil, err
	}
	t := &corev1.PodTemplateSpec{}
	return t, runtime.DefaultUnstructuredConverter.FromUnstructured(raw, t)
}
