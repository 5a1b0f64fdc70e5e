package printer

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// actionLabels are the ACTION column's words.
var actionLabels = map[string]string{
	"evicted":            "evicted at once",
	"evicted-after-wait": "evicted after wait",
	"deleted":            "deleted",
	"skipped":            "skipped",
	"blocking":           "BLOCKING",
	"refused":            "REFUSED",
	"not-evicted":        "not evicted",
}

// DrainTable prints a drain: per node in drain order its pods' actions
// and the verdict (alike nodes after a few counted in one line, unless
// wide), then where the replacements go, then warnings.
func DrainTable(w io.Writer, p *prediction.Prediction, opt TableOptions) error {
	width := opt.width()
	pw := &paragraphs{w: w, width: width}
	d := p.Drain
	pw.field("Drain:", p.Target.Name+" (kubectl cordons every node first, then drains them in this order)")
	pw.field("Rules:", fmt.Sprintf("Kubernetes %s (%s)", p.Rules.KubernetesVersion, p.Rules.VersionSource))
	result := p.Message
	if !p.Certain {
		result += " (uncertain: see below)"
	}
	pw.field("Result:", result)
	drainNodes(pw, d.Nodes, opt)
	replacements(pw, d.Replacements, width)
	if len(d.BrokenBudgets) > 0 {
		list(pw, "!!! --disable-eviction breaks these budgets:", d.BrokenBudgets)
	}
	if len(p.Warnings) > 0 {
		list(pw, "Uncertain / warnings:", p.Warnings)
	}
	return pw.err
}

func drainNode(pw *paragraphs, n prediction.DrainNode, width int) {
	pw.blank()
	head := fmt.Sprintf("NODE %s: %s", n.Node, strings.ToUpper(n.Outcome))
	switch {
	case len(n.Outcomes) > 0:
		head = fmt.Sprintf("NODE %s: %s", n.Node, OutcomeChances(n.Outcomes, true))
	case !n.Certain:
		head += " (uncertain)"
	}
	pw.para(head, "  ")
	if len(n.Pods) == 0 {
		pw.line("  no pods to evict")
	}
	t := grid{header: []string{"  POD", "ACTION", "GRACE", "WHY"}}
	for _, p := range n.Pods {
		grace := fmt.Sprintf("%ds", p.GracePeriodSeconds)
		if p.Action == "skipped" {
			grace = "-"
		}
		t.rows = append(t.rows, []string{"  " + p.Pod, actionLabels[p.Action], grace, p.Why})
	}
	printGrid(pw, t, width)
	if n.Reason != "" && n.Outcome != "drained" {
		pw.para("  Verdict: "+n.Reason, "    ")
	}
	for _, o := range n.Outcomes[min(1, len(n.Outcomes)):] {
		pw.para(fmt.Sprintf("  If %s (%s): %s", strings.ToUpper(o.Outcome), chanceOf(o.Probability), o.Reason), "    ")
	}
}

// OutcomeChances are a race's outcomes with their chances, the likeliest
// first: "drained 50% / blocked 50%" (upper: "DRAINED 50% / ...").
func OutcomeChances(os []prediction.DrainOutcome, upper bool) string {
	words := make([]string, len(os))
	probs := make([]*float64, len(os))
	for i, o := range os {
		words[i], probs[i] = o.Outcome, o.Probability
		if upper {
			words[i] = strings.ToUpper(words[i])
		}
	}
	return chances(words, probs)
}

// chances joins values with their chances, or, where the race was not
// weighed, lists them: "a or b (chances not weighed)".
func chances(values []string, probs []*float64) string {
	if slices.Contains(probs, nil) {
		return strings.Join(values, " or ") + " (chances not weighed)"
	}
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = v + " " + Percent(*probs[i])
	}
	return strings.Join(parts, " / ")
}

// chanceOf is Percent, or "chance not weighed".
func chanceOf(p *float64) string {
	if p == nil {
		return "chance not weighed"
	}
	return Percent(*p)
}

// printGrid truncates the POD column to fit and moves WHY texts that run
// past the width into a numbered legend under the table.
func printGrid(pw *paragraphs, t grid, width int) {
	if len(t.rows) == 0 {
		return
	}
	shortenFirst(&t, width)
	legend := fitLastColumn(&t, width)
	lines, err := tableLines(t)
	if err != nil {
		pw.err = err
		return
	}
	for _, l := range lines {
		pw.line(l)
	}
	for _, l := range legend {
		pw.para("  "+l, "      ")
	}
}

// shortenFirst cuts the first column so that the others keep at least a
// third of the width for the last one.
func shortenFirst(t *grid, width int) {
	limit := max(width/3, 20)
	for _, r := range t.rows {
		if len(r[0]) > limit {
			r[0] = r[0][:limit-1] + "~"
		}
	}
}

func replacements(pw *paragraphs, rs []prediction.DrainReplacement, width int) {
	if len(rs) == 0 {
		return
	}
	pw.blank()
	pw.line("REPLACEMENTS (the scheduler places them on nodes not cordoned):")
	t := grid{header: []string{"  FOR", "OWNER", "NODE", "CANDIDATES / WHY NOT"}}
	for _, r := range rs {
		node, why := r.Node, "on "+nodeList(r.Candidates, 3)
		switch {
		case len(r.Placements) > 0:
			node, why = placementChances(r.Placements), racedWhy(r)
		case node == "":
			node, why = "-", r.Reason+" It stays Pending until capacity is added."
		case len(r.Candidates) > 1:
			node, why = "any of "+fmt.Sprint(len(r.Candidates)), nodeList(r.Candidates, 3)+" (the scheduler's scoring picks)"
		}
		if !r.Certain && r.Node != "" && len(r.Candidates) <= 1 && len(r.Placements) == 0 {
			node += " (uncertain)"
		}
		t.rows = append(t.rows, []string{"  " + r.For, r.Owner, node, why})
	}
	printGrid(pw, t, width)
}

// placementChances are a raced replacement's nodes with their chances:
// "node-3 50% / - 50%", and what is left "not created".
func placementChances(ps []prediction.DrainPlacement) string {
	nodes := make([]string, len(ps))
	probs := make([]*float64, len(ps))
	total := 0.0
	for i, p := range ps {
		nodes[i], probs[i] = cmp.Or(p.Node, "-"), p.Probability
		if p.Probability != nil {
			total += *p.Probability
		}
	}
	if !slices.Contains(probs, nil) && total < 1-1e-9 {
		rest := 1 - total
		nodes, probs = append(nodes, "not created"), append(probs, &rest)
	}
	return chances(nodes, probs)
}

// racedWhy says what decides a raced replacement's node.
func racedWhy(r prediction.DrainReplacement) string {
	var parts []string
	if len(r.Candidates) > 0 {
		parts = append(parts, "on "+nodeList(r.Candidates, 3))
	}
	total := 0.0
	for _, p := range r.Placements {
		if p.Node == "" && p.Reason != "" {
			parts = append(parts, "Pending: "+p.Reason)
		}
		if p.Probability != nil {
			total += *p.Probability
		}
	}
	why := "a race (kubectl evicts in parallel: the order in which the scheduler gets the replacements decides): " + strings.Join(parts, "; else ")
	if total > 0 && total < 1-1e-9 {
		why += " (created only in the branches that evict its pod)"
	}
	return why
}
