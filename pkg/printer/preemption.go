package printer

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// PreemptionTable prints a pending pod's preemption: the verdict, the
// nominated node(s) with their victims, why the node won, the excluded
// nodes by reason, then warnings.
func PreemptionTable(w io.Writer, p *prediction.Prediction, width int) error {
	if width <= 0 {
		width = 120
	}
	pw := &paragraphs{w: w, width: width}
	pe := p.Preemption
	class := ""
	if pe.PriorityClass != "" {
		class = " (" + pe.PriorityClass + ")"
	}
	pw.field("Pod:", fmt.Sprintf("%s/%s, priority %d%s, preemptionPolicy %s", p.Target.Namespace, p.Target.Name, pe.Priority, class, pe.PreemptionPolicy))
	pw.field("Rules:", "kube-scheduler "+p.Rules.KubernetesVersion+" DefaultPreemption ("+p.Rules.VersionSource+")")
	pw.field("Result:", p.Message)
	for _, g := range groupOutcomes(pe.Outcomes) {
		pw.blank()
		o := g.first
		if len(g.nodes) > 1 {
			outcomeGroup(pw, g)
			victimRows(pw, o.Victims, width)
			continue
		}
		head := fmt.Sprintf("NOMINATED NODE %s", o.Node)
		if len(pe.Outcomes) > 1 || o.Probability < 1 {
			head += " (" + Percent(o.Probability) + ")"
		}
		head += fmt.Sprintf(": %s, %s", plural(len(o.Victims), "victim"), plural(o.PDBViolations, "PDB violation"))
		pw.para(head, "  ")
		victimRows(pw, o.Victims, width)
	}
	if ru := pe.RunnerUp; ru != nil && len(pe.Outcomes) > 0 {
		pw.blank()
		if ru.Criterion == "" {
			pw.para(fmt.Sprintf("Why %s: it ties %s on every criterion; the scheduler takes either.", pe.Outcomes[0].Node, ru.Node), "  ")
		} else {
			tie := ""
			if ru.Criterion != prediction.PreemptionCriteria[0] {
				tie = "; the criteria before it tie"
			}
			pw.para(fmt.Sprintf("Why %s: it beats the runner-up %s on %s (%s vs %s)%s.", pe.Outcomes[0].Node, ru.Node, ru.Criterion, ru.Nominated, ru.Other, tie), "  ")
		}
	}
	if len(pe.Excluded) > 0 {
		pw.blank()
		pw.line(fmt.Sprintf("Not candidates (%s):", plural(len(pe.Excluded), "node")))
		for _, g := range groupExcluded(pe.Excluded) {
			pw.para(fmt.Sprintf("  %d: %s (%s)", len(g.nodes), g.reason, nodeList(g.nodes, 3)), "     ")
		}
	}
	if len(p.Warnings) > 0 {
		list(pw, "Uncertain / warnings:", groupNodeWarnings(p.Warnings))
	}
	return pw.err
}

// groupNodeWarnings joins warnings that say the same of different nodes
// ("on node NAME ..."), where the first of them stood.
func groupNodeWarnings(ws []string) []string {
	const prefix = "on node "
	var out []string
	nodes := map[string][]string{} // the rest of the warning -> its nodes
	at := map[string]int{}
	for _, w := range ws {
		node, rest, ok := strings.Cut(strings.TrimPrefix(w, prefix), " ")
		if !strings.HasPrefix(w, prefix) || !ok {
			out = append(out, w)
			continue
		}
		if _, seen := at[rest]; !seen {
			at[rest] = len(out)
			out = append(out, w)
		}
		nodes[rest] = append(nodes[rest], node)
	}
	for rest, ns := range nodes {
		if len(ns) > 1 {
			out[at[rest]] = fmt.Sprintf("on %d nodes (%s) %s", len(ns), nodeList(ns, 3), rest)
		}
	}
	return out
}

// outcomeGroup heads equally likely nominated nodes whose victims look
// alike, then names the first node whose victims follow.
func outcomeGroup(pw *paragraphs, g outcomeGroupOf) {
	o := g.first
	pw.para(fmt.Sprintf("NOMINATED NODE: any of %d nodes, equal odds (%s each, %s together): on each, %s, %s", len(g.nodes),
		Percent(o.Probability), Percent(g.total), plural(len(o.Victims), "victim"), plural(o.PDBViolations, "PDB violation")), "  ")
	pw.para("  Nodes: "+nodeList(g.nodes, 3), "    ")
	if len(o.Victims) > 0 {
		pw.para(fmt.Sprintf("  On %s (on each other node its own pods of the same priorities, owners and budgets):", o.Node), "    ")
	}
}

