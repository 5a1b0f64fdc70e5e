package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"
)

// Every form kubectl accepts for the type names the same object, live and
// offline.
func TestTypeForms(t *testing.T) {
	forms := [][]string{{"deploy/api"}, {"deployment/api"}, {"deployments/api"}, {"Deployment/api"},
		{"deployments.apps/api"}, {"deployments.v1.apps/api"}, {"deployment.apps/api"}, {"deploy", "api"}, {"deployments.v1.apps", "api"}}
	for _, f := range forms {
		r := cliRun(t, fake.NewClientset(liveObjects()...), nil, append(f, "--replicas=2", "-n", "prod", "--kube-version", "1.37", "--now", liveNowFlag, "-o", "name")...)
		wantExit(t, r, ExitOK)
		if r.stdout != "pod/api-6f7d8-aaaaa\npod/api-9c4b2-eeeee\npod/api-6f7d8-bbbbb\n" {
			t.Errorf("live %v: -o name printed %q", f, r.stdout)
		}
		off := strings.Replace(strings.Join(f, " "), "api", "web", 1)
		r = cliRun(t, nil, nil, append(strings.Fields(off), "-f", "../../examples/web.yaml", "--replicas=3", "-n", "shop", "--now", liveNowFlag, "-o", "name")...)
		wantExit(t, r, ExitOK)
		if !strings.HasPrefix(r.stdout, "pod/web-7d9f8c6b5-p6hj\n") {
			t.Errorf("offline %s: -o name printed %q", off, r.stdout)
		}
	}
}

// A type the built-in kinds do not know is asked of the cluster's
// discovery, and the refusal names the real kind.
func TestCustomResourceIsRefusedByItsKind(t *testing.T) {
	c := fake.NewClientset()
	c.Resources = append([]*metav1.APIResourceList{{GroupVersion: "argoproj.io/v1alpha1", APIResources: []metav1.APIResource{
		{Name: "rollouts", SingularName: "rollout", Kind: "Rollout", Namespaced: true, ShortNames: []string{"ro"}}}}}, builtinResources...)
	for _, target := range []string{"ro/web", "rollouts.argoproj.io/web", "rollouts.v1alpha1.argoproj.io/web"} {
		r := cliRun(t, c, nil, target, "--replicas=1", "--kube-version", "1.37")
		wantExit(t, r, ExitUnsupported, "Rollout.argoproj.io")
	}
	r := cliRun(t, c, nil, "nosuchthing/web", "--replicas=1", "--kube-version", "1.37")
	wantExit(t, r, ExitUnsupported, `unknown resource type "nosuchthing"`)
}

// kubectl's printers: jsonpath, go-template, yaml, and -o name for xargs.
func TestKubectlPrinters(t *testing.T) {
	for _, tc := range []struct{ output, want string }{
		{"name", "pod/web-7d9f8c6b5-p6hj\npod/web-7d9f8c6b5-p3mz\npod/web-7d9f8c6b5-p1xq\n"},
		{"jsonpath={.victims[*]}", "web-7d9f8c6b5-p6hj web-7d9f8c6b5-p3mz web-7d9f8c6b5-p1xq"},
		{"jsonpath={.schemaVersion} {.stableUntil}", "1 2025-01-01T13:26:36Z"},
		{`go-template={{range .pods}}{{.name}}={{.fate}} {{end}}`, "web-7d9f8c6b5-p6hj=delete web-7d9f8c6b5-p3mz=delete web-7d9f8c6b5-p1xq=delete web-7d9f8c6b5-p2kd=keep web-7d9f8c6b5-p4rt=keep web-7d9f8c6b5-p5wn=keep "},
	} {
		r := cliRun(t, nil, nil, append(offlineArgs, "-o", tc.output)...)
		wantExit(t, r, ExitOK)
		if r.stdout != tc.want {
			t.Errorf("-o %s printed %q, want %q", tc.output, r.stdout, tc.want)
		}
	}
	r := cliRun(t, nil, nil, append(offlineArgs, "-o", "yaml")...)
	var y map[string]any
	if err := yaml.Unmarshal([]byte(r.stdout), &y); err != nil || y["apiVersion"] != "scale-preview/v1" || y["kind"] != "ScalePreview" {
		t.Errorf("-o yaml: %v %v/%v", err, y["apiVersion"], y["kind"])
	}
	// A scale-up deletes nothing: -o name prints nothing, successfully.
	r = cliRun(t, nil, nil, "-f", "../../examples/web.yaml", "deploy/web", "--replicas=9", "-n", "shop", "-o", "name")
	wantExit(t, r, ExitOK)
	if r.stdout != "" {
		t.Errorf("scale-up -o name printed %q", r.stdout)
	}
}

