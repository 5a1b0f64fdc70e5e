package cmd

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"
)

// preemptFile: three nodes, a PDB, two PriorityClasses and the manifest of
// a pending pod shop/critical (priority 1000 from its class).
const preemptFile = "../../examples/preempt.yaml"

func preemptVariant(edit func(string) string) func(*testing.T) []string {
	return func(t *testing.T) []string {
		return []string{"-f", writeFile(t, edit(mustRead(t, preemptFile))), "pod/critical", "-n", "shop"}
	}
}

// dropNodes removes the List of nodes.
func dropNodes(s string) string {
	docs := strings.Split(s, "\n---\n")
	var out []string
	for _, d := range docs {
		if !strings.Contains(d, "kind: Node") {
			out = append(out, d)
		}
	}
	return strings.Join(out, "\n---\n")
}

func TestPodPreemptionOffline(t *testing.T) {
	r := cliRun(t, nil, nil, "-f", preemptFile, "pod/critical", "-n", "shop", "-o", "jsonpath={.victims}")
	wantExit(t, r, ExitOK)
	if r.stdout != `["jobs/batch-x2"]` {
		t.Errorf("victims %q, want [\"jobs/batch-x2\"]", r.stdout)
	}
	r = cliRun(t, nil, nil, "-f", preemptFile, "pod/critical", "-n", "shop", "-o", "json")
	wantExit(t, r, ExitOK)
	for _, want := range []string{`"nominatedNode": "node-b"`, `"criterion": "fewest PDB violations"`, `"owner": "Job/batch"`, `"priorityClass": "high"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %s in\n%s", want, r.stdout)
		}
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	if err := compileSchema(t).Validate(doc); err != nil {
		t.Errorf("the output does not match %s:\n%v", schemaPath, err)
	}
}

func TestPodPreemptionLayouts(t *testing.T) {
	for _, width := range []int{80, 120} {
		name := map[int]string{80: "layout_preemption_80", 120: "layout_preemption_120"}[width]
		t.Run(name, func(t *testing.T) {
			defer func(w int) { cliWidth = w }(cliWidth)
			cliWidth = width
			r := cliRun(t, nil, nil, "-f", preemptFile, "pod/critical", "-n", "shop")
			wantLayout(t, r, name, width)
		})
	}
}

// A budget that selects nothing changes nothing, but is worth a warning.
func TestPodPreemptionWarnsAboutEmptyBudget(t *testing.T) {
	args := preemptVariant(func(s string) string {
		return strings.Replace(s, "matchLabels: {app: web}", "matchLabels: {app: nothing}", 1)
	})(t)
	r := cliRun(t, nil, nil, args...)
	wantExit(t, r, ExitOK)
	if !strings.Contains(r.stdout, "selects no pod") {
		t.Errorf("no warning about the empty budget:\n%s", r.stdout)
	}
	// Without the budget, node-a and node-b each lose one pod of priority
	// 10: the later start (node-b's batch-x2) decides.
	if !strings.Contains(r.stdout, "NOMINATED NODE node-b") || !strings.Contains(r.stdout, "latest start of the highest-priority victims") {
		t.Errorf("want node-b by the last criterion:\n%s", r.stdout)
	}
}

// Live: the objects of the file on a fake API server; listing pods
// cluster-wide forbidden names the permission and exits 4.
func TestPodPreemptionLive(t *testing.T) {
	objs := preemptObjects(t)
	r := cliRun(t, fake.NewClientset(objs...), nil, "pod/critical", "-n", "shop", "--kube-version", "1.37", "-o", "jsonpath={.victims}")
	wantExit(t, r, ExitOK)
	if r.stdout != `["jobs/batch-x2"]` {
		t.Errorf("victims %q, want [\"jobs/batch-x2\"]", r.stdout)
	}
	c := fake.NewClientset(objs...)
	c.PrependReactor("list", "pods", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() == "" {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "", nil)
		}
		return false, nil, nil
	})
	r = cliRun(t, c, nil, "pod/critical", "-n", "shop", "--kube-version", "1.37")
	wantExit(t, r, ExitForbidden, "list pods in all namespaces")
	r = cliRun(t, fake.NewClientset(objs...), nil, "pod/web-7d9f8c6b5-p6hj", "-n", "shop", "--kube-version", "1.37")
	wantExit(t, r, ExitUsage, "already runs on node node-a")
	r = cliRun(t, fake.NewClientset(objs...), nil, "pod/nope", "-n", "shop", "--kube-version", "1.37")
	wantExit(t, r, ExitNotFound, "nope")
}

// preemptObjects: the file's objects as the API server holds them (the
// pending pod admitted: priority set).
func preemptObjects(t *testing.T) []runtime.Object {
	t.Helper()
	var out []runtime.Object
	for _, doc := range strings.Split(mustRead(t, preemptFile), "\n---\n") {
		var u map[string]any
		if err := yaml.Unmarshal([]byte(doc), &u); err != nil {
			t.Fatal(err)
		}
		items := []any{u}
		if u["kind"] == "List" {
			items = u["items"].([]any)
		}
		for _, it := range items {
			m := it.(map[string]any)
			if md := m["metadata"].(map[string]any); md["name"] == "critical" {
				m["spec"].(map[string]any)["priority"] = 1000
			}
			data, _ := yaml.Marshal(m)
			obj, _, err := decodeForTest(data)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, obj)
		}
	}
	return out
}

func decodeForTest(data []byte) (runtime.Object, *schema.GroupVersionKind, error) {
	return scheme.Codecs.UniversalDeserializer().Decode(data, nil, nil)
}

// An extender in the scheduler's configuration is not modelled: the answer
// stays the same but is not certain, and says why.
func TestPodPreemptionSchedulerConfigExtender(t *testing.T) {
	cfg := writeFile(t, "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nextenders: [{urlPrefix: 'http://x'}]\n")
	r := cliRun(t, nil, nil, "-f", preemptFile, "pod/critical", "-n", "shop", "--scheduler-config", cfg, "-o", "json", "--fail-if-uncertain")
	wantExit(t, r, ExitUncertain)
	for _, want := range []string{`"certain": false`, "extender", `"nominatedNode": "node-b"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %s in\n%s", want, r.stdout)
		}
	}
}

