package packaging

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scale-preview/scale-preview/test/internal/kubectlbuild"
)

// minKubectlMinor is the first kubectl that runs kubectl_complete-<plugin>
// for plugin completion (kubernetes#105867, 1.26).
const minKubectlMinor = 26

// findKubectl returns a kubectl that supports plugin completion:
// PACKAGING_KUBECTL, else the one on PATH, else one built earlier into
// test/.bin/packaging, else it builds k8s.io/kubernetes/cmd/kubectl from the
// test module (the Go module proxy; Debian's kubernetes-client is 1.20, too
// old for plugin completion). PACKAGING_KUBECTL=build forces the build.
func findKubectl(t *testing.T, root string) string {
	t.Helper()
	forceBuild := os.Getenv("PACKAGING_KUBECTL") == "build"
	if kc := os.Getenv("PACKAGING_KUBECTL"); kc != "" && !forceBuild {
		minor, err := kubectlMinor(kc)
		if err != nil {
			t.Fatalf("PACKAGING_KUBECTL=%s: %v", kc, err)
		}
		t.Logf("kubectl: %s (1.%d, from PACKAGING_KUBECTL)", kc, minor)
		return kc
	}
	if forceBuild {
		t.Logf("PACKAGING_KUBECTL=build: using a kubectl built from the module proxy")
	} else if kc, err := exec.LookPath("kubectl"); err == nil {
		minor, err := kubectlMinor(kc)
		if err == nil && minor >= minKubectlMinor {
			t.Logf("kubectl: %s (1.%d)", kc, minor)
			return kc
		}
		t.Logf("kubectl on PATH (%s) is not usable (1.%d, %v): using one built from the module proxy", kc, minor, err)
	} else {
		t.Logf("no kubectl on PATH: using one built from the module proxy")
	}
	cached := filepath.Join(root, "test", ".bin", "packaging", "kubectl")
	if minor, err := kubectlMinor(cached); err == nil && minor >= minKubectlMinor && !forceBuild {
		t.Logf("kubectl: %s (1.%d, built earlier)", cached, minor)
		return cached
	}
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := kubectlbuild.Build(root, cached); err != nil {
		t.Fatalf("no usable kubectl, and building k8s.io/kubernetes/cmd/kubectl failed: %v", err)
	}
	minor, err := kubectlMinor(cached)
	if err != nil {
		t.Fatalf("built kubectl: %v", err)
	}
	t.Logf("kubectl: built %s (1.%d) in %s", cached, minor, time.Since(start).Round(time.Second))
	return cached
}

