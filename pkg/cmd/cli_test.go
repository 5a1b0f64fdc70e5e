package cmd

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

var offlineArgs = []string{"-f", "../../examples/web.yaml", "deploy/web", "--replicas=3", "-n", "shop", "--now", liveNowFlag}

// The worked example of examples/web.yaml (checked against the real controller), offline: victims p6, p3, p1.
func TestGoldenOffline(t *testing.T) {
	for _, tc := range []struct{ name, output string }{
		{"offline_table", ""}, {"offline_wide", "wide"}, {"offline_json", "json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{}, offlineArgs...)
			if tc.output != "" {
				args = append(args, "-o", tc.output)
			}
			r := cliRun(t, nil, nil, args...)
			wantExit(t, r, ExitOK)
			golden(t, tc.name, r.stdout)
		})
	}
	r := cliRun(t, nil, nil, append(offlineArgs, "-o", "json")...)
	p := decode(t, r.stdout)
	if strings.Join(p.Victims, ",") != "web-7d9f8c6b5-p6hj,web-7d9f8c6b5-p3mz,web-7d9f8c6b5-p1xq" {
		t.Errorf("victims %v, want p6, p3, p1 (examples/web.yaml (checked against the real controller))", p.Victims)
	}
	if p.Rules.KubernetesVersion != "1.37" || p.Rules.VersionSource != "default" {
		t.Errorf("offline rules %+v, want 1.37 from default", p.Rules)
	}
	if !p.Certain || p.CurrentReplicas != 6 || p.DesiredReplicas != 3 {
		t.Errorf("certain %v, %d -> %d", p.Certain, p.CurrentReplicas, p.DesiredReplicas)
	}
}

func decode(t *testing.T, s string) prediction.Prediction {
	t.Helper()
	var p prediction.Prediction
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("stdout is not a prediction document: %v\n%s", err, s)
	}
	if p.APIVersion != prediction.APIVersion || p.Kind != prediction.Kind {
		t.Errorf("apiVersion/kind %s/%s", p.APIVersion, p.Kind)
	}
	return p
}

var liveArgs = []string{"deploy/api", "--replicas=2", "-n", "prod", "--kube-version", "1.37", "--now", liveNowFlag}

// A live run against a fake clientset: no discovery call with --kube-version.
func TestGoldenLive(t *testing.T) {
	for _, tc := range []struct{ name, output string }{
		{"live_table", ""}, {"live_wide", "wide"}, {"live_json", "json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fake.NewClientset(liveObjects()...)
			args := append([]string{}, liveArgs...)
			if tc.output != "" {
				args = append(args, "-o", tc.output)
			}
			r := cliRun(t, c, nil, args...)
			wantExit(t, r, ExitOK)
			golden(t, tc.name, r.stdout)
			onlyReadActions(t, c)
			for _, a := range c.Actions() {
				if a.GetResource().Resource == "version" || a.GetNamespace() == "kube-system" {
					t.Errorf("version detection ran despite --kube-version: %v", a)
				}
			}
		})
	}
	c := fake.NewClientset(liveObjects()...)
	r := cliRun(t, c, nil, append(liveArgs, "-o", "json")...)
	p := decode(t, r.stdout)
	// Scale: old 3 -> 2 (bbbbb and aaaaa share node-1: rank 2; aaaaa is
	// the more recently ready), new 2 -> 1 (eeeee not ready). Rollout: old
	// 2 -> 1 (bbbbb, rank now 1, ready 30h vs ccccc 50h); new 1 -> 2.
	want := "scale:api-6f7d8-aaaaa scale:api-9c4b2-eeeee rollout:api-6f7d8-bbbbb"
	var got []string
	for _, x := range p.Pods {
		if x.Fate == prediction.FateDelete {
			got = append(got, x.Step+":"+x.Name)
		}
	}
	if strings.Join(got, " ") != want {
		t.Errorf("victims %v, want %s", got, want)
	}
	if p.Creates != 1 || p.Rules.VersionSource != "flag" || p.Rules.KubernetesVersion != "1.37" {
		t.Errorf("creates %d rules %+v", p.Creates, p.Rules)
	}
}