// A pending pod preempts pods of other namespaces (the scheduler ignores
// namespaces): victims say namespace/name, and -o name, whose pod/NAME a
// script reads in -n's namespace, refuses rather than name the wrong pods
// (issue 35, preempt-other-namespace). In one namespace it is kubectl's form.
func TestPodPreemptionVictimsInOtherNamespaces(t *testing.T) {
	r := cliRun(t, nil, nil, "-f", preemptFile, "pod/critical", "-n", "shop", "-o", "name")
	wantExit(t, r, ExitUsage)
	if r.stdout != "" || !strings.Contains(r.stderr, "namespace(s) jobs, not in shop") || !strings.Contains(r.stderr, "jsonpath") {
		t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	r = cliRun(t, nil, nil, "-f", preemptFile, "pod/critical", "-n", "shop", "-o", "json")
	wantExit(t, r, ExitOK)
	for _, want := range []string{`"victims": [
        "jobs/batch-x2"
    ]`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %s in\n%s", want, r.stdout)
		}
	}
	// The schema holds it: a bare name is refused for pod/NAME.
	bare := strings.Replace(r.stdout, `"jobs/batch-x2"`, `"batch-x2"`, 1)
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(bare))
	if err != nil {
		t.Fatal(err)
	}
	if bare == r.stdout || compileSchema(t).Validate(doc) == nil {
		t.Error("the schema accepts a bare victim name for pod/NAME")
	}
	same := preemptVariant(func(s string) string { return strings.ReplaceAll(s, "namespace: jobs", "namespace: shop") })(t)
	r = cliRun(t, nil, nil, append(same, "-o", "name")...)
	wantExit(t, r, ExitOK)
	if r.stdout != "pod/batch-x2\n" {
		t.Errorf("-o name in one namespace: %q", r.stdout)
	}
}

// The class of preempt-other-namespace, drawn at random: the running pods
// of examples/preempt.yaml moved to random namespaces. Whatever the draw,
// victims are the nominated outcome's pods as namespace/name, each in the
// namespace its pod has, and -o name prints them exactly when all are in
// the pending pod's namespace.
func TestPodPreemptionVictimNamespacesDrawn(t *testing.T) {
	base := mustRead(t, preemptFile)
	lines := strings.Split(base, "\n")
	var running []int // the running pods' namespace lines (not the PDB's, not the pending pod's)
	for i, l := range lines {
		if strings.TrimSpace(l) == "namespace: shop" || strings.TrimSpace(l) == "namespace: jobs" || strings.Contains(l, "name: gpu-1, namespace: ml") {
			running = append(running, i)
		}
	}
	if len(running) != 4 {
		t.Fatalf("examples/preempt.yaml changed: %d running pods found", len(running))
	}
	spaces := []string{"shop", "jobs", "ml", "default"}
	rng := rand.New(rand.NewPCG(35, 6))
	for draw := range 12 {
		edited := slices.Clone(lines)
		for _, i := range running {
			ns := spaces[rng.IntN(len(spaces))]
			if strings.Contains(edited[i], "gpu-1") {
				edited[i] = strings.Replace(edited[i], "namespace: ml", "namespace: "+ns, 1)
			} else {
				edited[i] = strings.Replace(strings.Replace(edited[i], "shop", ns, 1), "jobs", ns, 1)
			}
		}
		args := []string{"-f", writeFile(t, strings.Join(edited, "\n")), "pod/critical", "-n", "shop"}
		r := cliRun(t, nil, nil, append(args, "-o", "json")...)
		wantExit(t, r, ExitOK)
		var doc struct {
			Victims    []string `json:"victims"`
			Preemption struct {
				Outcomes []struct {
					Victims []struct{ Namespace, Name string } `json:"victims"`
				} `json:"outcomes"`
			} `json:"preemption"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatal(err)
		}
		var want []string
		inShop := true
		if len(doc.Preemption.Outcomes) > 0 {
			for _, v := range doc.Preemption.Outcomes[0].Victims {
				want = append(want, v.Namespace+"/"+v.Name)
				inShop = inShop && v.Namespace == "shop"
				if !strings.Contains(strings.Join(edited, "\n"), "name: "+v.Name+"\n    namespace: "+v.Namespace) {
					t.Errorf("draw %d: victim %s/%s is not in that namespace in the input", draw, v.Namespace, v.Name)
				}
			}
		}
		if !slices.Equal(doc.Victims, want) || len(want) == 0 {
			t.Errorf("draw %d: victims %v, want the outcome's %v", draw, doc.Victims, want)
		}
		n := cliRun(t, nil, nil, append(args, "-o", "name")...)
		if inShop != (n.code == ExitOK) || (n.code != ExitOK && n.code != ExitUsage) {
			t.Errorf("draw %d: victims %v, -o name exit %d", draw, doc.Victims, n.code)
		}
	}
}
