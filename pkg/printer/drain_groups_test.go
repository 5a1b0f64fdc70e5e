package printer

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

func drainText(t *testing.T, p *prediction.Prediction, wide bool) string {
	t.Helper()
	var b bytes.Buffer
	if err := DrainTable(&b, p, TableOptions{Wide: wide}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Drained nodes whose pods go alike print a few sections and one line for
// the rest; a blocked node always prints; -o wide prints every node.
func TestDrainTableCutsAlikeNodes(t *testing.T) {
	d := &prediction.Drain{}
	for i := range 10 {
		node := fmt.Sprintf("node-%d", i)
		n := prediction.DrainNode{Node: node, Outcome: "drained", Certain: true, Pods: []prediction.DrainPod{
			{Pod: "apps/" + node + "-a", Action: "evicted", GracePeriodSeconds: 30, Why: fmt.Sprintf("PDB a: %d disruption(s) allowed", 10-i)}}}
		if i == 7 {
			n.Outcome, n.Reason = "blocked", "the budget allows no disruption"
			n.Pods[0].Action = "blocking"
		}
		d.Nodes = append(d.Nodes, n)
	}
	p := &prediction.Prediction{Target: prediction.Target{Kind: prediction.KindDrain, Name: "node-0,..."}, Certain: true, Drain: d}
	out := drainText(t, p, false)
	for _, want := range []string{"NODE node-2: DRAINED", "NODE node-7: BLOCKED",
		"6 more like these (-o wide for all): node-3, node-4, node-5, +3 more, each DRAINED with its pods acted on as on node-0"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "NODE node-3") {
		t.Errorf("a fourth alike node printed:\n%s", out)
	}
	wide := drainText(t, p, true)
	if got := strings.Count(wide, "\nNODE "); got != 10 || strings.Contains(wide, "more like these") {
		t.Errorf("-o wide prints %d of 10 nodes:\n%s", got, wide)
	}
	d.Nodes = d.Nodes[:4]
	if got := strings.Count(drainText(t, p, false), "\nNODE "); got != 4 {
		t.Errorf("%d of 4 nodes printed: the fourth costs no more than the line", got)
	}
}