// Without --kube-version the rules come from the cluster: no
// kube-controller-manager pod is visible, so the API server's version.
func TestLiveVersionFromAPIServer(t *testing.T) {
	c := fake.NewClientset(liveObjects()...)
	c.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.29.3"}
	r := cliRun(t, c, nil, "deploy/api", "--replicas=2", "-n", "prod", "--now", liveNowFlag, "-o", "json")
	wantExit(t, r, ExitOK)
	p := decode(t, r.stdout)
	if p.Rules.KubernetesVersion != "1.29" || p.Rules.VersionSource != "apiserver" || !strings.Contains(p.Rules.VersionDetail, "v1.29.3") {
		t.Errorf("rules %+v, want 1.29 from apiserver (v1.29.3)", p.Rules)
	}
	if !p.Rules.FeatureGates["LogarithmicScaleDown"] || !p.Rules.FeatureGates["PodDeletionCost"] {
		t.Errorf("1.29 default gates %v", p.Rules.FeatureGates)
	}
	onlyReadActions(t, c)

	// The table names the source too.
	c = fake.NewClientset(liveObjects()...)
	c.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.29.3"}
	r = cliRun(t, c, nil, "deploy/api", "--replicas=2", "-n", "prod", "--now", liveNowFlag)
	if !strings.Contains(r.stdout, "Rules:      Kubernetes 1.29 (apiserver: API server v1.29.3;") {
		t.Errorf("table rules line:\n%s", r.stdout)
	}

	// A server outside the supported range is a usage error.
	c = fake.NewClientset(liveObjects()...)
	c.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.19.0"}
	r = cliRun(t, c, nil, "deploy/api", "--replicas=2", "-n", "prod")
	wantExit(t, r, ExitUsage, "1.19", "--kube-version")
}

func TestExitNotFound(t *testing.T) {
	c := fake.NewClientset(liveObjects()...)
	r := cliRun(t, c, nil, "deploy/nope", "--replicas=1", "-n", "prod", "--kube-version", "1.37")
	wantExit(t, r, ExitNotFound, "nope", "not found", "-n NAMESPACE")
	onlyReadActions(t, c)

	// A ReplicaSet and a StatefulSet that do not exist.
	for _, target := range []string{"rs/nope", "sts/nope", "rc/nope"} {
		r = cliRun(t, fake.NewClientset(), nil, target, "--replicas=1", "--kube-version", "1.37")
		wantExit(t, r, ExitNotFound, "nope")
	}

	// Offline: the target is not in the file, or is in another namespace.
	r = cliRun(t, nil, nil, "-f", "../../examples/web.yaml", "deploy/nope", "--replicas=1", "-n", "shop")
	wantExit(t, r, ExitNotFound, `"nope" not found in namespace "shop"`)
	r = cliRun(t, nil, nil, "-f", "../../examples/web.yaml", "deploy/web", "--replicas=1")
	wantExit(t, r, ExitNotFound, `not found in namespace "default"`, "-n NAMESPACE")
	r = cliRun(t, nil, nil, "-f", "../../examples/web.yaml", "rs/web", "--replicas=1", "-n", "shop")
	wantExit(t, r, ExitNotFound, "ReplicaSet")
}

func TestExitUnsupportedKind(t *testing.T) {
	for _, target := range []string{"daemonset/agent", "ds/agent", "daemonsets.apps/agent", "DaemonSet/agent", "cronjob/nightly"} {
		r := cliRun(t, nil, nil, target, "--replicas=1")
		wantExit(t, r, ExitUnsupported, "unsupported")
	}
	// Offline, a type the built-in kinds do not know is unknown.
	r := cliRun(t, nil, nil, "-f", "../../examples/web.yaml", "configmap/x", "--replicas=1")
	wantExit(t, r, ExitUnsupported, `unknown resource type "configmap"`)
	r = cliRun(t, nil, nil, "ds", "agent", "--replicas=1")
	wantExit(t, r, ExitUnsupported, "DaemonSets have no replica count")
	r = cliRun(t, nil, nil, "cronjob/backup", "--replicas=1")
	wantExit(t, r, ExitUnsupported, "CronJobs create Jobs")
}

func TestExitUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"deploy/web", "--replicas=-1"}, "must not be negative"},
		{[]string{"deploy/web", "--replicas=abc"}, `invalid argument "abc" for "--replicas"`},
		{[]string{"deploy/web", "--replicas=2147483648"}, "out of range"},
		{[]string{"deploy/web", "--replicas", "1.5"}, "invalid syntax"},
		{[]string{"deploy/web"}, "--replicas is required"},
		{[]string{"--replicas=1"}, "name one object"},
		{[]string{"deploy/", "--replicas=1"}, "missing the object name"},
		{[]string{"deploy/web/x", "--replicas=1"}, `"deploy/web/x" is not TYPE/NAME`},
		{[]string{"deploy/web", "deploy/api", "--replicas=1"}, "one object at a time"},
		{[]string{"deploy", "web,api", "--replicas=1"}, "one object at a time"},
		{[]string{"web", "--replicas=1"}, `"web" has no name`},
		{[]string{"deploy/web", "--replicas=1", "-o", "xml"}, `--output "xml" is not supported`},
		{[]string{"deploy/web", "--replicas=1", "--now", "yesterday"}, "--now"},
		{[]string{"deploy/web", "--replicas=1", "--kube-version", "1.20"}, "not supported"},
		{[]string{"deploy/web", "--replicas=1", "--kube-version", "two"}, "--kube-version"},
		{[]string{"deploy/web", "--replicas=1", "--feature-gates", "PodDeletionCost"}, "--feature-gates"},
		{[]string{"deploy/web", "--replicas=1", "--kube-version", "1.37", "--feature-gates", "LogarithmicScaleDown=false"}, "does not exist"},
		{[]string{"deploy/web", "--replicas=1", "--no-such-flag"}, "unknown flag"},
		{[]string{"deploy", "web", "extra", "--replicas=1"}, "one object at a time"},
		{[]string{"deploy/web", "--replicas=1", "-f", "-", "-f", "-"}, "only once"},
		{[]string{"--version", "-o", "name"}, "--version prints text"},
	} {
		r := cliRun(t, nil, nil, tc.args...)
		wantExit(t, r, ExitUsage, tc.want)
		if r.stdout != "" {
			t.Errorf("%v: stdout %q", tc.args, r.stdout)
		}
	}
}

