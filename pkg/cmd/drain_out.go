package cmd

import (
	"fmt"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/drain"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/printer"
	"github.com/scale-preview/scale-preview/pkg/rules"
)

// drainPrediction renders the result as the plugin's document.
func drainPrediction(res *drain.Result, nodes []string, o *DrainOptions, info prediction.RulesInfo) *prediction.Prediction {
	d := &prediction.Drain{BrokenBudgets: res.BrokenBudgets}
	for _, n := range res.Nodes {
		dn := prediction.DrainNode{Node: n.Node, Outcome: n.Outcome, Evicted: n.Evicted, Remaining: n.Remaining, Skipped: n.Skipped,
			Certain: n.Certain, Reason: n.Reason}
		for _, c := range n.Outcomes {
			dn.Outcomes = append(dn.Outcomes, prediction.DrainOutcome{Outcome: c.Value, Probability: chance(c, res), Reason: c.Reason})
		}
		for _, p := range n.Pods {
			dn.Pods = append(dn.Pods, prediction.DrainPod{Pod: p.Pod, Action: p.Action, PDB: p.PDB, Why: p.Why,
				GracePeriodSeconds: p.GracePeriodSeconds, WaitsFor: p.WaitsFor})
		}
		d.Nodes = append(d.Nodes, dn)
	}
	for _, r := range res.Replacements {
		dr := prediction.DrainReplacement{For: r.For, Owner: r.Owner, Node: r.Node, Reason: r.Reason, Candidates: r.Candidates, Certain: r.Certain}
		for _, c := range r.Placements {
			dr.Placements = append(dr.Placements, prediction.DrainPlacement{Node: c.Value, Probability: chance(c, res), Reason: c.Reason})
		}
		d.Replacements = append(d.Replacements, dr)
	}
	info.KubernetesVersion = fmt.Sprintf("1.%d", o.minor)
	info.FeatureGates = rules.Scheduler(o.minor, o.gates).Gates
	for name, on := range rules.Disruption(o.minor, o.gates).Gates {
		info.FeatureGates[name] = on
	}
	name := strings.Join(nodes, ",")
	if o.Selector != "" {
		name = o.Selector
	}
	p := &prediction.Prediction{Target: prediction.Target{Kind: prediction.KindDrain, Name: name}, ReferenceTime: o.now, Rules: info,
		Certain: res.Certain, Victims: res.Victims, Drain: d, Warnings: append(res.Uncertain, res.Warnings...)}
	p.Message = drainMessage(d, len(res.Victims))
	return p
}

// chance is a branch's chance, nil when the races were not weighed.
func chance(c drain.Chance, res *drain.Result) *float64 {
	if res.Unweighed {
		return nil
	}
	p := c.P
	return &p
}

// drainMessage sums the outcomes up in one sentence; a node whose
// outcome is a race gives its chances.
func drainMessage(d *prediction.Drain, victims int) string {
	if len(d.Nodes) == 0 {
		return "no node matches the selector: kubectl drain does nothing"
	}
	count := map[string]int{}
	var raced []string
	for _, n := range d.Nodes {
		if len(n.Outcomes) > 0 {
			raced = append(raced, n.Node+" "+printer.OutcomeChances(n.Outcomes, false))
			continue
		}
		count[n.Outcome]++
	}
	var parts []string
	for _, o := range []string{drain.OutcomeDrained, drain.OutcomeBlocked, drain.OutcomeRefused} {
		if count[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[o], o))
		}
	}
	removed := fmt.Sprintf("%d pod(s) removed", victims)
	if len(raced) > 0 {
		parts = append(parts, strings.Join(raced, ", "))
		removed += " in the likeliest branch"
	}
	return fmt.Sprintf("%d node(s): %s; %s", len(d.Nodes), strings.Join(parts, ", "), removed)
}

// printDrain prints the document in the chosen format.
func (o *DrainOptions) printDrain(pred *prediction.Prediction) error {
	return o.printWith(pred, func() error {
		return printer.DrainTable(o.Out, pred, printer.TableOptions{Wide: *o.PrintFlags.OutputFormat == "wide", Width: o.width(o.Out)})
	})
}
