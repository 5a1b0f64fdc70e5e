package perf

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/preemption"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/source"
	"github.com/scale-preview/scale-preview/test/internal/preemptjudge"
	"github.com/scale-preview/scale-preview/test/versions/oraclegen/preemptgen"
)

// The cluster file reader trims bound pods to what the scheduler reads:
// on preemptgen's random scenarios (the ones the real schedulers answered
// in test/inprocess and the recorded oracles), predicting from the
// scenario written as a file and read back must give exactly the answer
// predicted on the whole objects.
func TestTrimmedClusterKeepsPreemption(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 100
	}
	dir := t.TempDir()
	compared, preempting := 0, 0
	for seed := uint64(1); seed <= uint64(n); seed++ {
		sc := preemptgen.Generate(seed, rules.Newest)
		whole, err := preemptjudge.Decode(sc)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		want, err := preemptjudge.Predict(whole, rules.Newest)
		if err != nil {
			continue // the model refuses the scenario whole: nothing to compare
		}
		file := filepath.Join(dir, fmt.Sprintf("seed-%d.json", seed))
		if err := writeList(file, whole); err != nil {
			t.Fatal(err)
		}
		cl, err := source.ReadClusterFiles([]string{file}, nil, "default")
		if err != nil {
			t.Fatalf("seed %d: read back: %v", seed, err)
		}
		i := slices.IndexFunc(cl.Pods, func(p *corev1.Pod) bool {
			return p.Namespace == whole.Preemptor.Namespace && p.Name == whole.Preemptor.Name
		})
		if i < 0 {
			t.Fatalf("seed %d: the pending pod is not read back", seed)
		}
		got, err := preemption.Predict(preemption.Input{Nodes: cl.Nodes, Pods: cl.Pods, PDBs: cl.PDBs,
			Preemptor: cl.Pods[i].DeepCopy(), Rules: rules.Scheduler(rules.Newest, nil)})
		if err != nil {
			t.Fatalf("seed %d: trimmed: %v", seed, err)
		}
		if w, g := render(want), render(got); w != g {
			t.Errorf("seed %d (%s): whole pods:\n%s\ntrimmed pods:\n%s", seed, sc.What, w, g)
		}
		compared++
		if len(want.Outcomes) > 0 {
			preempting++
		}
	}
	if compared < n/2 || preempting == 0 {
		t.Fatalf("only %d scenarios compared, %d preempting", compared, preempting)
	}
	t.Logf("%d scenarios compared (%d preempt), whole and trimmed pods agree", compared, preempting)
}

// writeList writes the scenario as kubectl prints a List.
func writeList(name string, c *preemptjudge.Cluster) error {
	var items []any
	for _, n := range c.Nodes {
		n := n.DeepCopy()
		n.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}
		items = append(items, n)
	}
	for _, p := range append(slices.Clone(c.Pods), c.Preemptor) {
		p := p.DeepCopy()
		p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
		items = append(items, p)
	}
	for _, b := range c.PDBs {
		b := b.DeepCopy()
		b.TypeMeta = metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"}
		items = append(items, b)
	}
	b, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items})
	if err != nil {
		return err
	}
	return os.WriteFile(name, b, 0o644)
}

// render is everything a prediction says, with victims by name.
func render(r *preemption.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "eligible %t %q; fits %v; potential %d tried %d; certain %t\n", r.Eligible, r.Reason, r.FitsOn, r.PotentialNodes, r.Tried, r.Certain)
	for _, o := range r.Outcomes {
		fmt.Fprintf(&b, "  %s %.12f violations %d:", o.Node, o.Probability, o.PDBViolations)
		for _, v := range o.Victims {
			fmt.Fprintf(&b, " %s/%s(%d %v %t)", v.Pod.Namespace, v.Pod.Name, v.Priority, v.PDBs, v.Violates)
		}
		b.WriteByte('\n')
	}
	for _, node := range slices.Sorted(mapKeys(r.Excluded)) {
		fmt.Fprintf(&b, "  excluded %s: %s\n", node, r.Excluded[node])
	}
	for _, u := range r.Uncertain {
		fmt.Fprintf(&b, "  uncertain: %s\n", u)
	}
	return b.String()
}

func mapKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
