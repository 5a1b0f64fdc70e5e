package desired

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Any manifest, live object and last-applied configuration: no panic, and
// a manifest compared with itself never changes the template.
func FuzzTemplateChanged(f *testing.F) {
	f.Add(`spec: {replicas: 2, template: {spec: {containers: [{name: a, image: x, env: [{name: A, value: "1"}]}]}}}`, live, `{"spec":{"replicas":3}}`)
	f.Add(`spec: {template: {metadata: {labels: {app: web}}}}`, `spec: {template: 3}`, `not json`)
	f.Add(`spec: {template: {spec: {containers: [{name: a, resources: {requests: {cpu: "0.5"}}}]}}}`, `spec: {template: {spec: {containers: []}}}`, ``)
	f.Fuzz(func(t *testing.T, manifest, liveObj, lastApplied string) {
		var m, l map[string]any
		if yaml.Unmarshal([]byte(manifest), &m) != nil || yaml.Unmarshal([]byte(liveObj), &l) != nil {
			return
		}
		last := ParseLastApplied(map[string]string{LastApplied: lastApplied})
		_, _ = TemplateChanged("Deployment", m, l, last)
		_, _ = DesiredReplicas(&unstructured.Unstructured{Object: m}, 1, last)
		_, _ = AutoscalerBounds(&unstructured.Unstructured{Object: m})
		if changed, err := TemplateChanged("Deployment", m, m, nil); err == nil && changed {
			t.Errorf("a manifest differs from itself: %s", manifest)
		}
	})
}
