package cmd

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

const drainFile = "../../examples/drain.yaml"

// drainVariant writes examples/drain.yaml after edit and returns the
// drain arguments for it.
func drainVariant(edit func(items []map[string]any) []map[string]any, args ...string) func(*testing.T) []string {
	return func(t *testing.T) []string {
		t.Helper()
		path := fileVariant(t, drainFile, edit)
		return append([]string{"drain", "-f", path, "--now", liveNowFlag}, args...)
	}
}

// editKind applies fn to every object of kind.
func editKind(kind string, fn func(obj map[string]any)) func([]map[string]any) []map[string]any {
	return func(items []map[string]any) []map[string]any {
		for _, it := range items {
			if it["kind"] == kind {
				fn(it)
			}
		}
		return items
	}
}

func badPDBSelector(pdb map[string]any) {
	pdb["spec"].(map[string]any)["selector"] = map[string]any{"matchExpressions": []any{map[string]any{"key": "app", "operator": "Bogus"}}}
}

func overAllowedPDB(pdb map[string]any) {
	pdb["status"].(map[string]any)["disruptionsAllowed"] = 7
}

// drainMatrix are the drain's bad inputs (TestBadInputMatrix runs them).
func drainMatrix() []modeBadInput {
	return []modeBadInput{
		{"drain: node not in the files", staticArgs("drain", "node-9", "-f", drainFile), ExitNotFound, []string{`"node-9"`, "not in the files"}},
		{"drain: no node and no selector", staticArgs("drain", "-f", drainFile), ExitUsage, []string{"--selector"}},
		{"drain: node names with --selector", staticArgs("drain", "node-1", "-l", "pool=blue", "-f", drainFile), ExitUsage, []string{"cannot specify both"}},
		{"drain: bad --pod-selector", staticArgs("drain", "node-1", "--pod-selector", "a=(", "-f", drainFile), ExitUsage, []string{"--pod-selector"}},
		{"drain: bad --selector", staticArgs("drain", "-l", "a=(", "-f", drainFile), ExitUsage, []string{"--selector"}},
		{"drain: unknown gate", staticArgs("drain", "node-1", "-f", drainFile, "--feature-gates", "PodDeletionCost=true"), ExitUsage, []string{"PodDeletionCost"}},
		{"drain: not a node name", staticArgs("drain", "deploy/web", "-f", drainFile), ExitUsage, []string{"not a node name"}},
		{"drain: files without nodes", drainVariant(dropKind("Node"), "node-1"), ExitBadFile, []string{"no Node"}},
		{"drain: PDB with an invalid selector", drainVariant(editKind("PodDisruptionBudget", badPDBSelector), "node-1"), ExitBadFile, []string{"invalid selector"}},
		{"drain: pods whose owners are missing", drainVariant(dropKind("ReplicaSet"), "node-1", "--ignore-daemonsets", "--fail-if-uncertain"), ExitUncertain, []string{"--fail-if-uncertain"}},
		{"drain: malformed PDB status", drainVariant(editKind("PodDisruptionBudget", overAllowedPDB), "node-1", "--ignore-daemonsets", "--fail-if-uncertain"), ExitUncertain, []string{"--fail-if-uncertain"}},
	}
}

func drainRun(t *testing.T, args ...string) (cliResult, *prediction.Prediction) {
	t.Helper()
	r := cliRun(t, nil, nil, append([]string{"drain", "-f", drainFile, "--now", liveNowFlag}, append(args, "-o", "json")...)...)
	if r.code != ExitOK {
		t.Fatalf("%s", r)
	}
	var p prediction.Prediction
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatal(err)
	}
	return r, &p
}

// The example: node-1 drains at once; node-2 waits on PDB web until the
// replacement of web-7d9f-a is Ready; web-7d9f-b's replacement fits
// nowhere (node-3 is full).
func TestDrainExample(t *testing.T) {
	_, p := drainRun(t, "node-1", "node-2", "--ignore-daemonsets")
	d := p.Drain
	if !p.Certain || !slices.Equal(p.Victims, []string{"default/batch-5c4b-x", "default/web-7d9f-a", "default/web-7d9f-b"}) || len(d.Nodes) != 2 {
		t.Fatalf("%+v", p)
	}
	n1, n2 := d.Nodes[0], d.Nodes[1]
	if n1.Outcome != "drained" || !slices.Equal(n1.Skipped, []string{"default/logs-a"}) || n2.Outcome != "drained" {
		t.Fatalf("%+v\n%+v", n1, n2)
	}
	if w := n2.Pods[1]; w.Action != "evicted-after-wait" || !strings.Contains(w.Why, "healthy 2 -> 0 disruptions allowed until the replacement of default/web-7d9f-a is Ready") {
		t.Errorf("%+v", w)
	}
	last := d.Replacements[2]
	if last.For != "default/web-7d9f-b" || last.Node != "" || last.Reason != "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable." || last.Owner != "Deployment/web" {
		t.Errorf("%+v", last)
	}
}