// -f is repeatable and takes directories (-R for subdirectories); the
// objects of all files form one snapshot.
func TestFilesAndDirectories(t *testing.T) {
	dir := splitExample(t)
	want := "pod/web-7d9f8c6b5-p6hj\npod/web-7d9f8c6b5-p3mz\npod/web-7d9f8c6b5-p1xq\n"
	for _, files := range [][]string{
		{"-f", filepath.Join(dir, "workloads.yaml"), "-f", filepath.Join(dir, "pods", "pods.json")},
		{"-f", dir, "-R"},
		{"--filename=" + filepath.Join(dir, "workloads.yaml"), "--filename", filepath.Join(dir, "pods")},
	} {
		r := cliRun(t, nil, nil, append(files, "deploy/web", "--replicas=3", "-n", "shop", "--now", liveNowFlag, "-o", "name")...)
		wantExit(t, r, ExitOK)
		if r.stdout != want {
			t.Errorf("%v: printed %q", files, r.stdout)
		}
	}
	// Without -R the pods in the subdirectory are not read: the
	// Deployment is there, its pods are not.
	r := cliRun(t, nil, nil, "-f", dir, "deploy/web", "--replicas=3", "-n", "shop", "--now", liveNowFlag, "-o", "name")
	if r.stdout == want {
		t.Errorf("-f DIR without -R read the subdirectory")
	}
	// The same object twice is refused, not counted twice.
	r = cliRun(t, nil, nil, "-f", "../../examples/web.yaml", "-f", "../../examples/web.yaml", "deploy/web", "--replicas=3", "-n", "shop")
	wantExit(t, r, ExitBadFile, "give each object once")
}

// splitExample writes examples/web.yaml as workloads.yaml (Deployment and
// ReplicaSet, YAML) and pods/pods.json (a JSON List).
func splitExample(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("../../examples/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := yaml.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	var workloads []string
	var pods []map[string]any
	for _, it := range list.Items {
		if it["kind"] == "Pod" {
			pods = append(pods, it)
			continue
		}
		b, _ := yaml.Marshal(it)
		workloads = append(workloads, string(b))
	}
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("workloads.yaml", strings.Join(workloads, "---\n"))
	b, _ := yaml.YAMLToJSON(mustYAML(t, map[string]any{"apiVersion": "v1", "kind": "List", "items": pods}))
	write("pods/pods.json", string(b))
	write("README.txt", "not read: not .json, .yaml or .yml")
	return dir
}

func mustYAML(t *testing.T, v any) []byte {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Names complete from the -f files when they are given.
func TestCompletionFromFile(t *testing.T) {
	r := cliRun(t, nil, nil, "__complete", "-f", "../../examples/web.yaml", "")
	if !strings.Contains(r.stdout, "deployment/web\n") || !strings.Contains(r.stdout, "replicaset/web-7d9f8c6b5\n") {
		t.Errorf("TYPE/NAME completion from the file:\n%s", r.stdout)
	}
	r = cliRun(t, nil, nil, "__complete", "-f", "../../examples/web.yaml", "deploy", "w")
	if !strings.HasPrefix(r.stdout, "web\n:4\n") {
		t.Errorf("NAME completion after TYPE:\n%s", r.stdout)
	}
}

// --help explains the exit codes, and the scale-in's help its rule codes
// (cli_help_test.go checks every mode).
func TestHelp(t *testing.T) {
	r := cliRun(t, nil, nil, "--help")
	wantExit(t, r, ExitOK)
	for _, s := range []string{"Exit codes:", "  8 ", "--fail-if-uncertain", "--replicas int32", "-R, --recursive", "-o, --output"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("--help does not mention %q", s)
		}
	}
	r = cliRun(t, nil, nil, "scale-in", "--help")
	wantExit(t, r, ExitOK)
	for _, s := range []string{"R4 ", "pod-deletion-cost", "TIE", "ORDINAL"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("scale-in --help does not mention %q", s)
		}
	}
	r = cliRun(t, nil, nil, "--version", "-o", "yaml")
	wantExit(t, r, ExitOK)
	if !strings.Contains(r.stdout, "kubernetesRules:") {
		t.Errorf("--version -o yaml:\n%s", r.stdout)
	}
}

// The autoscaler's forms resolve to its kind (the workload model decides
// what to do with it); other kinds keep their own.
func TestResolveKinds(t *testing.T) {
	m := newOfflineMapper()
	for typ, want := range map[string]string{
		"hpa": kindHPA, "horizontalpodautoscalers.autoscaling": kindHPA, "horizontalpodautoscalers.v2.autoscaling": kindHPA,
		"HorizontalPodAutoscaler": kindHPA, "rs": "ReplicaSet", "replicasets.v1.apps": "ReplicaSet", "rc": "ReplicationController",
		"replicationcontrollers": "ReplicationController", "sts": "StatefulSet", "statefulset.apps": "StatefulSet",
	} {
		ref, err := resolve(m, objectArg{typ: typ, name: "web"})
		if err != nil || ref.Kind != want || ref.Name != "web" {
			t.Errorf("%s: %+v %v, want kind %s", typ, ref, err, want)
		}
	}
}
