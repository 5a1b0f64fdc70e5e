package desired

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func obj(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// live is a defaulted Deployment as the API server returns it.
const live = `
spec:
  replicas: 4
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        imagePullPolicy: IfNotPresent
        terminationMessagePath: /dev/termination-log
        resources: {requests: {cpu: 500m, memory: 1Gi}}
        env: [{name: A, value: "1"}, {name: B, value: "2"}]
        ports: [{containerPort: 80, protocol: TCP}]
      restartPolicy: Always
      dnsPolicy: ClusterFirst
`

func TestTemplateChanged(t *testing.T) {
	cases := []struct {
		name, manifest, lastApplied string
		want                        bool
	}{
		{"no template", `spec: {replicas: 2}`, "", false},
		{"same, defaults left out", `
spec:
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.27", resources: {requests: {cpu: "0.5", memory: 1Gi}}, env: [{name: B, value: "2"}, {name: A, value: "1"}], ports: [{containerPort: 80}]}]}
`, "", false},
		{"new image", `
spec:
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.28"}]}
`, "", true},
		{"more CPU", `
spec:
  template:
    spec: {containers: [{name: web, resources: {requests: {cpu: "1"}}}]}
`, "", true},
		{"a second container", `
spec:
  template:
    spec: {containers: [{name: web}, {name: side, image: busybox}]}
`, "", true},
		{"env dropped that the last apply set", `
spec:
  template:
    spec: {containers: [{name: web, image: "nginx:1.27", env: [{name: A, value: "1"}]}]}
`, `{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27","env":[{"name":"A","value":"1"},{"name":"B","value":"2"}]}]}}}}`, true},
		{"env someone else added, kept", `
spec:
  template:
    spec: {containers: [{name: web, image: "nginx:1.27", env: [{name: A, value: "1"}]}]}
`, `{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27","env":[{"name":"A","value":"1"}]}]}}}}`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var last map[string]any
			if tc.lastApplied != "" {
				last = ParseLastApplied(map[string]string{LastApplied: tc.lastApplied})
				if last == nil {
					t.Fatal("last-applied not parsed")
				}
			}
			got, err := TemplateChanged("Deployment", obj(t, tc.manifest), obj(t, live), last)
			if err != nil || got != tc.want {
				t.Errorf("TemplateChanged = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestDesiredReplicas(t *testing.T) {
	u := func(s string) map[string]any { return obj(t, s) }
	for _, tc := range []struct {
		name, manifest, last string
		want                 Replicas
		err                  bool
	}{
		{"set", `spec: {replicas: 2}`, "", Replicas{Value: 2, Set: true}, false},
		{"zero", `spec: {replicas: 0}`, "", Replicas{Value: 0, Set: true}, false},
		{"absent: live stays", `spec: {}`, "", Replicas{Value: 4}, false},
		{"absent, set by the last apply: reset to 1", `spec: {}`, `{"spec":{"replicas":4}}`, Replicas{Value: 1, Dropped: true}, false},
		{"negative", `spec: {replicas: -1}`, "", Replicas{}, true},
		{"text", `spec: {replicas: many}`, "", Replicas{}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &unstructuredT{u(tc.manifest)}
			got, err := DesiredReplicas(m.u(), 4, ParseLastApplied(map[string]string{LastApplied: tc.last}))
			if (err != nil) != tc.err || (!tc.err && got != tc.want) {
				t.Errorf("got %+v, %v; want %+v (error %v)", got, err, tc.want, tc.err)
			}
		})
	}
}

type unstructuredT struct{ m map[string]any }

func (x *unstructuredT) u() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: x.m}
}

func yamlInto(s string, out *map[string]any) error { return yaml.Unmarshal([]byte(s), out) }
