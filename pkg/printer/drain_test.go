package printer

import (
	"strings"
	"testing"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

func raceDrain(weighed bool) *prediction.Prediction {
	p := func(x float64) *float64 {
		if !weighed {
			return nil
		}
		return &x
	}
	return &prediction.Prediction{Target: prediction.Target{Kind: prediction.KindDrain, Name: "node-2"}, Message: "1 node(s)",
		Drain: &prediction.Drain{
			Nodes: []prediction.DrainNode{{Node: "node-2", Outcome: "drained", Evicted: []string{"default/pod-b"},
				Pods:     []prediction.DrainPod{{Pod: "default/pod-b", Action: "evicted"}},
				Outcomes: []prediction.DrainOutcome{{Outcome: "drained", Probability: p(0.75)}, {Outcome: "blocked", Probability: p(0.25), Reason: "never leave: default/pod-b"}}}},
			Replacements: []prediction.DrainReplacement{{For: "default/pod-b", Owner: "Deployment/web", Node: "node-3", Candidates: []string{"node-3"},
				Placements: []prediction.DrainPlacement{{Node: "node-3", Probability: p(0.5)}, {Node: "", Probability: p(0.25), Reason: "0/3 nodes are available."}}}},
		}}
}

// A race prints each outcome and node with its chance (the scale-in's
// Percent), the other outcomes' reasons, and what is left as not created.
func TestDrainTableRace(t *testing.T) {
	var b strings.Builder
	if err := DrainTable(&b, raceDrain(true), TableOptions{Width: 120}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NODE node-2: DRAINED 75% / BLOCKED 25%", "If BLOCKED (25%): never leave: default/pod-b",
		"node-3 50% / - 25% / not created 25%", "else Pending: 0/3 nodes are available."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "(uncertain)") {
		t.Errorf("a race marked (uncertain) instead of its chances:\n%s", b.String())
	}
}

// Too many orders to weigh: the outcomes and nodes met, without chances.
func TestDrainTableRaceUnweighed(t *testing.T) {
	var b strings.Builder
	if err := DrainTable(&b, raceDrain(false), TableOptions{Width: 120}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"NODE node-2: DRAINED or BLOCKED (chances not weighed)", "If BLOCKED (chance not weighed)", "node-3 or - (chances not weighed)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}