func kubectlMinor(kc string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, kc, "version", "--client", "-o", "json").Output()
	if err != nil {
		return 0, err
	}
	var v struct {
		ClientVersion struct {
			Major, Minor, GitVersion string
		} `json:"clientVersion"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return 0, fmt.Errorf("kubectl version: %w", err)
	}
	m := regexp.MustCompile(`^\d+`).FindString(v.ClientVersion.Minor)
	if v.ClientVersion.Major != "1" || m == "" {
		return 0, fmt.Errorf("kubectl version %+v", v.ClientVersion)
	}
	return strconv.Atoi(m)
}

// kubectlEnv runs kubectl with the krew bin dir on PATH, then a directory
// holding only the kubectl under test (the completion script runs
// `kubectl scale-preview __complete`: it must find this kubectl, and no
// other), and a kubeconfig whose server refuses connections at once: the
// tests never reach a real cluster.
type kubectlEnv struct {
	kubectl string
	env     []string
}

func newKubectlEnv(t *testing.T, kubectl string, inst *installation) *kubectlEnv {
	t.Helper()
	home := t.TempDir()
	kubeconfig := filepath.Join(home, "kubeconfig")
	const cfg = `apiVersion: v1
kind: Config
clusters:
- name: nowhere
  cluster:
    server: https://127.0.0.1:1
contexts:
- name: nowhere
  context:
    cluster: nowhere
    user: nobody
    namespace: default
current-context: nowhere
users:
- name: nobody
  user: {}
`
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "HOME", "KUBECONFIG", "KREW_ROOT", "KUBECTL_KUBERC", "BASH_COMP_DEBUG_FILE":
			continue
		}
		env = append(env, kv)
	}
	abs, err := filepath.Abs(kubectl)
	if err != nil {
		t.Fatal(err)
	}
	kubectlDir := filepath.Join(home, "kubectl-bin")
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	if err := os.MkdirAll(kubectlDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, filepath.Join(kubectlDir, "kubectl"+exe)); err != nil {
		t.Fatal(err)
	}
	path := strings.Join([]string{inst.binDir, kubectlDir}, string(os.PathListSeparator))
	env = append(env, "PATH="+path, "HOME="+home, "KUBECONFIG="+kubeconfig, "KREW_ROOT="+inst.root)
	return &kubectlEnv{kubectl: abs, env: env}
}

type runResult struct {
	stdout, stderr string
	err            error
}

func (r runResult) String() string {
	return fmt.Sprintf("err: %v\nstdout:\n%s\nstderr:\n%s", r.err, tail(r.stdout, 40), tail(r.stderr, 20))
}

func (k *kubectlEnv) run(bin string, args ...string) runResult {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = k.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("timed out after 60s: %w", err)
	}
	return runResult{out.String(), errb.String(), err}
}

func (k *kubectlEnv) kubectlRun(args ...string) runResult { return k.run(k.kubectl, args...) }

// completion is a parsed answer of cobra's __complete protocol.
type completion struct {
	candidates []string // without the tab-separated descriptions
	directive  int
}

func parseCompletion(out string) (completion, error) {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], ":") {
		return completion{}, fmt.Errorf("no :<directive> line at the end of %q", out)
	}
	d, err := strconv.Atoi(strings.TrimPrefix(lines[len(lines)-1], ":"))
	if err != nil {
		return completion{}, fmt.Errorf("bad directive line %q", lines[len(lines)-1])
	}
	c := completion{directive: d}
	for _, l := range lines[:len(lines)-1] {
		cand, _, _ := strings.Cut(l, "\t")
		c.candidates = append(c.candidates, cand)
	}
	return c, nil
}

func (c completion) has(s string) bool { return contains(c.candidates, s) }

func (c completion) hasAny(ss ...string) bool {
	for _, s := range ss {
		if c.has(s) || c.has(s+"/") {
			return true
		}
	}
	return false
}

// cobra's ShellCompDirectiveNoFileComp.
const noFileComp = 4

// resourceTypes are the kinds scale-preview takes; completing the first
// argument must offer at least one spelling of each.
var resourceTypes = map[string][]string{
	"Deployment":            {"deploy", "deployment", "deployments", "deployment.apps", "deployments.apps"},
	"ReplicaSet":            {"rs", "replicaset", "replicasets", "replicaset.apps", "replicasets.apps"},
	"ReplicationController": {"rc", "replicationcontroller", "replicationcontrollers"},
	"StatefulSet":           {"sts", "statefulset", "statefulsets", "statefulset.apps", "statefulsets.apps"},
}

// runThroughKubectl runs the installed plugin as `kubectl scale-preview`.
// These are the command's packaging contract:
//
//   - `kubectl scale-preview --help` exits 0 and shows "kubectl scale-preview"
//     and "--replicas";
//   - `kubectl scale-preview --version` exits 0; its first line contains the
//     stamped version, and the output contains the short commit;
//   - `kubectl scale-preview --version -o json` prints one JSON object with
//     version, commit, goVersion, platform and kubernetesRules;
//   - completion (cobra's __complete protocol), through kubectl (which runs
//     the script kubectl_complete-scale_preview from PATH), through that
//     installed script directly (it runs kubectl scale-preview __complete)
//     and through the plugin's own __complete: resource types for the first
//     argument, json/yaml/wide for -o/--output, --replicas among the flags.
func runThroughKubectl(t *testing.T, kubectl string, inst *installation, dist *distInfo) {
	k := newKubectlEnv(t, kubectl, inst)
	minor, _ := kubectlMinor(kubectl)

	t.Run("plugin list", func(t *testing.T) {
		r := k.kubectlRun("plugin", "list")
		if r.err != nil || !strings.Contains(r.stdout, inst.plugin) {
			t.Errorf("kubectl plugin list does not find %s cleanly:\n%s", inst.plugin, r)
		}
	})

	t.Run("help", func(t *testing.T) {
		r := k.kubectlRun("scale-preview", "--help")
		if r.err != nil {
			t.Fatalf("kubectl scale-preview --help:\n%s", r)
		}
		for _, want := range []string{"kubectl scale-preview", "--replicas"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("kubectl scale-preview --help does not show %q:\n%s", want, r)
			}
		}
	})

	// goreleaser stamps "none" when it cannot read the commit; then the
	// commit is not checked.
	shortCommit := ""
	if regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(dist.commit) {
		shortCommit = dist.commit[:7]
	} else {
		t.Logf("the build has no commit (%q): not checking the stamped commit", dist.commit)
	}
	t.Run("version", func(t *testing.T) {
		r := k.kubectlRun("scale-preview", "--version")
		if r.err != nil {
			t.Fatalf("kubectl scale-preview --version:\n%s", r)
		}
		first, _, _ := strings.Cut(strings.TrimLeft(r.stdout, "\n"), "\n")
		if !strings.Contains(first, dist.version) {
			t.Errorf("kubectl scale-preview --version: first line %q lacks the version %q\n%s", first, dist.version, r)
		}
		if shortCommit != "" && !strings.Contains(r.stdout, shortCommit) {
			t.Errorf("kubectl scale-preview --version lacks the commit %q:\n%s", shortCommit, r)
		}
	})

	t.Run("version json", func(t *testing.T) {
		for _, args := range [][]string{{"--version", "-o", "json"}, {"--version", "--output=json"}} {
			r := k.kubectlRun(append([]string{"scale-preview"}, args...)...)
			if r.err != nil {
				t.Errorf("kubectl scale-preview %s:\n%s", strings.Join(args, " "), r)
				continue
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
				t.Errorf("kubectl scale-preview %s: not one JSON object: %v\n%s", strings.Join(args, " "), err, r)
				continue
			}
			if v["version"] != dist.version {
				t.Errorf("version %v, want %q", v["version"], dist.version)
			}
			if c, _ := v["commit"].(string); shortCommit != "" && (len(c) < 7 || !strings.HasPrefix(dist.commit, c)) {
				t.Errorf("commit %v, want a prefix of %s", v["commit"], dist.commit)
			}
			if g, _ := v["goVersion"].(string); !strings.HasPrefix(g, "go") {
				t.Errorf("goVersion %v", v["goVersion"])
			}
			if v["platform"] != runtime.GOOS+"/"+runtime.GOARCH {
				t.Errorf("platform %v, want %s/%s", v["platform"], runtime.GOOS, runtime.GOARCH)
			}
			if !nonEmpty(v["kubernetesRules"]) {
				t.Errorf("kubernetesRules %v: want the supported Kubernetes versions", v["kubernetesRules"])
			}
		}
	})

	// complete runs one completion request three ways: through kubectl
	// (kubectl __complete scale-preview ...), through the installed
	// completion script kubectl runs, and through the plugin's own
	// __complete.
	type way struct {
		name string
		run  func(args ...string) runResult
	}
	ways := []way{
		{"kubectl __complete scale-preview", func(a ...string) runResult {
			return k.kubectlRun(append([]string{"__complete", "scale-preview"}, a...)...)
		}},
		{completionBin, func(a ...string) runResult { return k.run(inst.complet, a...) }},
		{pluginBin + " __complete", func(a ...string) runResult {
			return k.run(inst.plugin, append([]string{"__complete"}, a...)...)
		}},
	}
	if minor < minKubectlMinor {
		t.Logf("kubectl 1.%d has no plugin completion: testing the helper only", minor)
		ways = ways[1:]
	}
	complete := func(t *testing.T, w way, args ...string) completion {
		t.Helper()
		r := w.run(args...)
		if r.err != nil {
			t.Fatalf("%s %q:\n%s", w.name, args, r)
		}
		c, err := parseCompletion(r.stdout)
		if err != nil {
			t.Fatalf("%s %q: %v\n%s", w.name, args, err, r)
		}
		return c
	}

	t.Run("completion/plugin name", func(t *testing.T) {
		if minor < minKubectlMinor {
			t.Skipf("kubectl 1.%d", minor)
		}
		r := k.kubectlRun("__complete", "scale-")
		c, err := parseCompletion(r.stdout)
		if r.err != nil || err != nil || !c.has("scale-preview") {
			t.Errorf("kubectl __complete scale- does not offer scale-preview (%v):\n%s", err, r)
		}
	})
	for _, w := range ways {
		t.Run("completion/"+w.name, func(t *testing.T) {
			t.Run("resource types", func(t *testing.T) {
				c := complete(t, w, "")
				for kind, spellings := range resourceTypes {
					if !c.hasAny(spellings...) {
						t.Errorf("completing the first argument offers no %s (any of %v); got %v", kind, spellings, c.candidates)
					}
				}
				if c.directive&noFileComp == 0 {
					t.Errorf("completing resource types: directive %d lacks NoFileComp (4)", c.directive)
				}
				c = complete(t, w, "st")
				if !c.hasAny(resourceTypes["StatefulSet"]...) {
					t.Errorf("completing %q offers no StatefulSet; got %v", "st", c.candidates)
				}
			})
			t.Run("output values", func(t *testing.T) {
				for _, args := range [][]string{{"deploy/web", "-o", ""}, {"deploy/web", "--output", ""}, {"-o", ""}} {
					c := complete(t, w, args...)
					for _, want := range []string{"json", "yaml", "wide"} {
						if !c.has(want) {
							t.Errorf("completing %q offers no %q; got %v", args, want, c.candidates)
						}
					}
					if c.directive&noFileComp == 0 {
						t.Errorf("completing %q: directive %d lacks NoFileComp (4)", args, c.directive)
					}
				}
			})
			t.Run("flags", func(t *testing.T) {
				c := complete(t, w, "deploy/web", "--rep")
				if !c.has("--replicas") && !c.has("--replicas=") {
					t.Errorf("completing --rep offers no --replicas; got %v", c.candidates)
				}
			})
			t.Run("names without a cluster", func(t *testing.T) {
				// The kubeconfig's server refuses connections: the answer
				// is quick and well-formed, whatever the candidates.
				complete(t, w, "deploy/")
			})
		})
	}
}

func nonEmpty(v any) bool {
	switch x := v.(type) {
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return false
}
