package cmd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const (
	nodeFilePath    = "../../examples/node/node.yaml"
	nodeSummaryPath = "../../examples/node/summary.json"
	nodeConfigzPath = "../../examples/node/configz.json"
	nodeNow         = "2026-01-01T00:00:30Z"
	nodeNoPods      = "apiVersion: v1\nkind: Node\nmetadata: {name: worker-1}\nstatus: {nodeInfo: {kubeletVersion: v1.37.1}}\n"
	// nodeSummaryNoPods is worker-1's summary with no pod stats.
	nodeSummaryNoPods = `{"node": {"nodeName": "worker-1", "memory": {"time": "2026-01-01T00:00:00Z", "availableBytes": 1073741824, "workingSetBytes": 1073741824}}, "pods": []}`
)

var (
	nodeFile    = "" // the node.yaml contents (read once by nodeFiles callers through mustRead)
	nodeConfigz = `{"kubeletconfig": {"evictionHard": {"memory.available": "100Mi"}}}`
)

// nodeArgs previews a node from the three saved files.
func nodeArgs(target string, extra ...string) func(*testing.T) []string {
	return func(*testing.T) []string {
		return append([]string{"-f", nodeFilePath, "-f", nodeSummaryPath, "-f", nodeConfigzPath, target, "--now", nodeNow}, extra...)
	}
}

func writeNamed(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// nodeFiles previews worker-1 from these three documents (node "" is the
// saved node.yaml).
func nodeFiles(t *testing.T, node, summary, configz string, extra ...string) func(*testing.T) []string {
	return func(t *testing.T) []string {
		if node == "" {
			node = mustRead(t, nodeFilePath)
		}
		return append([]string{"-f", writeNamed(t, "node.yaml", node), "-f", writeNamed(t, "summary.json", summary),
			"-f", writeNamed(t, "configz.json", configz), "node/worker-1", "--now", nodeNow}, extra...)
	}
}

func TestNodeGoldenLayouts(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"node", nodeArgs("node/worker-1")(t)},
		{"node_assume", nodeArgs("no/worker-1", "--assume", "memory.available=1Gi", "--assume", "nodefs.available=5%")(t)},
	} {
		for _, width := range []int{80, 120} {
			name := tc.name + "_" + map[int]string{80: "80", 120: "120"}[width]
			t.Run(name, func(t *testing.T) {
				defer func(w int) { cliWidth = w }(cliWidth)
				cliWidth = width
				r := cliRun(t, nil, nil, tc.args...)
				wantLayout(t, r, "layout_"+name, width)
			})
		}
	}
}

