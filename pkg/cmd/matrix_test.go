package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// snapshotVariant writes examples/web.yaml (deploy/web in shop: one
// ReplicaSet, six pods, statuses saying six) after edit, and returns the path.
func snapshotVariant(t *testing.T, edit func(items []map[string]any) []map[string]any) string {
	t.Helper()
	return fileVariant(t, "../../examples/web.yaml", edit)
}

// fileVariant writes the List in file with its items edited to a temporary
// file and returns its path.
func fileVariant(t *testing.T, file string, edit func(items []map[string]any) []map[string]any) string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Items      []map[string]any `json:"items"`
	}
	if err := yaml.Unmarshal(data, &list); err != nil {
		t.Fatal(err)
	}
	list.Items = edit(list.Items)
	out, err := yaml.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), filepath.Base(file))
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func dropKind(kind string) func([]map[string]any) []map[string]any {
	return func(items []map[string]any) []map[string]any {
		var out []map[string]any
		for _, it := range items {
			if it["kind"] != kind {
				out = append(out, it)
			}
		}
		return out
	}
}

func keepPods(n int) func([]map[string]any) []map[string]any {
	return func(items []map[string]any) []map[string]any {
		var out []map[string]any
		for _, it := range items {
			if it["kind"] == "Pod" {
				if n == 0 {
					continue
				}
				n--
			}
			out = append(out, it)
		}
		return out
	}
}

func duplicatePod(items []map[string]any) []map[string]any {
	for _, it := range items {
		if it["kind"] == "Pod" {
			return append(items, it)
		}
	}
	return items
}

func podsIn(ns string) func([]map[string]any) []map[string]any {
	return func(items []map[string]any) []map[string]any {
		for _, it := range items {
			if it["kind"] == "Pod" {
				it["metadata"].(map[string]any)["namespace"] = ns
			}
		}
		return items
	}
}

func rsGenerationAhead(items []map[string]any) []map[string]any {
	for _, it := range items {
		if it["kind"] == "ReplicaSet" {
			it["metadata"].(map[string]any)["generation"] = 4
			it["status"].(map[string]any)["observedGeneration"] = 3
		}
	}
	return items
}

