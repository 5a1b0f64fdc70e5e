package perf

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
	"github.com/scale-preview/scale-preview/test/internal/kubectlbuild"
)

// TestBigClusterSideBySide measures, in one run, the plugin on issue 34's
// cluster (5,000 identical nodes, 150,000 pods; SCALE_PREVIEW_BIG_NODES
// changes the size) beside `kubectl get pods -A -o json` of the same pods
// from the same server and python3's json.load of the same file: wall
// time, CPU time and peak RSS from /usr/bin/time -v, the median of
// SCALE_PREVIEW_RUNS rounds (default 3), every case once per round so
// that a change in the machine's load hits all of them alike. The live
// cases read from listServer (an in-process server of pre-encoded pages,
// protobuf or JSON as asked). It runs only when SCALE_PREVIEW_BIG names a
// directory for the files; SCALE_PREVIEW_BIG_CASES (a regular expression)
// picks cases by name. The figures go to docs/performance.md.
func TestBigClusterSideBySide(t *testing.T) {
	dir := os.Getenv("SCALE_PREVIEW_BIG")
	if dir == "" {
		t.Skip("set SCALE_PREVIEW_BIG to a directory to measure")
	}
	runs := envInt("SCALE_PREVIEW_RUNS", 3)
	// Three zones, for the outage of one (issue 42); the other cases do not
	// read zones.
	spec := sourcetest.ClusterSpec{Nodes: envInt("SCALE_PREVIEW_BIG_NODES", sourcetest.ClusterSize.Nodes), Zones: 3}
	file := filepath.Join(dir, fmt.Sprintf("cluster-%d-zones-3.json", spec.Nodes))
	if err := writeOnce(file, spec); err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("../..")
	plugin, kubectl := buildClients(t, root, dir)
	srv, err := newListServer(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(fmt.Sprintf(kubeconfigFormat, srv.srv.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, what string }{
		{"pod/NAME, offline (-f)", plugin + " pod/" + sourcetest.PendingPod + " -n " + sourcetest.ClusterNamespace + " -f " + file},
		{"pod/NAME, live", plugin + " pod/" + sourcetest.PendingPod + " -n " + sourcetest.ClusterNamespace + " --kubeconfig " + kubeconfig},
		{"kubectl get pods -A -o json, live", kubectl + " get pods -A -o json --kubeconfig " + kubeconfig},
		{"python3 json.load of the file", "python3 -c import\x00json,sys;json.load(open(sys.argv[1])) " + file},
	}
	if help, _ := exec.Command(plugin, "drain", "--help").Output(); strings.Contains(string(help), "scale-preview drain") {
		cases = append(cases,
			struct{ name, what string }{"drain node-00000, offline (-f)", plugin + " drain node-00000 -f " + file},
			struct{ name, what string }{"drain node-00000, live", plugin + " drain node-00000 --kubeconfig " + kubeconfig})
	}
	if help, _ := exec.Command(plugin, "outage", "--help").Output(); strings.Contains(string(help), "scale-preview outage") {
		zone := spec.Zone(0)
		cases = append(cases,
			struct{ name, what string }{"outage --zone " + zone + ", offline (-f)", plugin + " outage --zone " + zone + " -f " + file},
			struct{ name, what string }{"outage --zone " + zone + ", live", plugin + " outage --zone " + zone + " --kubeconfig " + kubeconfig})
	}
	if help, _ := exec.Command(plugin, "rollout", "--help").Output(); strings.Contains(string(help), "scale-preview rollout") {
		// A 5,000-pod Deployment restarted (issue 41).
		deploy := " rollout deploy/app-00 -n " + sourcetest.ClusterNamespace
		cases = append(cases,
			struct{ name, what string }{"rollout deploy/app-00, offline (-f)", plugin + deploy + " -f " + file},
			struct{ name, what string }{"rollout deploy/app-00, live", plugin + deploy + " --kubeconfig " + kubeconfig})
	}
	if re := os.Getenv("SCALE_PREVIEW_BIG_CASES"); re != "" {
		keep := regexp.MustCompile(re)
		cases = slices.DeleteFunc(cases, func(c struct{ name, what string }) bool { return !keep.MatchString(c.name) })
	}
	st, _ := os.Stat(file)
	t.Logf("%d nodes, %d pods, %.0f MB of JSON; %d rounds; load before: %s", spec.Nodes, spec.Pods(), float64(st.Size())/1e6, runs, loadavg())
	figures := make([][3][]float64, len(cases))
	for round := range runs {
		for i, c := range cases {
			w, cpu, rss, err := timeTo(argv(c.what), filepath.Join(dir, fmt.Sprintf("out-%d.txt", i)))
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			t.Logf("round %d: %s: %.2f s wall, %.2f s CPU, %.0f MB", round+1, c.name, w, cpu, rss)
			figures[i][0], figures[i][1], figures[i][2] = append(figures[i][0], w), append(figures[i][1], cpu), append(figures[i][2], rss)
		}
	}
	t.Logf("load after: %s", loadavg())
	t.Logf("| case | wall s | CPU s | peak RSS MB |")
	for i, c := range cases {
		t.Logf("| %s | %.2f | %.2f | %.0f |", c.name, sourcetest.Median(figures[i][0]), sourcetest.Median(figures[i][1]), sourcetest.Median(figures[i][2]))
	}
}

const kubeconfigFormat = `apiVersion: v1
kind: Config
clusters:
- name: big
  cluster:
    server: %s
contexts:
- name: big
  context:
    cluster: big
    user: big
current-context: big
users:
- name: big
  user: {}
`

// argv splits on spaces; a NUL inside an argument stands for a space.
func argv(s string) []string {
	out := strings.Fields(s)
	for i := range out {
		out[i] = strings.ReplaceAll(out[i], "\x00", " ")
	}
	return out
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func writeOnce(name string, spec sourcetest.ClusterSpec) error {
	if _, err := os.Stat(name); err == nil {
		return nil
	}
	f, err := os.Create(name + ".tmp")
	if err != nil {
		return err
	}
	if err := sourcetest.WriteClusterJSON(f, spec); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(name+".tmp", name)
}

// buildClients builds the plugin, and kubectl of the pinned release unless
// KUBECTL or test/.bin/kubectl (the e2e harness's) names one.
func buildClients(t *testing.T, root, dir string) (plugin, kubectl string) {
	plugin = filepath.Join(dir, "kubectl-scale_preview")
	cmd := exec.Command("go", "build", "-o", plugin, "./cmd/kubectl-scale_preview")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the plugin: %v\n%s", err, b)
	}
	kubectl = os.Getenv("KUBECTL")
	if kubectl == "" {
		kubectl = filepath.Join(root, "test", ".bin", "kubectl")
		if _, err := os.Stat(kubectl); err != nil {
			kubectl = filepath.Join(dir, "kubectl")
			if err := kubectlbuild.Build(root, kubectl); err != nil {
				t.Fatal(err)
			}
		}
	}
	return plugin, kubectl
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// timeTo is sourcetest.TimeV with the command's output in the file out.
func timeTo(argv []string, out string) (wall, cpu, rssMB float64, err error) {
	f, err := os.Create(out)
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	return sourcetest.TimeV(argv, f)
}
