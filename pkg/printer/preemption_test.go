package printer

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// A chance that is neither none nor certain never prints as 0% or 100%.
func TestPercentNeverRoundsAChanceAway(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{{0, "0%"}, {0.0002, "<1%"}, {0.0099, "<1%"}, {0.01, "1%"}, {0.5, "50%"}, {0.99, "99%"}, {0.995, ">99%"}, {1, "100%"}} {
		if got := Percent(c.x); got != c.want {
			t.Errorf("Percent(%v) = %s, want %s", c.x, got, c.want)
		}
	}
}

// Equally likely nodes whose victims look alike print as one section; a
// node whose victims differ keeps its own.
func TestPreemptionTableGroupsAlikeOutcomes(t *testing.T) {
	pe := &prediction.Preemption{Priority: 1000, PreemptionPolicy: "PreemptLowerPriority", Eligible: true}
	victims := func(node string, prio int32) []prediction.PreemptionVictim {
		var out []prediction.PreemptionVictim
		for i := range 2 {
			out = append(out, prediction.PreemptionVictim{Namespace: "apps", Name: fmt.Sprintf("%s-pod-%d", node, i), Priority: prio,
				Owner: fmt.Sprintf("ReplicaSet/app-%d", i), PDBs: []string{}})
		}
		return out
	}
	const n = 400
	for i := range n {
		node := fmt.Sprintf("node-%03d", i)
		pe.Outcomes = append(pe.Outcomes, prediction.PreemptionOutcome{Node: node, Probability: 0.9 / n, Victims: victims(node, 0)})
	}
	pe.Outcomes = append(pe.Outcomes, prediction.PreemptionOutcome{Node: "odd", Probability: 0.1, Victims: victims("odd", 5)})
	p := &prediction.Prediction{Target: prediction.Target{Kind: "Pod", Namespace: "apps", Name: "urgent"}, Preemption: pe}
	for i := range n {
		p.Warnings = append(p.Warnings, fmt.Sprintf("on node node-%03d pods of equal priority compete", i))
	}
	p.Warnings = append(p.Warnings, "on node odd something else")
	var b bytes.Buffer
	if err := PreemptionTable(&b, p, 120); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"NOMINATED NODE: any of 400 nodes, equal odds (<1% each, 90% together): on each, 2 victims, 0 PDB violations",
		"Nodes: node-000, node-001, node-002, +397 more",
		"apps/node-000-pod-1",
		"NOMINATED NODE odd (10%): 2 victims",
		"on 400 nodes (node-000, node-001, node-002, +397 more) pods of equal priority compete",
		"on node odd something else",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "node-001-pod") || strings.Contains(out, "(0%)") {
		t.Errorf("a grouped node's victims or a 0%% chance printed:\n%s", out)
	}
	pe.Outcomes = pe.Outcomes[:n]
	for i := range pe.Outcomes {
		pe.Outcomes[i].Probability = 1.0 / n
	}
	b.Reset()
	if err := PreemptionTable(&b, p, 120); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "equal odds (<1% each, 100% together)") {
		t.Errorf("shares of one do not sum to 100%%:\n%s", b.String())
	}
	if lines := strings.Count(out, "\n"); lines > 25 {
		t.Errorf("%d lines for two groups:\n%s", lines, out)
	}
}
