package cmd

import (
	"fmt"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/outage"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/printer"
)

// outagePrediction renders the result as the plugin's document.
func outagePrediction(res *outage.Result, nodes []string, o *OutageOptions, info prediction.RulesInfo) *prediction.Prediction {
	set := o.settings()
	out := &prediction.Outage{Condition: set.Condition, Assumed: prediction.OutageSettings{
		NodeMonitorGracePeriodSeconds: set.NodeMonitorGracePeriod.Seconds(), NodeMonitorPeriodSeconds: set.NodeMonitorPeriod.Seconds(),
		NodeEvictionRate: set.NodeEvictionRate, SecondaryNodeEvictionRate: set.SecondaryNodeEvictionRate, UnhealthyZoneThreshold: set.UnhealthyZoneThreshold,
		LargeClusterSizeThreshold: set.LargeClusterSizeThreshold, LeaseRenewIntervalSeconds: set.LeaseRenewInterval.Seconds()}}
	for _, n := range res.Nodes {
		out.Nodes = append(out.Nodes, prediction.OutageNode{Node: n.Node, Zone: n.Zone, TaintedAfterSeconds: pair(n.Tainted), Taint: n.Taint,
			Reason: n.Reason, Excluded: n.Excluded, Certain: n.Certain})
	}
	for _, z := range res.Zones {
		out.Zones = append(out.Zones, prediction.OutageZone{Zone: z.Zone, State: z.State, Passes: z.Passes, Nodes: z.Nodes, NotReady: z.NotReady,
			Failed: z.Failed, Rate: z.Rate})
	}
	for _, p := range res.Pods {
		out.Pods = append(out.Pods, prediction.OutagePod{Pod: p.Pod, Node: p.Node, Fate: p.Fate, DeletedAfterSeconds: pair(p.Deleted),
			TerminatingAfterSeconds: pair(p.Terminating), Toleration: p.Toleration, Reason: p.Reason, Owner: p.Owner, Replaced: p.Replaced, Certain: p.Certain})
	}
	for _, r := range res.Replacements {
		at := r.At
		out.Replacements = append(out.Replacements, prediction.OutageReplacement{For: r.For, Owner: r.Owner, Node: r.Node, Candidates: r.Candidates,
			Reason: r.Reason, AtSeconds: pair(&at), Certain: r.Certain})
	}
	for _, w := range res.Workloads {
		out.Workloads = append(out.Workloads, prediction.OutageWorkload{Kind: w.Kind, Name: w.Name, Replicas: w.Replicas, AvailableMin: w.AvailableMin,
			ReachesZero: w.ReachesZero, BudgetBroken: w.BudgetBroken, BrokenFrom: w.BrokenFrom, BrokenUntil: w.BrokenUntil, Budgets: w.Budgets})
	}
	for _, b := range res.Budgets {
		out.Budgets = append(out.Budgets, prediction.OutageBudget{Name: b.Name, DesiredHealthy: b.DesiredHealthy, HealthyMin: b.HealthyMin,
			Broken: b.Broken, BrokenFrom: b.BrokenFrom, BrokenUntil: b.BrokenUntil})
	}
	info.KubernetesVersion = fmt.Sprintf("1.%d", o.minor)
	info.FeatureGates = set.Gates
	name := strings.Join(nodes, ",")
	switch {
	case o.Zone != "":
		name = "zone " + o.Zone
	case o.Selector != "":
		name = o.Selector
	}
	return &prediction.Prediction{Target: prediction.Target{Kind: prediction.KindOutage, Name: name}, ReferenceTime: o.now, Rules: info,
		Certain: res.Certain, Victims: res.Victims, Outage: out, Warnings: append(res.Uncertain, res.Warnings...), Message: outageMessage(res)}
}

// pair is a window as [min, max] rounded to 0.1 s; nil stays null.
func pair(w *outage.Window) []float64 {
	if w == nil {
		return nil
	}
	r := func(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }
	return []float64{r(w.Min), r(w.Max)}
}

// outageMessage sums the outcome up in one sentence.
func outageMessage(res *outage.Result) string {
	if len(res.Nodes) == 0 {
		return "no node matches the selector: nothing fails"
	}
	count := map[string]int{}
	for _, p := range res.Pods {
		count[p.Fate]++
	}
	zero := 0
	for _, w := range res.Workloads {
		if w.ReachesZero {
			zero++
		}
	}
	unplaced := 0
	for _, r := range res.Replacements {
		if r.Node == "" {
			unplaced++
		}
	}
	return fmt.Sprintf("%d node(s) fail: %d pod(s) deleted, %d stuck Terminating, %d stay; %d replacement(s), %d fit nowhere; %d workload(s) reach 0 available",
		len(res.Nodes), count[outage.FateDeleted], count[outage.FateStuck], count[outage.FateStays], len(res.Replacements), unplaced, zero)
}

// printOutage prints the document in the chosen format.
func (o *OutageOptions) printOutage(pred *prediction.Prediction) error {
	return o.printWith(pred, func() error {
		return printer.OutageTable(o.Out, pred, printer.TableOptions{Wide: *o.PrintFlags.OutputFormat == "wide", Width: o.width(o.Out)})
	})
}
