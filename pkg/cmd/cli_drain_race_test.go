package cmd

import (
	"os"
	"strings"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// examples/disruptions.yaml is the walk-through of the Kubernetes docs'
// disruptions page; docs/drain.md shows these commands and their output.
const disruptionsFile = "../../examples/disruptions.yaml"

var disruptionsCommands = []struct{ golden, args string }{
	{"drain_disruptions_node1", "drain node-1"},
	{"drain_disruptions", "drain node-1 node-2"},
}

// The table of each command is its golden file, and docs/drain.md shows
// exactly that output under exactly that command.
func TestDrainDocsWalkthroughOutput(t *testing.T) {
	doc, err := os.ReadFile("../../docs/drain.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range disruptionsCommands {
		t.Run(c.golden, func(t *testing.T) {
			r := cliRun(t, nil, nil, append(strings.Fields(c.args), "-f", disruptionsFile, "--now", liveNowFlag)...)
			wantLayout(t, r, c.golden, 120)
			block := "$ kubectl scale-preview " + c.args + " -f examples/disruptions.yaml\n" + r.stdout + "```"
			if !strings.Contains(string(doc), block) {
				t.Errorf("docs/drain.md does not show the output of %q as it is:\n%s", c.args, block)
			}
		})
	}
}

// At 80 columns the race's chances and the other branch's verdict fit.
func TestDrainDocsWalkthrough80(t *testing.T) {
	defer func(w int) { cliWidth = w }(cliWidth)
	cliWidth = 80
	r := cliRun(t, nil, nil, "drain", "node-1", "node-2", "-f", disruptionsFile, "--now", liveNowFlag)
	wantLayout(t, r, "layout_drain_disruptions_80", 80)
}

// drain node-1 node-2: node-1 drains; node-2 drains or blocks, half the
// time each, as pod-a's and pod-x's replacements race for node-3.
func TestDrainDocsWalkthroughJSON(t *testing.T) {
	r := cliRun(t, nil, nil, "drain", "node-1", "node-2", "-f", disruptionsFile, "--now", liveNowFlag, "-o", "json")
	wantExit(t, r, ExitOK)
	p := decode(t, r.stdout)
	n1, n2 := p.Drain.Nodes[0], p.Drain.Nodes[1]
	if n1.Outcome != "drained" || !n1.Certain || n1.Outcomes != nil {
		t.Errorf("node-1: %+v", n1)
	}
	if n2.Outcome != "drained" || n2.Certain || p.Certain || len(n2.Outcomes) != 2 || !outcomeIs(n2.Outcomes[0], "drained", 0.5) || !outcomeIs(n2.Outcomes[1], "blocked", 0.5) {
		t.Errorf("node-2: %+v", n2)
	}
	if !strings.Contains(p.Message, "node-2 drained 50% / blocked 50%") {
		t.Errorf("message %q", p.Message)
	}
	for _, rep := range p.Drain.Replacements {
		var sum float64
		for _, pl := range rep.Placements {
			sum += *pl.Probability
		}
		want := map[string]float64{"default/pod-a": 1, "default/pod-x": 1, "default/pod-b": 0.5}[rep.For]
		if rep.Certain || sum != want || rep.Node != rep.Placements[0].Node {
			t.Errorf("replacement of %s: node %q, placements %+v (sum %v, want %v)", rep.For, rep.Node, rep.Placements, sum, want)
		}
	}
}

func outcomeIs(o prediction.DrainOutcome, outcome string, p float64) bool {
	return o.Outcome == outcome && o.Probability != nil && *o.Probability == p
}
