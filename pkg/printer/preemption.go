package printer

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// PreemptionTable prints a pending pod's preemption: the verdict, the
// nominated node(s) with their victims (alike nodes grouped, see
// nominations), why the node won, the excluded nodes by reason, then
// warnings. -o wide lists every section and every node.
func PreemptionTable(w io.Writer, p *prediction.Prediction, opt TableOptions) error {
	pw := &paragraphs{w: w, width: opt.width()}
	pe := p.Preemption
	class := ""
	if pe.PriorityClass != "" {
		class = " (" + pe.PriorityClass + ")"
	}
	pw.field("Pod:", fmt.Sprintf("%s/%s, priority %d%s, preemptionPolicy %s", p.Target.Namespace, p.Target.Name, pe.Priority, class, pe.PreemptionPolicy))
	pw.field("Rules:", "kube-scheduler "+p.Rules.KubernetesVersion+" DefaultPreemption ("+p.Rules.VersionSource+")")
	pw.field("Result:", p.Message)
	nominations(pw, pe.Outcomes, opt)
	whyNominated(pw, pe)
	if len(pe.Excluded) > 0 {
		pw.blank()
		pw.line(fmt.Sprintf("Not candidates (%s):", plural(len(pe.Excluded), "node")))
		for _, g := range groupExcluded(pe.Excluded) {
			pw.para(fmt.Sprintf("  %d: %s (%s)", len(g.nodes), g.reason, nodeList(g.nodes, opt.names())), "     ")
		}
	}
	if len(p.Warnings) > 0 {
		list(pw, "Uncertain / warnings:", groupNodeWarnings(p.Warnings, opt.names()))
	}
	return pw.err
}

// whyNominated names the criterion that beat the runner-up.
func whyNominated(pw *paragraphs, pe *prediction.Preemption) {
	ru := pe.RunnerUp
	if ru == nil || len(pe.Outcomes) == 0 {
		return
	}
	pw.blank()
	if ru.Criterion == "" {
		pw.para(fmt.Sprintf("Why %s: it ties %s on every criterion; the scheduler takes either.", pe.Outcomes[0].Node, ru.Node), "  ")
		return
	}
	tie := ""
	if ru.Criterion != prediction.PreemptionCriteria[0] {
		tie = "; the criteria before it tie"
	}
	pw.para(fmt.Sprintf("Why %s: it beats the runner-up %s on %s (%s vs %s)%s.", pe.Outcomes[0].Node, ru.Node, ru.Criterion, ru.Nominated, ru.Other, tie), "  ")
}

// groupNodeWarnings joins warnings that say the same of different nodes
// ("on node NAME ..."), where the first of them stood, naming at most
// most nodes.
func groupNodeWarnings(ws []string, most int) []string {
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
			out[at[rest]] = fmt.Sprintf("on %d nodes (%s) %s", len(ns), nodeList(ns, most), rest)
		}
	}
	return out
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