// -o json carries the eviction section and the victims in eviction order;
// -o name the same pods.
func TestNodeJSONAndName(t *testing.T) {
	r := cliRun(t, nil, nil, append(nodeArgs("nodes/worker-1")(t), "-o", "json")...)
	wantExit(t, r, ExitOK)
	var doc struct {
		Victims  []string `json:"victims"`
		Certain  bool     `json:"certain"`
		Target   struct{ Kind, Name string }
		Eviction *struct {
			Signal string `json:"signal"`
			Order  []struct {
				Pod  string `json:"pod"`
				Step int    `json:"step"`
			} `json:"order"`
			Never []struct{ Pod string } `json:"neverEvicted"`
		} `json:"eviction"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Target.Kind != "Node" || doc.Eviction == nil || doc.Eviction.Signal != "memory.available" {
		t.Fatalf("target %+v eviction %+v", doc.Target, doc.Eviction)
	}
	if got := strings.Join(doc.Victims, ","); got != "shop/cache-7d9f,jobs/batch-x1" {
		t.Errorf("victims %s", got)
	}
	if len(doc.Eviction.Never) != 1 || doc.Eviction.Never[0].Pod != "kube-system/kube-proxy-worker-1" {
		t.Errorf("never evicted: %+v", doc.Eviction.Never)
	}
	// The victims are in shop and jobs: pod/NAME cannot say which.
	n := cliRun(t, nil, nil, append(nodeArgs("node/worker-1")(t), "-o", "name")...)
	wantExit(t, n, ExitUsage)
	if n.stdout != "" || !strings.Contains(n.stderr, "namespace(s) jobs, shop, not in default") {
		t.Errorf("-o name: %q %q", n.stdout, n.stderr)
	}
	n = cliRun(t, nil, nil, append(nodeArgs("node/worker-1")(t), "-o", `jsonpath={range .victims[*]}{@}{"\n"}{end}`)...)
	wantExit(t, n, ExitOK)
	if n.stdout != "shop/cache-7d9f\njobs/batch-x1\n" {
		t.Errorf("jsonpath: %q", n.stdout)
	}
	// Scale-in documents stay without the section.
	s := cliRun(t, nil, nil, "-f", "../../examples/web.yaml", "deploy/web", "-n", "shop", "--replicas=3", "--now", liveNowFlag, "-o", "json")
	if strings.Contains(s.stdout, `"eviction"`) {
		t.Error("a scale-in document has an eviction section")
	}
}

// nodeAPI serves worker-1, its pods and (unless forbidden) the kubelet's
// summary and configz through the node proxy, as the API server does; the
// metrics API serves the node's memory usage.
func nodeAPI(t *testing.T, forbidden bool) *fakeAPIServer {
	t.Helper()
	f := newFakeAPIServer(t)
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := yaml.Unmarshal([]byte(mustRead(t, nodeFilePath)), &list); err != nil {
		t.Fatal(err)
	}
	node, pods := list.Items[0], list.Items[1:]
	f.fault = func(w http.ResponseWriter, r *http.Request, _ int) bool {
		switch r.URL.Path {
		case "/api/v1/nodes/worker-1":
			writeJSON(w, node)
		case "/api/v1/pods":
			if r.URL.Query().Get("fieldSelector") != "spec.nodeName=worker-1" {
				status(w, http.StatusBadRequest, "BadRequest", "want the node's field selector")
				return true
			}
			writeJSON(w, map[string]any{"apiVersion": "v1", "kind": "PodList", "metadata": map[string]any{}, "items": pods})
		case "/api/v1/nodes/worker-1/proxy/stats/summary", "/api/v1/nodes/worker-1/proxy/configz":
			if forbidden {
				status(w, http.StatusForbidden, "Forbidden", `nodes "worker-1" is forbidden: cannot get resource "nodes/proxy"`)
				return true
			}
			path := nodeSummaryPath
			if strings.HasSuffix(r.URL.Path, "configz") {
				path = nodeConfigzPath
			}
			_, _ = w.Write([]byte(mustRead(t, path)))
		case "/apis/metrics.k8s.io/v1beta1/nodes/worker-1":
			writeJSON(w, map[string]any{"usage": map[string]any{"memory": "4000Mi", "cpu": "1"}})
		default:
			return false
		}
		return true
	}
	return f
}

// Live, the same answer as from the saved files; with nodes/proxy
// forbidden, memory from the metrics API, default thresholds, and an
// answer marked as assumed (exit 8 with --fail-if-uncertain).
func TestNodeLive(t *testing.T) {
	offline := cliRun(t, nil, nil, append(nodeArgs("node/worker-1")(t), "-o", "json")...)
	live := nodeAPI(t, false).run(true, "node/worker-1", "--now", nodeNow, "-o", "json")
	wantExit(t, live, ExitOK)
	var a, b map[string]any
	if err := json.Unmarshal([]byte(offline.stdout), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(live.stdout), &b); err != nil {
		t.Fatalf("%v: %s", err, live.stdout)
	}
	// The node has no address: no direct read, the node proxy serves both.
	if got := fmt.Sprint(b["eviction"].(map[string]any)["kubeletReads"]); got != "[map[document:stats/summary path:node-proxy] map[document:configz path:node-proxy]]" {
		t.Errorf("live kubeletReads: %s", got)
	}
	delete(a["eviction"].(map[string]any), "kubeletReads")
	delete(b["eviction"].(map[string]any), "kubeletReads")
	if fmt.Sprint(a["eviction"]) != fmt.Sprint(b["eviction"]) || fmt.Sprint(a["victims"]) != fmt.Sprint(b["victims"]) {
		t.Errorf("live and offline differ:\n%v\n%v", a["eviction"], b["eviction"])
	}
	denied := nodeAPI(t, true).run(true, "node/worker-1", "--now", nodeNow, "--fail-if-uncertain")
	wantExit(t, denied, ExitUncertain, "incomplete")
	for _, want := range []string{"reports no address", "through the node proxy: forbidden", "metrics API", "defaults", "Kubelet:    stats/summary and configz: not read (assumed)"} {
		if !strings.Contains(denied.stdout, want) {
			t.Errorf("the forbidden answer does not say %q:\n%s", want, denied.stdout)
		}
	}
}