func TestExitForbidden(t *testing.T) {
	c := fake.NewClientset(liveObjects()...)
	c.PrependReactor("get", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "api",
			errors.New(`User "dev" cannot get resource "deployments" in API group "apps" in the namespace "prod"`))
	})
	r := cliRun(t, c, nil, liveArgs...)
	wantExit(t, r, ExitForbidden, "forbidden", "get and list")
	if r.stdout != "" {
		t.Errorf("stdout %q", r.stdout)
	}

	// Forbidden on the pod list, after the Deployment was read.
	c = fake.NewClientset(liveObjects()...)
	c.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", errors.New("no"))
	})
	r = cliRun(t, c, nil, liveArgs...)
	wantExit(t, r, ExitForbidden, "pods")

	// Unauthorized is reported with the same code.
	c = fake.NewClientset(liveObjects()...)
	c.PrependReactor("get", "deployments", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewUnauthorized("token expired")
	})
	r = cliRun(t, c, nil, liveArgs...)
	wantExit(t, r, ExitForbidden, "unauthorized", "credentials")
}

// Nothing listens on 127.0.0.1:1: the Get fails at once with "connection
// refused"; --kube-version skips discovery.
func TestExitUnreachable(t *testing.T) {
	r := cliRun(t, nil, nil, "deploy/web", "--replicas=1", "--server", "https://127.0.0.1:1", "--request-timeout", "2s", "--kube-version", "1.37")
	wantExit(t, r, ExitUnreachable, "cannot reach the Kubernetes API server", "-f FILE")
	if r.elapsed > 10*time.Second {
		t.Errorf("took %v, want a quick failure", r.elapsed)
	}
}

func TestExitBadFile(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"testdata/malformed.yaml", "cannot use testdata/malformed.yaml"},
		{"testdata/empty.yaml", "it is empty"},
		{"testdata/does-not-exist.yaml", "no such file"},
		{"testdata/no-such-dir/", "no such file"},
		{"testdata", "cannot use testdata"},
	} {
		r := cliRun(t, nil, nil, "-f", tc.file, "deploy/web", "--replicas=1")
		wantExit(t, r, ExitBadFile, tc.want)
	}
	r := cliRun(t, nil, strings.NewReader("  \n"), "-f", "-", "deploy/web", "--replicas=1")
	wantExit(t, r, ExitBadFile, "standard input", "empty")
}

func TestScaleUpIsNotAnError(t *testing.T) {
	r := cliRun(t, nil, nil, "-f", "../../examples/web.yaml", "deploy/web", "--replicas=10", "-n", "shop", "--now", liveNowFlag)
	wantExit(t, r, ExitOK)
	if !strings.Contains(r.stdout, "Result:     scale-up (6 -> 10): no pod would be deleted") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "DELETE 100%") || strings.Contains(r.stdout, "---- cut") {
		t.Errorf("scale-up shows deletions:\n%s", r.stdout)
	}
	r = cliRun(t, nil, nil, "-f", "../../examples/web.yaml", "deploy/web", "--replicas=6", "-n", "shop", "--now", liveNowFlag, "-o", "json")
	wantExit(t, r, ExitOK)
	if p := decode(t, r.stdout); len(p.Victims) != 0 || !strings.Contains(p.Message, "no pod would be deleted") {
		t.Errorf("no change: victims %v message %q", p.Victims, p.Message)
	}
}

