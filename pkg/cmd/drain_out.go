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
		for _, p := range n.Pods {
			dn.Pods = append(dn.Pods, prediction.DrainPod{Pod: p.Pod, Action: p.Action, PDB: p.PDB, Why: p.Why,
				GracePeriodSeconds: p.GracePeriodSeconds, WaitsFor: p.WaitsFor})
		}
		d.Nodes = append(d.Nodes, dn)
	}
	for _, r := range res.Replacements {
		d.Replacements = append(d.Replacements, prediction.DrainReplacement{For: r.For, Owner: r.Owner, Node: r.Node, Reason: r.Reason,
			Candidates: r.Candidates, Certain: r.Certain})
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
	p.Message = drainMessage(res)
	return p
}

// drainMessage sums the outcomes up in one sentence.
func drainMessage(res *drain.Result) string {
	if len(res.Nodes) == 0 {
		return "no node matches the selector: kubectl drain does nothing"
	}
	count := map[string]int{}
	for _, n := range res.Nodes {
		count[n.Outcome]++
	}
	var parts []string
	for _, o := range []string{drain.OutcomeDrained, drain.OutcomeBlocked, drain.OutcomeRefused} {
		if count[o] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[o], o))
		}
	}
	return fmt.Sprintf("%d node(s): %s; %d pod(s) removed", len(res.Nodes), strings.Join(parts, ", "), len(res.Victims))
}

// printDrain prints the document in the chosen format.
func (o *DrainOptions) printDrain(pred *prediction.Prediction) error {
	return o.printWith(pred, func() error {
		return printer.DrainTable(o.Out, pred, printer.TableOptions{Wide: *o.PrintFlags.OutputFormat == "wide", Width: o.width(o.Out)})
	})
}
