package printer

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// sectionsShown is how many alike sections a table prints before one line
// counts the rest; -o wide prints them all.
const sectionsShown = 3

// moreLikeThese is the line that stands for the alike sections left out.
func moreLikeThese(n int, rest string) string {
	return fmt.Sprintf("%d more like these (-o wide for all)%s", n, rest)
}

// names is how many names a list of nodes prints before "+N more".
func (o TableOptions) names() int {
	if o.Wide {
		return math.MaxInt
	}
	return 3
}

// outcomeGroupOf is nominated nodes alike in what an operator decides on
// (see decisionKey), most likely first.
type outcomeGroupOf struct {
	first  prediction.PreemptionOutcome
	nodes  []string
	total  float64 // the sum of the nodes' chances
	lo, hi float64 // the least and the most likely node's chance
	// variants split the nodes by the victims' owners, budgets and
	// namespaces; only -o wide prints each.
	variants  []outcomeVariant
	variantAt map[string]int
}

// outcomeVariant is nodes whose victims have the same namespaces,
// priorities, owners and budgets.
type outcomeVariant struct {
	first prediction.PreemptionOutcome
	nodes []string
}

func (g *outcomeGroupOf) add(o prediction.PreemptionOutcome) {
	g.nodes = append(g.nodes, o.Node)
	g.total += o.Probability
	g.lo, g.hi = min(g.lo, o.Probability), max(g.hi, o.Probability)
	key := outcomeShape(o)
	i, ok := g.variantAt[key]
	if !ok {
		g.variants = append(g.variants, outcomeVariant{first: o})
		i = len(g.variants) - 1
		g.variantAt[key] = i
	}
	g.variants[i].nodes = append(g.variants[i].nodes, o.Node)
}

// groupOutcomes groups the outcomes by decisionKey, the likeliest group
// first (then in the order of their first member): a large cluster of
// alike nodes is one group, not thousands nor one per set of owners.
func groupOutcomes(outs []prediction.PreemptionOutcome) []outcomeGroupOf {
	var groups []outcomeGroupOf
	index := map[string]int{}
	for _, o := range outs {
		key := decisionKey(o)
		i, ok := index[key]
		if !ok {
			groups = append(groups, outcomeGroupOf{first: o, lo: o.Probability, hi: o.Probability, variantAt: map[string]int{}})
			i = len(groups) - 1
			index[key] = i
		}
		groups[i].add(o)
	}
	for i := range groups {
		if sameOdds(groups[i].total, 1) {
			groups[i].total = 1 // a sum of shares of one
		}
	}
	slices.SortStableFunc(groups, func(a, b outcomeGroupOf) int {
		if sameOdds(a.total, b.total) {
			return 0
		}
		return cmp.Compare(b.total, a.total)
	})
	return groups
}

// sameOdds: probabilities summed over the scheduler's offsets differ only
// by rounding.
func sameOdds(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(a, b) }

// decisionKey is what an operator weighs for a node: how many pods die,
// at which priorities and of which owner kinds, and how many budgets
// break. Which Deployments the victims belong to is left out: on alike
// nodes it alone made a section per set of owners.
func decisionKey(o prediction.PreemptionOutcome) string {
	victims := make([]string, 0, len(o.Victims))
	for _, v := range o.Victims {
		kind, _, _ := strings.Cut(v.Owner, "/")
		victims = append(victims, fmt.Sprintf("%d/%s", v.Priority, kind))
	}
	slices.Sort(victims)
	return fmt.Sprintf("%d|%s", o.PDBViolations, strings.Join(victims, ";"))
}

// outcomeShape adds to decisionKey the victims' namespaces, owners and
// budgets: nodes of one shape differ only in the victims' names.
func outcomeShape(o prediction.PreemptionOutcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d|", o.PDBViolations)
	for _, v := range o.Victims {
		fmt.Fprintf(&b, "%s|%d|%s|%s|%t;", v.Namespace, v.Priority, v.Owner, strings.Join(v.PDBs, ","), v.ViolatesPDB)
	}
	return b.String()
}