// outcomeGroupOf is nominated nodes with the same odds and victims alike.
type outcomeGroupOf struct {
	first prediction.PreemptionOutcome
	nodes []string
	total float64
}

// groupOutcomes groups outcomes of equal probability whose victims have
// the same priorities, owners and budgets, in the order of their first
// member; a large cluster of identical nodes is one group, not thousands.
func groupOutcomes(outs []prediction.PreemptionOutcome) []outcomeGroupOf {
	var groups []outcomeGroupOf
	index := map[string]int{}
	for _, o := range outs {
		key := outcomeShape(o)
		i, ok := index[key]
		if !ok || !sameOdds(groups[i].first.Probability, o.Probability) {
			groups = append(groups, outcomeGroupOf{first: o})
			i = len(groups) - 1
			index[key] = i
		}
		groups[i].nodes = append(groups[i].nodes, o.Node)
		groups[i].total += o.Probability
	}
	for i := range groups {
		if sameOdds(groups[i].total, 1) {
			groups[i].total = 1 // a sum of shares of one
		}
	}
	return groups
}

// sameOdds: probabilities summed over the scheduler's offsets differ only
// by rounding.
func sameOdds(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(a, b) }

func outcomeShape(o prediction.PreemptionOutcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d|", o.PDBViolations)
	for _, v := range o.Victims {
		fmt.Fprintf(&b, "%s|%d|%s|%s|%t;", v.Namespace, v.Priority, v.Owner, strings.Join(v.PDBs, ","), v.ViolatesPDB)
	}
	return b.String()
}

func victimRows(pw *paragraphs, vs []prediction.PreemptionVictim, width int) {
	if len(vs) == 0 {
		return
	}
	rows := [][]string{{"  VICTIM", "PRIORITY", "OWNER", "PDB"}}
	for _, v := range vs {
		pdb := "-"
		if len(v.PDBs) > 0 {
			pdb = strings.Join(v.PDBs, ",")
			if v.ViolatesPDB {
				pdb += " (violated)"
			}
		}
		rows = append(rows, []string{"  " + v.Namespace + "/" + v.Name, fmt.Sprint(v.Priority), orDash(v.Owner), pdb})
	}
	fitColumns(rows, width)
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(c + strings.Repeat(" ", widths[i]-len(c)+2))
		}
		pw.line(b.String())
	}
}

// fitColumns shortens the widest cells (name, owner, PDB) until a row fits.
func fitColumns(rows [][]string, width int) {
	limits := []int{48, 10, 32, 28}
	for {
		total := 0
		widest, at := 0, -1
		for i := range rows[0] {
			w := 0
			for _, r := range rows {
				w = max(w, len(r[i]))
			}
			total += w + 2
			if i != 1 && w > widest {
				widest, at = w, i
			}
		}
		if total-2 <= width || widest <= 8 {
			break
		}
		limits[at] = widest - 1
		for _, r := range rows {
			if len(r[at]) > limits[at] {
				r[at] = r[at][:limits[at]-1] + "~"
			}
		}
	}
}

type excludedGroup struct {
	reason string
	nodes  []string
}

func groupExcluded(ex []prediction.ExcludedNode) []excludedGroup {
	var out []excludedGroup
	for _, e := range ex {
		i := slices.IndexFunc(out, func(g excludedGroup) bool { return g.reason == e.Reason })
		if i < 0 {
			out = append(out, excludedGroup{reason: e.Reason})
			i = len(out) - 1
		}
		out[i].nodes = append(out[i].nodes, e.Node)
	}
	slices.SortStableFunc(out, func(a, b excludedGroup) int { return len(b.nodes) - len(a.nodes) })
	return out
}

func nodeList(nodes []string, most int) string {
	if len(nodes) <= most {
		return strings.Join(nodes, ", ")
	}
	return strings.Join(nodes[:most], ", ") + fmt.Sprintf(", +%d more", len(nodes)-most)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