func TestStdin(t *testing.T) {
	data, err := os.ReadFile("../../examples/web.yaml")
	if err != nil {
		t.Fatal(err)
	}
	fromFile := cliRun(t, nil, nil, append(offlineArgs, "-o", "json")...)
	args := append([]string{}, offlineArgs...)
	args[1] = "-"
	fromStdin := cliRun(t, nil, strings.NewReader(string(data)), append(args, "-o", "json")...)
	wantExit(t, fromStdin, ExitOK)
	if fromStdin.stdout != fromFile.stdout {
		t.Errorf("-f - differs from -f FILE:\n%s\n---\n%s", fromStdin.stdout, fromFile.stdout)
	}
}

func TestFailIfUncertain(t *testing.T) {
	// A full tie straddles the cut: printed, then exit 8.
	r := cliRun(t, nil, nil, "-f", "testdata/tie.yaml", "rs/pair", "--replicas=1", "--now", liveNowFlag, "--fail-if-uncertain")
	wantExit(t, r, ExitUncertain, "--fail-if-uncertain")
	for _, want := range []string{"tie 50%", "Open choice [0]: 1 of pair-x, pair-y go (exact)", "---- cut: 1 deleted; chance decides"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	r = cliRun(t, nil, nil, "-f", "testdata/tie.yaml", "rs/pair", "--replicas=1", "--now", liveNowFlag, "--fail-if-uncertain", "-o", "json")
	wantExit(t, r, ExitUncertain)
	p := decode(t, r.stdout)
	if p.Certain || len(p.Contenders) != 1 || p.Contenders[0].Rule != "TIE" || !p.Contenders[0].Exact {
		t.Errorf("certain %v contenders %+v", p.Certain, p.Contenders)
	}
	for _, x := range p.Pods {
		if x.Certain || x.DeleteProbability != 0.5 {
			t.Errorf("%s: certain %v p %v", x.Name, x.Certain, x.DeleteProbability)
		}
	}

	// Without the flag the same tie exits 0.
	r = cliRun(t, nil, nil, "-f", "testdata/tie.yaml", "rs/pair", "--replicas=1", "--now", liveNowFlag)
	wantExit(t, r, ExitOK)
	// With the flag, a certain outcome exits 0; so does a tie that the cut
	// does not split (both go, or both stay).
	for _, args := range [][]string{
		append(append([]string{}, offlineArgs...), "--fail-if-uncertain"),
		{"-f", "testdata/tie.yaml", "rs/pair", "--replicas=0", "--now", liveNowFlag, "--fail-if-uncertain"},
		{"-f", "testdata/tie.yaml", "rs/pair", "--replicas=2", "--now", liveNowFlag, "--fail-if-uncertain"},
	} {
		r = cliRun(t, nil, nil, args...)
		wantExit(t, r, ExitOK)
	}
}

func TestVersion(t *testing.T) {
	r := cliRun(t, nil, nil, "--version")
	wantExit(t, r, ExitOK)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "scale-preview ") || lines[1] != "Kubernetes rules: 1.21 to 1.37" {
		t.Errorf("--version:\n%s", r.stdout)
	}

	r = cliRun(t, nil, nil, "--version", "-o", "json")
	wantExit(t, r, ExitOK)
	var v map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("--version -o json: %v\n%s", err, r.stdout)
	}
	for _, k := range []string{"version", "commit", "goVersion", "platform", "kubernetesRules"} {
		if _, ok := v[k]; !ok {
			t.Errorf("key %q missing: %s", k, r.stdout)
		}
	}
	if len(v) != 5 {
		t.Errorf("keys %v, want exactly version, commit, goVersion, platform, kubernetesRules", v)
	}
	rulesList, _ := v["kubernetesRules"].([]any)
	if len(rulesList) != 17 || rulesList[0] != "1.21" || rulesList[16] != "1.37" {
		t.Errorf("kubernetesRules %v", v["kubernetesRules"])
	}
	if s, _ := v["goVersion"].(string); !strings.HasPrefix(s, "go") {
		t.Errorf("goVersion %v", v["goVersion"])
	}

	// --version needs neither a target nor --replicas, nor a cluster.
	r = cliRun(t, nil, nil, "deploy/web", "--version")
	wantExit(t, r, ExitOK)
}

// Every request the live path makes is a get or a list, for every kind.
func TestLiveIsReadOnly(t *testing.T) {
	for _, args := range [][]string{
		{"deploy/api", "--replicas=2", "-n", "prod"},
		{"rs/api-6f7d8", "--replicas=1", "-n", "prod"},
		{"rs/api-9c4b2", "--replicas=0", "-n", "prod"},
		{"deploy/api", "--replicas=9", "-n", "prod"},
	} {
		c := fake.NewClientset(liveObjects()...)
		c.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.37.1"}
		r := cliRun(t, c, nil, append(args, "--now", liveNowFlag)...)
		wantExit(t, r, ExitOK)
		onlyReadActions(t, c)
	}
}
