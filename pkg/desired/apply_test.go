package desired

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// kubectl apply's merge: a container matched by name keeps what the
// manifest leaves out; a field the last apply set and the manifest drops
// goes.
func TestApplied(t *testing.T) {
	live := &appsv1.Deployment{Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{
		{Name: "app", Image: "v1", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")}},
			Env: []corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}}},
		{Name: "sidecar", Image: "s1"}}}}}}
	manifest := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: d}, spec: {template: {spec: {containers: [{name: app, image: v2, env: [{name: A, value: "1"}]}]}}}}`), &manifest.Object); err != nil {
		t.Fatal(err)
	}
	last := map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
		map[string]any{"name": "app", "image": "v1", "env": []any{map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "B", "value": "2"}}}}}}}}
	for _, tc := range []struct {
		name  string
		last  map[string]any
		wantB bool
	}{{"no last applied", nil, true}, {"B dropped since the last apply", last, false}} {
		got := &appsv1.Deployment{}
		if err := Applied(manifest, live, tc.last, got); err != nil {
			t.Fatal(err)
		}
		cs := got.Spec.Template.Spec.Containers
		if len(cs) != 2 || cs[0].Image != "v2" || cs[0].Resources.Requests.Cpu().String() != "500m" || cs[1].Image != "s1" {
			t.Errorf("%s: %+v", tc.name, cs)
		}
		if hasB := len(cs[0].Env) == 2; hasB != tc.wantB {
			t.Errorf("%s: env %v", tc.name, cs[0].Env)
		}
	}
}