// nominations prints the groups of nominated nodes, the first few unless
// wide, and one line for the rest.
func nominations(pw *paragraphs, outs []prediction.PreemptionOutcome, opt TableOptions) {
	groups := groupOutcomes(outs)
	shown := groups
	if !opt.Wide && len(groups) > sectionsShown+1 { // a line for one section saves nothing
		shown = groups[:sectionsShown]
	}
	for _, g := range shown {
		pw.blank()
		if len(g.nodes) > 1 {
			outcomeGroup(pw, g, opt)
			continue
		}
		o := g.first
		head := fmt.Sprintf("NOMINATED NODE %s", o.Node)
		if len(outs) > 1 || o.Probability < 1 {
			head += " (" + Percent(o.Probability) + ")"
		}
		head += fmt.Sprintf(": %s, %s", plural(len(o.Victims), "victim"), plural(o.PDBViolations, "PDB violation"))
		pw.para(head, "  ")
		victimRows(pw, o.Victims, opt.width())
	}
	if rest := groups[len(shown):]; len(rest) > 0 {
		nodes, total := 0, 0.0
		for _, g := range rest {
			nodes += len(g.nodes)
			total += g.total
		}
		pw.blank()
		pw.para(moreLikeThese(len(rest), fmt.Sprintf(": nominated nodes with other victims, %s, %s together", plural(nodes, "node"), Percent(total))), "  ")
	}
}

// outcomeGroup heads a group of nominated nodes, then the victims of its
// likeliest node (under -o wide, of one node per variant).
func outcomeGroup(pw *paragraphs, g outcomeGroupOf, opt TableOptions) {
	o := g.first
	odds := fmt.Sprintf(" (%s to %s each, %s together)", Percent(g.lo), Percent(g.hi), Percent(g.total))
	if sameOdds(g.lo, g.hi) {
		odds = fmt.Sprintf(", equal odds (%s each, %s together)", Percent(g.hi), Percent(g.total))
	}
	pw.para(fmt.Sprintf("NOMINATED NODE: any of %d nodes%s: on each, %s, %s", len(g.nodes), odds,
		plural(len(o.Victims), "victim"), plural(o.PDBViolations, "PDB violation")), "  ")
	pw.para("  Nodes: "+nodeList(g.nodes, opt.names()), "    ")
	if len(o.Victims) == 0 {
		return
	}
	if len(g.variants) == 1 {
		pw.para(fmt.Sprintf("  On %s (on each other node its own pods of the same priorities, owners and budgets):", o.Node), "    ")
		victimRows(pw, o.Victims, opt.width())
		return
	}
	if !opt.Wide {
		pw.para(fmt.Sprintf("  On %s (elsewhere: same priorities and owner kinds, other %s; -o wide shows all %d):",
			o.Node, g.varying(), len(g.variants)), "    ")
		victimRows(pw, o.Victims, opt.width())
		return
	}
	for _, v := range g.variants {
		head := fmt.Sprintf("  On %s:", v.first.Node)
		if len(v.nodes) > 1 {
			head = fmt.Sprintf("  On %s (and alike, their own pods of the same owners and budgets, on %s):", v.first.Node, nodeList(v.nodes[1:], opt.names()))
		}
		pw.para(head, "    ")
		victimRows(pw, v.first.Victims, opt.width())
	}
}

// varying names what differs between the group's variants: "owners",
// "budgets", "namespaces", or a pair of them.
func (g *outcomeGroupOf) varying() string {
	var words []string
	for _, w := range []struct {
		word string
		of   func(prediction.PreemptionVictim) string
	}{
		{"owners", func(v prediction.PreemptionVictim) string { return v.Owner }},
		{"budgets", func(v prediction.PreemptionVictim) string { return fmt.Sprint(v.PDBs, v.ViolatesPDB) }},
		{"namespaces", func(v prediction.PreemptionVictim) string { return v.Namespace }},
	} {
		if slices.ContainsFunc(g.variants, func(v outcomeVariant) bool { return !sameVictimsBy(v.first.Victims, g.first.Victims, w.of) }) {
			words = append(words, w.word)
		}
	}
	switch len(words) {
	case 0: // the same victims in another order
		return "victim order"
	case 3:
		return "owners, budgets and namespaces"
	}
	return strings.Join(words, " and ")
}

// sameVictimsBy: the two lists hold the same values of of, in any order.
func sameVictimsBy(a, b []prediction.PreemptionVictim, of func(prediction.PreemptionVictim) string) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[string]int{}
	for i := range a {
		count[of(a[i])]++
		count[of(b[i])]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}
