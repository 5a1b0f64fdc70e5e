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
	if err := PreemptionTable(&b, p, TableOptions{Width: 120}); err != nil {
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
	if err := PreemptionTable(&b, p, TableOptions{Width: 120}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "equal odds (<1% each, 100% together)") {
		t.Errorf("shares of one do not sum to 100%%:\n%s", b.String())
	}
	if lines := strings.Count(out, "\n"); lines > 25 {
		t.Errorf("%d lines for two groups:\n%s", lines, out)
	}
}

// preemptionOf is a prediction whose outcomes are the nodes' victims, each
// node as likely as its weight.
func preemptionOf(outs ...prediction.PreemptionOutcome) *prediction.Prediction {
	pe := &prediction.Preemption{Priority: 1000, PreemptionPolicy: "PreemptLowerPriority", Eligible: true, Outcomes: outs}
	return &prediction.Prediction{Target: prediction.Target{Kind: "Pod", Namespace: "apps", Name: "urgent"}, Preemption: pe}
}

// outcomeOf: node loses n pods of priority prio, each of its own
// ReplicaSet (owner names the set of owners).
func outcomeOf(node string, p float64, n int, prio int32, owner string) prediction.PreemptionOutcome {
	o := prediction.PreemptionOutcome{Node: node, Probability: p}
	for i := range n {
		o.Victims = append(o.Victims, prediction.PreemptionVictim{Namespace: "apps", Name: fmt.Sprintf("%s-%d", node, i), Priority: prio,
			Owner: fmt.Sprintf("ReplicaSet/%s-%d", owner, i), PDBs: []string{}})
	}
	return o
}

func preemptionText(t *testing.T, p *prediction.Prediction, wide bool) string {
	t.Helper()
	var b bytes.Buffer
	if err := PreemptionTable(&b, p, TableOptions{Wide: wide}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// Nodes alike in what an operator decides on (victims, priorities, owner
// kinds, PDB violations) are one section even when their victims belong
// to other ReplicaSets or their odds differ; -o wide shows each set of
// owners.
func TestPreemptionTableGroupsByDecision(t *testing.T) {
	p := preemptionOf(outcomeOf("a", 0.4, 2, 0, "x"), outcomeOf("b", 0.3, 2, 0, "y"), outcomeOf("c", 0.2, 2, 0, "x"), outcomeOf("d", 0.1, 3, 0, "x"))
	out := preemptionText(t, p, false)
	for _, want := range []string{
		"NOMINATED NODE: any of 3 nodes (20% to 40% each, 90% together): on each, 2 victims, 0 PDB violations",
		"On a (elsewhere: same priorities and owner kinds, other owners; -o wide shows all 2):",
		"NOMINATED NODE d (10%): 3 victims",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "apps/b-0") {
		t.Errorf("a grouped node's victims printed:\n%s", out)
	}
	wide := preemptionText(t, p, true)
	for _, want := range []string{"On a (and alike, their own pods of the same owners and budgets, on c):", "On b:", "apps/b-0", "ReplicaSet/y-1"} {
		if !strings.Contains(wide, want) {
			t.Errorf("-o wide: missing %q in\n%s", want, wide)
		}
	}
}

// A list of sections stops after a few with one line for the rest; -o
// wide prints them all. A certain node prints as it always did.
func TestPreemptionTableCutsManySections(t *testing.T) {
	var outs []prediction.PreemptionOutcome
	for i := range 10 {
		outs = append(outs, outcomeOf(fmt.Sprintf("n%d", i), 0.1, i+1, 0, "x"))
	}
	out := preemptionText(t, preemptionOf(outs...), false)
	if got := strings.Count(out, "NOMINATED NODE"); got != sectionsShown {
		t.Errorf("%d sections, want %d:\n%s", got, sectionsShown, out)
	}
	if want := "7 more like these (-o wide for all): nominated nodes with other victims, 7 nodes, 70% together"; !strings.Contains(out, want) {
		t.Errorf("missing %q in\n%s", want, out)
	}
	wide := preemptionText(t, preemptionOf(outs...), true)
	if got := strings.Count(wide, "NOMINATED NODE"); got != 10 || strings.Contains(wide, "more like these") {
		t.Errorf("-o wide prints %d of 10 sections:\n%s", got, wide)
	}
	// Four sections: the fourth costs no more than the line.
	if got := strings.Count(preemptionText(t, preemptionOf(outs[:4]...), false), "NOMINATED NODE"); got != 4 {
		t.Errorf("%d of 4 sections printed", got)
	}
	one := preemptionText(t, preemptionOf(outcomeOf("only", 1, 1, 0, "x")), false)
	if !strings.Contains(one, "NOMINATED NODE only: 1 victim, 0 PDB violations\n") {
		t.Errorf("a certain node:\n%s", one)
	}
}
