package desired

import "testing"

// TemplateChanged runs once per workload of the manifests.
func BenchmarkTemplateChanged(b *testing.B) {
	m := map[string]any{}
	l := map[string]any{}
	if err := yamlInto(`
spec:
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.27", resources: {requests: {cpu: "0.5", memory: 1Gi}}, env: [{name: B, value: "2"}, {name: A, value: "1"}], ports: [{containerPort: 80}]}]}
`, &m); err != nil {
		b.Fatal(err)
	}
	if err := yamlInto(live, &l); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if changed, err := TemplateChanged("Deployment", m, l, nil); err != nil || changed {
			b.Fatal(changed, err)
		}
	}
}
