package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/source"
)

// desiredAPI is prod/api of liveObjects as its manifest says it, with
// replicas and image to choose.
func desiredAPI(replicas, image string) string {
	r := ""
	if replicas != "" {
		r = "\n  replicas: " + replicas
	}
	return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  namespace: prod
spec:` + r + `
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: api
        image: ` + image + `
`
}

const desiredService = `apiVersion: v1
kind: Service
metadata: {name: api, namespace: prod}
spec:
  ports: [{port: 80}]
`

func desiredArgs(extra ...string) []string {
	return append([]string{"--desired", "--kube-version", "1.37", "--now", liveNowFlag}, extra...)
}

func decodeList(t *testing.T, s string) prediction.List {
	t.Helper()
	var l prediction.List
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	return l
}

// A manifest that only lowers replicas previews exactly what
// `deploy/api --replicas=2` previews, inside the list document; the
// Service beside it is ignored; only get and list are used.
func TestDesiredSameAsReplicas(t *testing.T) {
	file := writeFile(t, desiredAPI("2", "api:2")+"---\n"+desiredService)
	c := fake.NewClientset(liveObjects()...)
	r := cliRun(t, c, nil, desiredArgs("-f", file, "-n", "prod", "-o", "json")...)
	wantExit(t, r, ExitOK)
	onlyReadActions(t, c)
	l := decodeList(t, r.stdout)
	direct := cliRun(t, fake.NewClientset(liveObjects()...), nil, append(liveArgs, "-o", "json")...)
	wantExit(t, direct, ExitOK)
	want := decode(t, direct.stdout)
	if len(l.Items) != 1 || len(l.Workloads) != 1 {
		t.Fatalf("want one workload with one item:\n%s", r.stdout)
	}
	got := l.Items[0]
	if !slices.Equal(got.Victims, want.Victims) || got.Certain != want.Certain || got.DesiredReplicas != 2 {
		t.Errorf("victims %v certain %v, want %v %v", got.Victims, got.Certain, want.Victims, want.Certain)
	}
	w := l.Workloads[0]
	if w.Change != prediction.ChangeScaleIn || w.TemplateChanged || w.Deleted != len(want.Victims) || *w.Item != 0 || l.Deleted != len(want.Victims) {
		t.Errorf("workload line %+v", w)
	}
	// The table: the preview, then one line per workload.
	tr := cliRun(t, fake.NewClientset(liveObjects()...), nil, desiredArgs("-f", file, "-n", "prod")...)
	wantExit(t, tr, ExitOK)
	for _, s := range []string{"=== Deployment prod/api ===", "Target:", "Applying the manifests: 3 pod(s) deleted", "  Deployment prod/api: "} {
		if !strings.Contains(tr.stdout, s) {
			t.Errorf("the table lacks %q:\n%s", s, tr.stdout)
		}
	}
	// -o name: the victims.
	nr := cliRun(t, fake.NewClientset(liveObjects()...), nil, desiredArgs("-f", file, "-n", "prod", "-o", "name")...)
	if nr.stdout != "pod/"+strings.Join(want.Victims, "\npod/")+"\n" {
		t.Errorf("-o name:\n%s", nr.stdout)
	}
}

// A directory of manifests: a workload that shrinks, one that grows, one
// unchanged, one that does not exist yet and an autoscaler; each gets its
// line, only the first a preview. Without -n, the manifests' own
// namespace counts.
func TestDesiredDirectory(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a-api.yaml":  desiredAPI("2", "api:2"),
		"b-new.yaml":  strings.ReplaceAll(desiredAPI("1", "x"), "name: api\n", "name: fresh\n"),
		"c-svc.yml":   desiredService,
		"d-hpa.json":  `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"api","namespace":"prod"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"api"},"minReplicas":2,"maxReplicas":10}}`,
		"notes.txt":   "not read",
		"e-same.yaml": desiredAPI("", "api:2"),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// e-same.yaml names prod/api again: refused, as a duplicate.
	r := cliRun(t, fake.NewClientset(liveObjects()...), nil, desiredArgs("-f", dir, "-o", "json")...)
	wantExit(t, r, ExitBadFile, "given twice")
	os.Remove(filepath.Join(dir, "e-same.yaml"))

	r = cliRun(t, fake.NewClientset(liveObjects()...), nil, desiredArgs("-f", dir, "-o", "json")...)
	wantExit(t, r, ExitOK)
	l := decodeList(t, r.stdout)
	var changes []string
	for _, w := range l.Workloads {
		changes = append(changes, w.Target.Kind+"/"+w.Target.Name+"="+w.Change)
	}
	want := []string{"Deployment/api=scale-in", "Deployment/fresh=create", "HorizontalPodAutoscaler/api=autoscaler-bounds"}
	if !slices.Equal(changes, want) {
		t.Errorf("changes %v, want %v\n%s", changes, want, r.stdout)
	}
	if len(l.Items) != 1 || l.Items[0].Target.Name != "api" || l.Items[0].Target.Namespace != "prod" {
		t.Errorf("items: %+v", l.Items)
	}
	// Without -n the command runs in the context's namespace, and the
	// victims are prod's: pod/NAME would name pods of the wrong namespace.
	r = cliRun(t, fake.NewClientset(liveObjects()...), nil, desiredArgs("-f", dir, "-o", "name")...)
	wantExit(t, r, ExitUsage, "namespace(s) prod, not in default")
	if r.stdout != "" {
		t.Errorf("-o name printed %q", r.stdout)
	}
}

// Scale-ups, unchanged counts, a manifest without replicas and a manifest
// with no workload delete nothing: exit 0 and one plain line.
func TestDesiredNothingDeleted(t *testing.T) {
	cases := []struct{ name, manifest, line string }{
		{"scale-up", desiredAPI("7", "api:2"), "5 -> 7 replicas: a scale-up"},
		{"unchanged", desiredAPI("5", "api:2"), "5 replicas, unchanged"},
		{"no replicas field", desiredAPI("", "api:2"), "5 replicas, unchanged"},
		{"not yet created", strings.ReplaceAll(desiredAPI("1", "x"), "name: api\n", "name: fresh\n"), "does not exist yet"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := cliRun(t, fake.NewClientset(liveObjects()...), nil, desiredArgs("-f", writeFile(t, tc.manifest), "-n", "prod", "--fail-if-uncertain")...)
			wantExit(t, r, ExitOK)
			if !strings.Contains(r.stdout, tc.line) || !strings.HasPrefix(r.stdout, "Applying the manifests: no pod is deleted.\n") || strings.Count(r.stdout, "\n") != 2 {
				t.Errorf("want the summary and one line with %q:\n%s", tc.line, r.stdout)
			}
		})
	}
	r := cliRun(t, fake.NewClientset(liveObjects()...), nil, desiredArgs("-f", writeFile(t, desiredService), "-n", "prod")...)
	wantExit(t, r, ExitOK)
	if strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stdout, "no Deployment") {
		t.Errorf("want one line:\n%s", r.stdout)
	}
}

// A template change with a scale-in is a rollout whose first sync is the
// scaling event: its first step deletes what `deploy/api --replicas=2`
// deletes (proportional scaling over both live ReplicaSets, then each
// ReplicaSet's ranking), and a third ReplicaSet rolls out (here it fits
// no node: the fake cluster has none, so the rollout stalls).
func TestDesiredTemplateChange(t *testing.T) {
	file := writeFile(t, desiredAPI("2", "api:3"))
	r := cliRun(t, fake.NewClientset(liveObjects()...), nil, desiredArgs("-f", file, "-n", "prod", "-o", "json")...)
	wantExit(t, r, ExitOK)
	l := decodeList(t, r.stdout)
	if len(l.Items) != 1 || l.Items[0].Rollout == nil || !l.Workloads[0].TemplateChanged || l.Workloads[0].Change != prediction.ChangeScaleIn {
		t.Fatalf("want a rollout item with the template change:\n%s", r.stdout)
	}
	ro := l.Items[0].Rollout
	direct := decode(t, cliRun(t, fake.NewClientset(liveObjects()...), nil, append(liveArgs, "-o", "json")...).stdout)
	var first []string
	for _, d := range ro.Steps[0].Deleted {
		first = append(first, strings.TrimPrefix(d, "prod/"))
	}
	if !slices.Equal(first, direct.Victims) || ro.Outcome != prediction.RolloutStalls || !strings.Contains(ro.Reason, "fit no node") {
		t.Errorf("first step deletes %v, want the scale-in's %v; outcome %s: %s", first, direct.Victims, ro.Outcome, ro.Reason)
	}
	// The same template written with defaults is no change.
	same := strings.Replace(desiredAPI("2", "api:2"), "        image: api:2\n", "        image: api:2\n        imagePullPolicy: \"\"\n        resources: {}\n", 1)
	r = cliRun(t, fake.NewClientset(liveObjects()...), nil, desiredArgs("-f", writeFile(t, same), "-n", "prod", "-o", "json")...)
	if l := decodeList(t, r.stdout); l.Workloads[0].TemplateChanged || l.Items[0].Rollout != nil {
		t.Errorf("unchanged template seen as changed:\n%s", r.stdout)
	}
}

// Another namespace than -n is refused with kubectl's words.
func TestDesiredNamespaceMismatch(t *testing.T) {
	file := writeFile(t, desiredAPI("2", "api:2"))
	r := cliRun(t, fake.NewClientset(liveObjects()...), nil, desiredArgs("-f", file, "-n", "staging")...)
	wantExit(t, r, ExitUsage, `the namespace from the provided object "prod" does not match the namespace "staging". You must pass '--namespace=prod' to perform this operation.`)
	if r.stdout != "" {
		t.Errorf("printed:\n%s", r.stdout)
	}
}

const listSchemaPath = "../../docs/schema/scale-preview-list-v1.json"

// compileListSchema compiles the list schema with the item schema it
// refers to.
func compileListSchema(t *testing.T) *jsonschema.Schema {
	return compileSchemaFiles(t, schemaPath, listSchemaPath)
}

// The list document of real runs validates against its schema (which
// forbids unknown fields), and docs/output.md documents each of its fields.
func TestDesiredOutputMatchesSchema(t *testing.T) {
	sch := compileListSchema(t)
	for name, manifest := range map[string]string{
		"scale-in":        desiredAPI("2", "api:2") + "---\n" + desiredService,
		"template change": desiredAPI("2", "api:3"),
		"nothing":         desiredAPI("7", "api:2"),
		"no workload":     desiredService,
		"autoscaler":      `{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler","metadata":{"name":"api","namespace":"prod"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"api"},"minReplicas":1,"maxReplicas":3}}`,
	} {
		t.Run(name, func(t *testing.T) {
			r := cliRun(t, fake.NewClientset(liveObjects()...), nil, desiredArgs("-f", writeFile(t, manifest), "-n", "prod", "-o", "json")...)
			wantExit(t, r, ExitOK)
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(r.stdout))
			if err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(doc); err != nil {
				t.Errorf("the output does not match %s:\n%v\n%s", listSchemaPath, err, r.stdout)
			}
			if strings.Contains(r.stdout, ": null") && !strings.Contains(r.stdout, `"stableUntil": null`) {
				t.Errorf("a null in the output:\n%s", r.stdout)
			}
		})
	}
	data, err := os.ReadFile(listSchemaPath)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/output.md")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Properties map[string]any `json:"properties"`
		Defs       map[string]struct {
			Properties map[string]any `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	for _, d := range s.Defs {
		for k, v := range d.Properties {
			s.Properties[k] = v
		}
	}
	for k := range s.Properties {
		if !strings.Contains(string(doc), "| `"+k+"` |") {
			t.Errorf("docs/output.md does not document the field %q", k)
		}
	}
}

// An autoscaler whose maxReplicas drops below the count previews the
// autoscaler's step: the same victims as the workload scaled to the new
// maximum (autoscaling/v1 as well as v2).
func TestDesiredAutoscalerBounds(t *testing.T) {
	hpa := `{"apiVersion":"autoscaling/v1","kind":"HorizontalPodAutoscaler","metadata":{"name":"api","namespace":"prod"},"spec":{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"api"},"minReplicas":1,"maxReplicas":3}}`
	r := cliRun(t, fake.NewClientset(liveObjects()...), nil, desiredArgs("-f", writeFile(t, hpa), "-n", "prod", "-o", "json")...)
	wantExit(t, r, ExitOK)
	l := decodeList(t, r.stdout)
	direct := cliRun(t, fake.NewClientset(liveObjects()...), nil, "deploy/api", "--replicas=3", "-n", "prod", "--kube-version", "1.37", "--now", liveNowFlag, "-o", "json")
	want := decode(t, direct.stdout)
	if len(l.Items) != 1 || l.Workloads[0].Change != prediction.ChangeScaleIn || *l.Workloads[0].DesiredReplicas != 3 {
		t.Fatalf("want one scale-in to 3:\n%s", r.stdout)
	}
	if got := l.Items[0]; !slices.Equal(got.Victims, want.Victims) || got.Autoscaler == nil || got.Autoscaler.Previewed != 3 {
		t.Errorf("victims %v, want %v; autoscaler %+v", got.Victims, want.Victims, got.Autoscaler)
	}
}

// A StatefulSet whose template changes with the scale-in: with
// RollingUpdate the rollout model deletes the condemned ordinals first,
// highest first, then updates the kept pods from the highest ordinal (its
// item's rollout); a manifest that sets OnDelete previews the scale-in
// alone (a warning, certain).
func TestDesiredStatefulSetTemplate(t *testing.T) {
	snap, err := source.ReadFile(writeFile(t, stsFile("OrderedReady", 0, "Retain", "0", "1", "2")), nil, "default")
	if err != nil {
		t.Fatal(err)
	}
	manifest := `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web}