func noStrategyNoRS(items []map[string]any) []map[string]any {
	var out []map[string]any
	for _, it := range items {
		switch it["kind"] {
		case "Deployment":
			delete(it["spec"].(map[string]any), "strategy")
			delete(it, "status")
			out = append(out, it)
		case "Pod":
		default:
		}
	}
	return out
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.yaml")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBadInputMatrix: every bad input gets its documented exit code and a
// single "error: " line that names the problem, never a stack trace and
// never a prediction printed as if complete. Cases marked other=true are
// decided by other parts of the command (flag parsing, gates, steering);
// their message check is loose: it only requires the bad value.
func TestBadInputMatrix(t *testing.T) {
	const jobFile = "../../examples/job.json"
	web := []string{"deploy/web", "-n", "shop", "--now", liveNowFlag}
	off := func(file string, extra ...string) []string {
		return append(append([]string{"-f", file}, web...), extra...)
	}
	example := "../../examples/web.yaml"
	type tc struct {
		name  string
		args  func(t *testing.T) []string
		stdin string
		live  bool // against the fake API server (trusted certificate)
		code  int
		words []string
		other bool
		// process: run as a separate process with a time and memory bound.
		process bool
	}
	static := func(args ...string) func(*testing.T) []string { return func(*testing.T) []string { return args } }
	variant := func(edit func([]map[string]any) []map[string]any, extra ...string) func(*testing.T) []string {
		return func(t *testing.T) []string { return off(snapshotVariant(t, edit), extra...) }
	}
	desiredFile := func(s string, extra ...string) func(*testing.T) []string {
		return func(t *testing.T) []string {
			return append([]string{"--desired", "-f", writeFile(t, s), "--kube-version", "1.37", "--now", liveNowFlag}, extra...)
		}
	}
	content := func(s string, extra ...string) func(*testing.T) []string {
		return func(t *testing.T) []string { return off(writeFile(t, s), extra...) }
	}
	cases := []tc{
		// Incomplete or inconsistent snapshots.
		{name: "snapshot without pods", args: variant(dropKind("Pod"), "--replicas=3", "--fail-if-uncertain"), code: ExitBadFile, words: []string{"none of its pods", "kubectl get deploy,rs,pods -n shop -o yaml"}},
		{name: "snapshot without ReplicaSets", args: variant(dropKind("ReplicaSet"), "--replicas=3"), code: ExitBadFile, words: []string{"none of its ReplicaSets", "kubectl get"}},
		{name: "snapshot with some pods cut off", args: variant(keepPods(4), "--replicas=3", "--fail-if-uncertain"), code: ExitUncertain, words: []string{"incomplete", "counts 6 pods"}},
		{name: "pods exported from another namespace", args: variant(podsIn("default"), "--replicas=3"), code: ExitBadFile, words: []string{"none of its pods"}},
		{name: "pod listed twice", args: variant(duplicatePod, "--replicas=3"), code: ExitBadFile, words: []string{"web-7d9f8c6b5-p1xq", "give each object once"}},
		{name: "pod listed twice at a scale-up", args: variant(duplicatePod, "--replicas=30"), code: ExitBadFile, words: []string{"give each object once"}},
		{name: "spec change not yet observed", args: variant(rsGenerationAhead, "--replicas=3", "--fail-if-uncertain"), code: ExitUncertain, words: []string{"not yet observed"}},
		{name: "ReplicaSet target without pods", args: func(t *testing.T) []string {
			return []string{"-f", snapshotVariant(t, dropKind("Pod")), "rs/web-7d9f8c6b5", "-n", "shop", "--replicas=1"}
		}, code: ExitBadFile, words: []string{"ReplicaSet web-7d9f8c6b5", "kubectl get rs,pods"}},
		// Unusable files.
		{name: "empty file", args: content("", "--replicas=3"), code: ExitBadFile, words: []string{"empty"}},
		{name: "blank file", args: content("\n  \n", "--replicas=3"), code: ExitBadFile, words: []string{"empty"}},
		{name: "malformed YAML", args: content("items: [\n  - {", "--replicas=3"), code: ExitBadFile},
		{name: "binary garbage", args: content("\x00\x01\x02\xff\xfe", "--replicas=3"), code: ExitBadFile},
		{name: "object without kind", args: content("apiVersion: v1\nmetadata: {name: x}\n", "--replicas=3"), code: ExitBadFile},
		{name: "only other kinds", args: content("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "--replicas=3"), code: ExitBadFile, words: []string{"holds no"}},
		{name: "YAML alias bomb", args: static(off("testdata/aliasbomb.yaml", "--replicas=3")...), code: ExitBadFile, words: []string{"aliasing"}},
		{name: "missing file", args: static(append([]string{"-f", "/nonexistent/snap.yaml"}, append(web, "--replicas=3")...)...), code: ExitBadFile, words: []string{"/nonexistent/snap.yaml"}},
		{name: "empty stdin", args: static(append([]string{"-f", "-"}, append(web, "--replicas=3")...)...), code: ExitBadFile, words: []string{"standard input"}},
		{name: "pod without a name", args: content("apiVersion: v1\nkind: Pod\nmetadata: {namespace: shop}\n---\n"+mustRead(t, example), "--replicas=3"), code: ExitBadFile, words: []string{"no metadata.name"}},
		{name: "wrong field type", args: content("apiVersion: v1\nkind: Pod\nmetadata: {name: x, namespace: shop}\nspec: {containers: 3}\n", "--replicas=3"), code: ExitBadFile},
		// Targets.
		{name: "target not in the file", args: static("-f", example, "deploy/nope", "-n", "shop", "--replicas=1"), code: ExitNotFound, words: []string{"nope", "not found"}},
		{name: "target in another namespace", args: static("-f", example, "deploy/web", "-n", "other", "--replicas=1"), code: ExitNotFound, words: []string{"not found"}},
		{name: "DaemonSet", args: static("-f", example, "ds/x", "--replicas=1"), code: ExitUnsupported},
		// Pods: the scheduler's preemption (pod.go).
		{name: "Pod with --replicas", args: static("-f", preemptFile, "pod/critical", "-n", "shop", "--replicas=1"), code: ExitUsage, words: []string{"--replicas does not apply"}},
		{name: "Pod already running", args: static("-f", preemptFile, "pod/web-7d9f8c6b5-p6hj", "-n", "shop"), code: ExitUsage, words: []string{"already runs on node node-a"}},
		{name: "Pod of unknown priority class", args: preemptVariant(func(s string) string {
			return strings.Replace(s, "priorityClassName: high", "priorityClassName: urgent", 1)
		}), code: ExitBadFile, words: []string{"unknown priority class", "urgent"}},
		{name: "Pod manifest that is not a pod", args: static("-f", example, "pod/web", "-n", "shop"), code: ExitNotFound, words: []string{"pod shop/web is not in the files"}},
		{name: "Pod without the node list", args: preemptVariant(dropNodes), code: ExitBadFile, words: []string{"no Node"}},
		{name: "Pod with an unknown scheduler gate", args: static("-f", preemptFile, "pod/critical", "-n", "shop", "--feature-gates", "PodDeletionCost=false"), code: ExitUsage, words: []string{"PodDeletionCost"}},
		{name: "Pod with a bad --scheduler-config", args: static("-f", preemptFile, "pod/critical", "-n", "shop", "--scheduler-config", preemptFile), code: ExitBadFile, words: []string{"KubeSchedulerConfiguration"}},
		{name: "Pod with scheduling gates", args: preemptVariant(func(s string) string {
			return strings.Replace(s, "  priorityClassName: high", "  priorityClassName: high\n  schedulingGates: [{name: wait}]", 1)
		}), code: ExitUsage, words: []string{"scheduling gates"}},
		{name: "CronJob", args: static("-f", example, "cronjob/x", "--replicas=1"), code: ExitUnsupported},
		// Jobs (examples/job.json: Indexed job/train, NonIndexed job/queue).
		{name: "Job with --replicas", args: static("-f", jobFile, "-n", "ml", "job/queue", "--replicas=1"), code: ExitUsage, words: []string{"--parallelism"}},
		{name: "--parallelism on a Deployment", args: static(off(example, "--parallelism=1")...), code: ExitUsage, words: []string{"job/NAME only", "Deployment"}},
		{name: "--completions on a StatefulSet", args: static("-f", example, "sts/x", "-n", "shop", "--completions=1"), code: ExitUsage, words: []string{"job/NAME only", "StatefulSet"}},
		{name: "Job --completions without --parallelism", args: static("-f", jobFile, "-n", "ml", "job/train", "--completions=3"), code: ExitUsage, words: []string{"--parallelism"}},
		{name: "Job --parallelism negative", args: static("-f", jobFile, "-n", "ml", "job/train", "--parallelism=-1"), code: ExitUsage, words: []string{"negative"}},
		{name: "NonIndexed Job --completions", args: static("-f", jobFile, "-n", "ml", "job/queue", "--parallelism=2", "--completions=2"), code: ExitUsage, words: []string{"NonIndexed", "immutable"}},
		{name: "Indexed Job completions not in tandem", args: static("-f", jobFile, "-n", "ml", "job/train", "--parallelism=3", "--completions=4"), code: ExitUsage, words: []string{"in tandem", "--parallelism=4"}},
		{name: "Indexed Job completions before 1.27", args: static("-f", jobFile, "-n", "ml", "job/train", "--parallelism=3", "--completions=3", "--kube-version", "1.26"), code: ExitUsage, words: []string{"1.26", "ElasticIndexedJob"}},
		{name: "Indexed Job completions with the gate off", args: static("-f", jobFile, "-n", "ml", "job/train", "--parallelism=3", "--completions=3", "--kube-version", "1.30", "--feature-gates", "ElasticIndexedJob=false"), code: ExitUsage, words: []string{"ElasticIndexedJob"}},
		{name: "Job steering", args: static("-f", jobFile, "-n", "ml", "job/queue", "--parallelism=2", "--spare", "queue-a"), code: ExitUsage, words: []string{"pod-deletion-cost"}},
		{name: "Job snapshot without its pods", args: func(t *testing.T) []string {
			return []string{"-f", writeFile(t, "apiVersion: batch/v1\nkind: Job\nmetadata: {name: lone, namespace: ml, uid: u1}\nspec: {parallelism: 3, selector: {matchLabels: {a: b}}}\nstatus: {active: 3, startTime: \"2025-06-01T10:00:00Z\"}\n"),
				"job/lone", "-n", "ml", "--parallelism=1"}
		}, code: ExitBadFile, words: []string{"Job lone counts 3 pods", "kubectl get jobs,pods"}},
		{name: "Job not in the file", args: static("-f", jobFile, "-n", "ml", "job/nope", "--parallelism=1"), code: ExitNotFound, words: []string{"nope"}},
		// Arguments and flags.
		{name: "no --replicas", args: static(off(example)...), code: ExitUsage, words: []string{"--replicas"}},
		{name: "empty --replicas", args: static(off(example, "--replicas=")...), code: ExitUsage, words: []string{"--replicas"}},
		{name: "--replicas not a number", args: static(off(example, "--replicas=abc")...), code: ExitUsage, words: []string{"abc"}},
		{name: "--replicas negative", args: static(off(example, "--replicas=-1")...), code: ExitUsage, words: []string{"negative"}},
		{name: "--replicas fraction", args: static(off(example, "--replicas=1.5")...), code: ExitUsage, words: []string{"1.5"}},
		{name: "--replicas above int32", args: static(off(example, "--replicas=2147483648")...), code: ExitUsage, words: []string{"2147483648"}, other: true},
		{name: "no object", args: static("-f", example, "--replicas=1"), code: ExitUsage, words: []string{"name one object"}},
		{name: "object without name", args: static("-f", example, "deploy/", "--replicas=1"), code: ExitUsage, words: []string{"missing the object name"}},
		{name: "two objects", args: static("-f", example, "deploy/web", "rs/x", "--replicas=1"), code: ExitUsage, words: []string{"rs/x"}, other: true},
		{name: "three arguments", args: static("-f", example, "deploy", "web", "extra", "--replicas=1"), code: ExitUsage, other: true},
		{name: "unknown output", args: static(off(example, "--replicas=1", "-o", "xml")...), code: ExitUsage, words: []string{"xml"}},
		{name: "output without value", args: static(off(example, "--replicas=1", "-o")...), code: ExitUsage, other: true},
		{name: "bad --now", args: static(off(example, "--replicas=1", "--now", "yesterday")...), code: ExitUsage, words: []string{"--now"}},
		{name: "kube-version not a version", args: static(off(example, "--replicas=1", "--kube-version", "two")...), code: ExitUsage, words: []string{"two"}},
		{name: "kube-version too old", args: static(off(example, "--replicas=1", "--kube-version", "1.20")...), code: ExitUsage, words: []string{"1.20"}},
		{name: "kube-version too new", args: static(off(example, "--replicas=1", "--kube-version", "1.99")...), code: ExitUsage, words: []string{"1.99"}},
		{name: "kube-version 2.0", args: static(off(example, "--replicas=1", "--kube-version", "2.0")...), code: ExitUsage, words: []string{"2.0"}},
		{name: "gate without value", args: static(off(example, "--replicas=1", "--feature-gates", "PodDeletionCost")...), code: ExitUsage, words: []string{"PodDeletionCost"}},
		{name: "gate not boolean", args: static(off(example, "--replicas=1", "--feature-gates", "PodDeletionCost=maybe")...), code: ExitUsage, words: []string{"maybe"}},
		{name: "misspelt gate", args: static(off(example, "--replicas=1", "--feature-gates", "PodDeletonCost=false")...), code: ExitUsage, words: []string{"PodDeletonCost"}, other: true},
		{name: "gate removed in that version", args: static(off(example, "--replicas=1", "--kube-version", "1.37", "--feature-gates", "LogarithmicScaleDown=false")...), code: ExitUsage, words: []string{"LogarithmicScaleDown"}},
		{name: "unknown flag", args: static(off(example, "--replicas=1", "--no-such-flag")...), code: ExitUsage, words: []string{"--no-such-flag"}},
		{name: "spare a pod that is no candidate", args: static(off(example, "--replicas=3", "--spare", "nope")...), code: ExitUsage, words: []string{"nope"}, other: true},
		{name: "spare and target the same pod", args: static(off(example, "--replicas=3", "--spare", "web-7d9f8c6b5-p1xq", "--target", "web-7d9f8c6b5-p1xq")...), code: ExitUsage, words: []string{"web-7d9f8c6b5-p1xq"}, other: true},
		{name: "target a node with no pod", args: static(off(example, "--replicas=3", "--target-node", "nope")...), code: ExitUsage, words: []string{"nope"}, other: true},
		// Live: configuration and transport.
		{name: "bad --request-timeout", args: static("deploy/api", "-n", "prod", "--replicas=1", "--request-timeout=soon"), live: true, code: ExitUsage, words: []string{"--request-timeout", "soon"}},
		{name: "untrusted certificate", args: static("deploy/api", "-n", "prod", "--replicas=1", "--kube-version", "1.37", "--insecure-skip-tls-verify=false", "--certificate-authority", "/dev/null"), live: true, code: ExitUnreachable, words: []string{"certificate"}},
		{name: "unreachable server", args: static("deploy/api", "-n", "prod", "--replicas=1", "--kube-version", "1.37", "--server", "https://127.0.0.1:1"), live: true, code: ExitUnreachable, words: []string{"cannot reach"}},
		{name: "live object not found", args: static("deploy/nope", "-n", "prod", "--replicas=1", "--kube-version", "1.37"), live: true, code: ExitNotFound, words: []string{"nope"}},
		// --desired: manifests against the live cluster (gitops.md).
		{name: "desired manifest for another namespace", args: desiredFile(desiredAPI("2", "api:2"), "-n", "staging"), live: true, code: ExitUsage, words: []string{`the namespace from the provided object "prod" does not match the namespace "staging"`, "--namespace=prod"}},
		{name: "desired without -f", args: static("--desired", "-n", "prod"), live: true, code: ExitUsage, words: []string{"-f FILE"}},
		{name: "desired with --replicas", args: desiredFile(desiredAPI("2", "api:2"), "--replicas=1"), live: true, code: ExitUsage, words: []string{"--replicas", "--desired"}},
		{name: "desired with an object", args: desiredFile(desiredAPI("2", "api:2"), "deploy/api"), live: true, code: ExitUsage, words: []string{"deploy/api"}},
		{name: "desired malformed manifest", args: desiredFile("kind: [\n"), live: true, code: ExitBadFile},
		{name: "desired replicas not a number", args: desiredFile(strings.Replace(desiredAPI("2", "api:2"), "replicas: 2", "replicas: many", 1)), live: true, code: ExitBadFile},
		{name: "desired missing file", args: static("--desired", "-f", "/nonexistent/deploy.yaml"), live: true, code: ExitBadFile, words: []string{"/nonexistent/deploy.yaml"}},
		{name: "desired workload not created yet", args: desiredFile(strings.ReplaceAll(desiredAPI("1", "x"), "name: api\n", "name: fresh\n")), live: true, code: ExitOK},
		{name: "desired manifest without workload", args: desiredFile(desiredService), live: true, code: ExitOK},
		// --watch (watch.md).
		{name: "watch a node", args: static("node/worker-1", "--watch"), live: true, code: ExitUsage, words: []string{"--watch", "node/NAME"}},
		{name: "watch with offline -f", args: static(off(example, "--replicas=3", "--watch")...), code: ExitUsage, words: []string{"--watch", "-f"}},
		{name: "watch with --desired", args: desiredFile(desiredAPI("2", "api:2"), "--watch"), live: true, code: ExitUsage, words: []string{"--watch", "--desired"}},
		{name: "watch with --now", args: static("deploy/api", "-n", "prod", "--replicas=1", "--watch", "--now", liveNowFlag), live: true, code: ExitUsage, words: []string{"--watch", "--now"}},
		{name: "watch with --fail-if-uncertain", args: static("deploy/api", "-n", "prod", "--replicas=1", "--watch", "--fail-if-uncertain"), live: true, code: ExitUsage, words: []string{"--watch", "--fail-if-uncertain"}},
		// Node previews (node_test.go has the files).
		{name: "node not in the files", args: nodeArgs("node/nope"), code: ExitNotFound, words: []string{"nope"}},
		{name: "node without pods", args: nodeFiles(t, nodeNoPods, nodeSummaryNoPods, nodeConfigz, "--fail-if-uncertain"), code: ExitOK},
		{name: "summary of another node", args: nodeFiles(t, nodeFile, strings.Replace(mustRead(t, nodeSummaryPath), `"worker-1"`, `"worker-2"`, 1), nodeConfigz), code: ExitBadFile, words: []string{"worker-2", "stats/summary"}},
		{name: "malformed summary", args: nodeFiles(t, nodeFile, `{"node": {"nodeName": 3}}`, nodeConfigz), code: ExitBadFile, words: []string{"summary"}},
		{name: "summary without node name", args: nodeFiles(t, nodeFile, `{"node": {}, "pods": []}`, nodeConfigz), code: ExitBadFile, words: []string{"nodeName"}},
		{name: "malformed configz", args: nodeFiles(t, nodeFile, mustRead(t, nodeSummaryPath), `{"kubeletconfig": [1]}`), code: ExitBadFile, words: []string{"configz"}},
		{name: "configz the kubelet rejects", args: nodeFiles(t, nodeFile, mustRead(t, nodeSummaryPath), `{"kubeletconfig": {"evictionHard": {"memory.available": "-1Mi"}}}`), code: ExitBadFile, words: []string{"reject", "must be positive"}},
		{name: "soft threshold without grace period", args: nodeFiles(t, nodeFile, mustRead(t, nodeSummaryPath), `{"kubeletconfig": {"evictionSoft": {"memory.available": "1Gi"}}}`), code: ExitBadFile, words: []string{"grace period must be specified"}},
		{name: "containerfs signal before 1.29", args: nodeFiles(t, nodeFile, mustRead(t, nodeSummaryPath), `{"kubeletconfig": {"evictionHard": {"containerfs.available": "10%"}}}`, "--kube-version", "1.28"), code: ExitBadFile, words: []string{"unsupported eviction signal"}},
		{name: "unknown --assume signal", args: nodeArgs("node/worker-1", "--assume", "memory.free=1Mi"), code: ExitUsage, words: []string{"memory.free"}},
		{name: "--assume without value", args: nodeArgs("node/worker-1", "--assume", "memory.available"), code: ExitUsage, words: []string{"SIGNAL=VALUE"}},
		{name: "--assume not a quantity", args: nodeArgs("node/worker-1", "--assume", "memory.available=lots"), code: ExitUsage, words: []string{"lots"}},
		{name: "--replicas on a node", args: nodeArgs("node/worker-1", "--replicas=3"), code: ExitUsage, words: []string{"--replicas"}},
		{name: "--kubelet-insecure-tls offline", args: nodeArgs("node/worker-1", "--kubelet-insecure-tls"), code: ExitUsage, words: []string{"--kubelet-*", "live"}},
		{name: "--kubelet-certificate-authority not for a scale-in", args: static("-f", "../../examples/web.yaml", "deploy/web", "-n", "shop", "--replicas", "3", "--kubelet-certificate-authority", "ca.crt"), code: ExitUsage, words: []string{"node/NAME only"}},
		{name: "unknown --kubelet-preferred-address-types", args: static("node/worker-1", "--kubelet-preferred-address-types", "InternalIP,Private"), code: ExitUsage, words: []string{"Private"}},
		{name: "--kubelet-certificate-authority without a certificate", args: static("node/worker-1", "--kubelet-certificate-authority", "../../examples/web.yaml"), code: ExitUsage, words: []string{"--kubelet-certificate-authority"}},
		{name: "summary older than --now", args: nodeArgs("node/worker-1", "--now", "2026-01-01T01:00:00Z", "--fail-if-uncertain"), code: ExitUncertain, words: []string{"incomplete"}},
		{name: "pods missing from the summary", args: nodeFiles(t, nodeFile, nodeSummaryNoPods, nodeConfigz, "--fail-if-uncertain"), code: ExitUncertain, words: []string{"missing from the summary"}},
		{name: "two configz documents", args: func(t *testing.T) []string {
			return append(nodeArgs("node/worker-1")(t), "-f", writeNamed(t, "c2.json", nodeConfigz))
		}, code: ExitBadFile, words: []string{"configz"}},
		{name: "node files without summary", args: static("-f", nodeFilePath, "node/worker-1"), code: ExitBadFile, words: []string{"stats/summary"}},
		// Modes (modes.go): a flag of another mode is refused, in either
		// form, and a mode command refuses another mode's object.
		{name: "--assume on a pod", args: static("-f", preemptFile, "pod/critical", "-n", "shop", "--assume", "memory.available=1Mi"), code: ExitUsage, words: []string{"--assume does not apply to pod/critical", "kubectl scale-preview pod --help"}},
		{name: "--spare on a pod", args: static("-f", preemptFile, "pod/critical", "-n", "shop", "--spare", "x"), code: ExitUsage, words: []string{"--spare does not apply to pod/critical"}},
		{name: "--scheduler-config on a Deployment", args: static(off(example, "--replicas=1", "--scheduler-config", "sched.yaml")...), code: ExitUsage, words: []string{"--scheduler-config does not apply to deployment/web", "scale-in --help"}},
		{name: "--scheduler-config on a node", args: nodeArgs("node/worker-1", "--scheduler-config", "sched.yaml"), code: ExitUsage, words: []string{"--scheduler-config does not apply to node/worker-1"}},
		{name: "--assume with --desired", args: desiredFile(desiredAPI("2", "api:2"), "--assume", "memory.available=1Mi"), live: true, code: ExitUsage, words: []string{"--assume does not apply to --desired"}},
		{name: "node mode with --replicas", args: func(t *testing.T) []string {
			return append([]string{"node"}, append(nodeArgs("worker-1")(t), "--replicas=3")...)
		}, code: ExitUsage, words: []string{"--replicas does not apply to node/worker-1"}},
		{name: "pod mode with --assume", args: static("pod", "critical", "-f", preemptFile, "-n", "shop", "--assume", "memory.available=1Mi"), code: ExitUsage, words: []string{"--assume does not apply to pod/critical"}},
		{name: "scale-in mode given a node", args: func(t *testing.T) []string {
			return append([]string{"scale-in"}, nodeArgs("node/worker-1")(t)...)
		}, code: ExitUsage, words: []string{"node/worker-1 is not a scale-in", "kubectl scale-preview node worker-1"}},
		{name: "watch mode given a pod", args: static("watch", "pod/critical", "-n", "shop"), live: true, code: ExitUsage, words: []string{"--watch", "pod/NAME"}},
		{name: "node mode without a name", args: static("node"), code: ExitUsage, words: []string{`"node" has no name`}},
		{name: "mode command with an unknown flag", args: static("job", "train", "--no-such-flag"), code: ExitUsage, words: []string{"--no-such-flag", "kubectl scale-preview job --help"}},
		// -o name cannot say another namespace (output.md).
		{name: "-o name with victims in another namespace", args: static("-f", preemptFile, "pod/critical", "-n", "shop", "-o", "name"), code: ExitUsage, words: []string{"namespace(s) jobs, not in shop", "jsonpath"}},
		// Scale-ups answer at once, whatever the size.
		{name: "scale-up to the int32 maximum", args: static(off(example, "--replicas=2147483647")...), code: ExitOK, process: true, other: true},
		{name: "ReplicaSet scale-up to the int32 maximum", args: static("-f", example, "rs/web-7d9f8c6b5", "-n", "shop", "--replicas=2147483647"), code: ExitOK, process: true},
	}
	for _, m := range [][]modeBadInput{drainMatrix(), outageMatrix(), rolloutMatrix(), rolloutSTSMatrix(), rolloutDSMatrix()} {
		for _, d := range m {
			cases = append(cases, tc{name: d.name, args: d.args, code: d.code, words: d.words})
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r cliResult
			switch {
			case c.process:
				r = boundedRun(t, c.args(t))
			case c.live:
				f := newFakeAPIServer(t)
				r = f.run(true, c.args(t)...)
			default:
				var stdin *strings.Reader
				if c.stdin != "" {
					stdin = strings.NewReader(c.stdin)
				}
				if stdin != nil {
					r = cliRun(t, nil, stdin, c.args(t)...)
				} else {
					r = cliRun(t, nil, nil, c.args(t)...)
				}
			}
			if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic:") {
				t.Fatalf("stack trace:\n%s", r.stderr)
			}
			if c.code == ExitOK {
				wantExit(t, r, ExitOK)
				return
			}
			if c.code != ExitUncertain && r.stdout != "" {
				t.Errorf("a failed run printed output:\n%s", r.stdout)
			}
			wantExit(t, r, c.code, c.words...)
		})
	}
	if len(cases) < 40 {
		t.Errorf("%d cases, want at least 40", len(cases))
	}
}

// boundedRun runs the plugin as a process and kills it after 10 s: a
// scale-up must answer at once, and one that does not must not hang the suite.
func boundedRun(t *testing.T, args []string) cliResult {
	t.Helper()
	cmd := mainProcess(args, "KUBECONFIG="+filepath.Join(t.TempDir(), "none"))
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	}()
	_ = cmd.Wait()
	close(done)
	r := cliResult{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errOut.String(), elapsed: time.Since(start)}
	if r.elapsed >= 10*time.Second {
		t.Fatalf("killed after %v: a scale-up must answer at once", r.elapsed)
	}
	return r
}

// A Deployment with no strategy and no ReplicaSet says each thing once.
func TestWarningsOnce(t *testing.T) {
	r := cliRun(t, nil, nil, append([]string{"-f", snapshotVariant(t, noStrategyNoRS)}, "deploy/web", "-n", "shop", "--replicas=3", "--now", liveNowFlag, "-o", "json")...)
	wantExit(t, r, ExitOK)
	p := decode(t, r.stdout)
	seen := map[string]bool{}
	for _, w := range p.Warnings {
		if seen[w] {
			t.Errorf("warning repeated: %q", w)
		}
		seen[w] = true
	}
}