// Without --ignore-daemonsets kubectl refuses both nodes, naming the flag.
func TestDrainRefusedWithoutIgnoreDaemonSets(t *testing.T) {
	_, p := drainRun(t, "-l", "pool=blue")
	for _, n := range p.Drain.Nodes {
		if n.Outcome != "refused" || !strings.Contains(n.Reason, "--ignore-daemonsets") || len(n.Evicted) != 0 {
			t.Errorf("%+v", n)
		}
	}
	if len(p.Victims) != 0 || len(p.Drain.Nodes) != 2 {
		t.Errorf("%+v", p)
	}
}

func TestDrainNames(t *testing.T) {
	r := cliRun(t, nil, nil, "drain", "node-1", "--ignore-daemonsets", "-f", drainFile, "-o", "name")
	wantExit(t, r, ExitOK)
	if r.stdout != "pod/batch-5c4b-x\npod/web-7d9f-a\n" {
		t.Errorf("%q", r.stdout)
	}
	// Victims outside the command's namespace: pod/NAME would name the
	// wrong pods, so -o name refuses and says what to use.
	r = cliRun(t, nil, nil, "drain", "node-1", "--ignore-daemonsets", "-f", drainFile, "-o", "name", "-n", "shop")
	wantExit(t, r, ExitUsage)
	if r.stdout != "" || !strings.Contains(r.stderr, "jsonpath") {
		t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
	}
}

func TestDrainLayouts(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"drain", []string{"node-1", "node-2", "--ignore-daemonsets"}},
		{"drain_refused", []string{"-l", "pool=blue"}},
		{"drain_podselector", []string{"node-1", "node-2", "--ignore-daemonsets", "--pod-selector", "app=web", "--timeout", "1m", "--grace-period", "5"}},
	} {
		for _, width := range []int{80, 120} {
			name := tc.name + "_" + map[int]string{80: "80", 120: "120"}[width]
			t.Run(name, func(t *testing.T) {
				defer func(w int) { cliWidth = w }(cliWidth)
				cliWidth = width
				r := cliRun(t, nil, nil, append([]string{"drain", "-f", drainFile, "--now", liveNowFlag}, tc.args...)...)
				wantLayout(t, r, "layout_"+name, width)
			})
		}
	}
}

// Live: the same answer as offline; a node that does not exist is exit 3;
// a forbidden list names the permission and exits 4.
func TestDrainLive(t *testing.T) {
	r := cliRun(t, fake.NewClientset(fileObjects(t, drainFile, "default")...), nil, "drain", "node-1", "node-2", "--ignore-daemonsets", "--kube-version", "1.37", "--now", liveNowFlag, "-o", "name")
	wantExit(t, r, ExitOK)
	if r.stdout != "pod/batch-5c4b-x\npod/web-7d9f-a\npod/web-7d9f-b\n" {
		t.Errorf("%q", r.stdout)
	}
	r = cliRun(t, fake.NewClientset(fileObjects(t, drainFile, "default")...), nil, "drain", "node-9", "--kube-version", "1.37")
	wantExit(t, r, ExitNotFound, "node-9")
	c := fake.NewClientset(fileObjects(t, drainFile, "default")...)
	c.PrependReactor("list", "poddisruptionbudgets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "policy", Resource: "poddisruptionbudgets"}, "", errors.New("no"))
	})
	r = cliRun(t, c, nil, "drain", "node-1", "--kube-version", "1.37")
	wantExit(t, r, ExitForbidden, "list poddisruptionbudgets.policy", "predicting a drain")
	c = fake.NewClientset(fileObjects(t, drainFile, "default")...)
	c.PrependReactor("list", "replicasets", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "replicasets"}, "", errors.New("no"))
	})
	r = cliRun(t, c, nil, "drain", "node-1", "--kube-version", "1.37")
	wantExit(t, r, ExitForbidden, "list replicasets.apps")
}

// --disable-eviction deletes every pod at once and names the budgets the
// deletions break.
func TestDrainDisableEviction(t *testing.T) {
	_, p := drainRun(t, "node-1", "node-2", "--ignore-daemonsets", "--disable-eviction")
	if len(p.Victims) != 3 || len(p.Drain.BrokenBudgets) != 1 || !strings.Contains(p.Drain.BrokenBudgets[0], "node node-2") {
		t.Fatalf("%+v %v", p.Victims, p.Drain.BrokenBudgets)
	}
	for _, n := range p.Drain.Nodes {
		for _, pod := range n.Pods {
			if pod.Action != "deleted" && pod.Action != "skipped" {
				t.Errorf("%+v", pod)
			}
		}
	}
}