spec:
  replicas: 1
  updateStrategy: {type: STRATEGY}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: "app:2"}]}
`
	for _, strategy := range []string{"RollingUpdate", "OnDelete"} {
		var objs []k8sruntime.Object
		for _, st := range snap.StatefulSets {
			objs = append(objs, st)
		}
		for _, p := range snap.Pods {
			objs = append(objs, p)
		}
		r := cliRun(t, fake.NewClientset(objs...), nil, desiredArgs("-f", writeFile(t, strings.Replace(manifest, "STRATEGY", strategy, 1)), "-o", "json")...)
		wantExit(t, r, ExitOK)
		l := decodeList(t, r.stdout)
		if len(l.Items) != 1 || !l.Workloads[0].TemplateChanged || l.Workloads[0].Change != prediction.ChangeScaleIn {
			t.Fatalf("want one scale-in item with the template change:\n%s", r.stdout)
		}
		p := l.Items[0]
		if strategy == "OnDelete" {
			if !slices.Equal(p.Victims, []string{"web-2", "web-1"}) || p.Rollout != nil || !p.Certain ||
				!slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "OnDelete") }) {
				t.Errorf("OnDelete: victims %v, rollout %v, certain %v, warnings %v", p.Victims, p.Rollout != nil, p.Certain, p.Warnings)
			}
			continue
		}
		if p.Rollout == nil || !slices.Equal(p.Victims, []string{"default/web-2", "default/web-1", "default/web-0"}) ||
			!slices.Equal(p.Rollout.Steps[0].Deleted, p.Victims) {
			t.Errorf("RollingUpdate: want the condemned web-2, web-1 then web-0 in step 1: %v %+v", p.Victims, p.Rollout)
		}
	}
}

// A template change under Recreate deletes every pod (all shown, certain
// where the model says so); paused, it starts no rollout.
func TestDesiredTemplateRecreateAndPaused(t *testing.T) {
	// prod/api settled on its old ReplicaSet: 3 pods of api:1.
	var settled []k8sruntime.Object
	for _, o := range liveObjects() {
		switch x := o.(type) {
		case *appsv1.Deployment:
			three := int32(3)
			x.Spec.Template, x.Spec.Replicas = liveTemplate("api:1", ""), &three
			x.Status = appsv1.DeploymentStatus{Replicas: 3, ReadyReplicas: 3, AvailableReplicas: 3}
		case *appsv1.ReplicaSet:
			if x.Name == "api-9c4b2" {
				continue
			}
			x.Annotations["deployment.kubernetes.io/desired-replicas"] = "3"
		case *corev1.Pod:
			if strings.HasPrefix(x.Name, "api-9c4b2") {
				continue
			}
		}
		settled = append(settled, o)
	}
	recreate := strings.Replace(desiredAPI("2", "api:3"), "  selector:", "  strategy: {type: Recreate}\n  selector:", 1)
	r := cliRun(t, fake.NewClientset(settled...), nil, desiredArgs("-f", writeFile(t, recreate), "-n", "prod", "-o", "json")...)
	wantExit(t, r, ExitOK)
	p := decodeList(t, r.stdout).Items[0]
	if len(p.Victims) != 3 || !p.Certain || p.Rollout == nil || p.Rollout.Strategy != "Recreate" || len(p.Rollout.Steps[0].Deleted) != 3 {
		t.Errorf("Recreate: want all 3 pods certainly deleted in the first step: %v %v %+v", p.Victims, p.Certain, p.Rollout)
	}
	paused := strings.Replace(desiredAPI("2", "api:3"), "  selector:", "  paused: true\n  selector:", 1)
	r = cliRun(t, fake.NewClientset(liveObjects()...), nil, desiredArgs("-f", writeFile(t, paused), "-n", "prod", "-o", "json")...)
	wantExit(t, r, ExitOK)
	p = decodeList(t, r.stdout).Items[0]
	if !slices.ContainsFunc(p.Warnings, func(w string) bool { return strings.Contains(w, "paused") }) || slices.ContainsFunc(p.Conflicts, func(c prediction.Conflict) bool { return strings.Contains(c.Message, "new rollout") }) {
		t.Errorf("paused: want the paused warning and no rollout: %v %+v", p.Warnings, p.Conflicts)
	}
}
