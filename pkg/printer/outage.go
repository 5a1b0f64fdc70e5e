package printer

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// OutageTable prints an outage as a timeline: the assumed settings, the
// zones' states, when each node is tainted, each pod's fate, the
// replacements and the workloads that fall short. Alike rows are grouped,
// and rows alike but for their owner folded after a few unless wide, so
// that a whole zone stays readable.
func OutageTable(w io.Writer, p *prediction.Prediction, opt TableOptions) error {
	width := opt.width()
	pw := &paragraphs{w: w, width: width}
	o := p.Outage
	pw.field("Outage:", fmt.Sprintf("%s: %d node(s) fail at T=0 (%s)", p.Target.Name, len(o.Nodes), conditionWords(o.Condition)))
	pw.field("Rules:", fmt.Sprintf("Kubernetes %s (%s)", p.Rules.KubernetesVersion, p.Rules.VersionSource))
	pw.field("Assumed:", assumedLine(o.Assumed))
	pw.field("Times:", "T+ seconds after the failure, from the assumed settings; a..b is a window (heartbeat timing, the zone queue's order); "+
		"API latency and pod startup are not modelled")
	result := p.Message
	if !p.Certain {
		result += " (uncertain: see below)"
	}
	pw.field("Result:", result)
	outageZones(pw, o.Zones, width)
	outageNodes(pw, o.Nodes, width)
	outagePods(pw, o.Pods, opt)
	outageReplacements(pw, o.Replacements, opt)
	outageWorkloads(pw, o, opt)
	if len(p.Warnings) > 0 {
		list(pw, "Uncertain / warnings:", mergeWarnings(p.Warnings, o, opt))
	}
	return pw.err
}

func conditionWords(c string) string {
	if c == "not-ready" {
		return "not-ready: their kubelets report NotReady"
	}
	return "unreachable: their kubelets stop reporting"
}

func assumedLine(a prediction.OutageSettings) string {
	return fmt.Sprintf("kube-controller-manager --node-monitor-grace-period=%s --node-monitor-period=%s --node-eviction-rate=%g "+
		"--secondary-node-eviction-rate=%g --unhealthy-zone-threshold=%g --large-cluster-size-threshold=%d; kubelet leases renewed every %s "+
		"(the plugin cannot read these: the version's defaults unless flags set them)",
		tsec(a.NodeMonitorGracePeriodSeconds), tsec(a.NodeMonitorPeriodSeconds), a.NodeEvictionRate, a.SecondaryNodeEvictionRate,
		a.UnhealthyZoneThreshold, a.LargeClusterSizeThreshold, tsec(a.LeaseRenewIntervalSeconds))
}

// tsec prints seconds as 50s or 2.5s.
func tsec(x float64) string { return fmt.Sprintf("%gs", x) }

// window prints [min, max] as T+a..bs (T+as when they agree).
func window(w []float64) string {
	if len(w) != 2 {
		return "never"
	}
	if w[0] == w[1] {
		return fmt.Sprintf("T+%gs", w[0])
	}
	return fmt.Sprintf("T+%g..%gs", w[0], w[1])
}

func outageZones(pw *paragraphs, zones []prediction.OutageZone, width int) {
	pw.blank()
	pw.para("ZONES (the node lifecycle controller's state once every failed node is marked):", "  ")
	t, under := zoneGrid(zones, true), false
	if t.widthBefore(len(t.header), twwidth.Width)-2 > width {
		t, under = zoneGrid(zones, false), true // the states passed through go under the table
	}
	printGrid(pw, t, width)
	for _, z := range zones {
		if under && len(z.Passes) > 1 {
			pw.para(fmt.Sprintf("  %s went through %s first", zoneLabel(z.Zone), strings.Join(z.Passes[:len(z.Passes)-1], ", ")), "    ")
		}
	}
}

// zoneGrid is the zones' table, each state with those it passed through
// (via) or without.
func zoneGrid(zones []prediction.OutageZone, via bool) grid {
	t := grid{header: []string{"  ZONE", "NODES", "NOT READY", "STATE", "TAINTS"}}
	for _, z := range zones {
		state := z.State
		if len(z.Passes) > 1 && via {
			state += " (via " + strings.Join(z.Passes[:len(z.Passes)-1], ", ") + ")"
		}
		rate := fmt.Sprintf("%g node/s", z.Rate)
		if z.Rate == 0 {
			rate = "stopped"
		}
		if z.Failed == 0 {
			rate = "-"
		}
		t.rows = append(t.rows, []string{"  " + zoneLabel(z.Zone), fmt.Sprint(z.Nodes), fmt.Sprint(z.NotReady), state, rate})
	}
	return t
}

func zoneLabel(z string) string {
	if z == "" {
		return `""`
	}
	return z
}

// group is rows that print as one: the same text in every column but the
// first, counted.
type group struct {
	key   string
	first string
	n     int
	nodes map[string]bool
	cells []string
}

// grouped collects rows by key in order of first appearance.
type grouped struct {
	order []*group
	by    map[string]*group
}

func (g *grouped) add(key, name, node string, cells []string) {
	if g.by == nil {
		g.by = map[string]*group{}
	}
	x := g.by[key]
	if x == nil {
		x = &group{key: key, first: name, nodes: map[string]bool{}, cells: cells}
		g.by[key] = x
		g.order = append(g.order, x)
	}
	x.n++
	if node != "" {
		x.nodes[node] = true
	}
}

// label is the row's first cell: the one name, or a count of what.
func (x *group) label(what string) string {
	if x.n == 1 {
		return x.first
	}
	return fmt.Sprintf("%d %s", x.n, what)
}

// nodeCell is the one node, or how many.
func (x *group) nodeCell() string {
	if len(x.nodes) == 1 {
		for n := range x.nodes {
			return n
		}
	}
	return fmt.Sprintf("%d nodes", len(x.nodes))
}

func outageNodes(pw *paragraphs, nodes []prediction.OutageNode, width int) {
	if len(nodes) == 0 {
		return
	}
	pw.blank()
	pw.para(fmt.Sprintf("NODES (Ready turns Unknown or False, then the controller taints them %s):", nodes[0].Taint), "  ")
	var g grouped
	for _, n := range nodes {
		when := window(n.TaintedAfterSeconds)
		if !n.Certain {
			when += " (uncertain)"
		}
		g.add(strings.Join([]string{n.Zone, when, n.Reason}, "\x00"), n.Node, "", []string{zoneLabel(n.Zone), when, orDash(n.Reason)})
	}
	t := grid{header: []string{"  NODE", "ZONE", "TAINTED", "WHY"}}
	for _, x := range g.order {
		t.rows = append(t.rows, append([]string{"  " + x.label("nodes")}, x.cells...))
	}
	printGrid(pw, t, width)
}

func outagePods(pw *paragraphs, pods []prediction.OutagePod, opt TableOptions) {
	if len(pods) == 0 {
		return
	}
	pw.blank()
	pw.para("PODS on the failed nodes (taint eviction is a plain DELETE: PodDisruptionBudgets do not hold it; ? marks an uncertain fate):", "  ")
	var g grouped
	for _, p := range pods {
		fate := podFate(p)
		why := p.Toleration + "; " + p.Reason
		key := strings.Join([]string{p.Owner, fate, why}, "\x00")
		g.add(key, p.Pod, p.Node, []string{fate, why})
	}
	var rows []alikeRow
	for _, x := range g.order {
		what, shape := "pods", ""
		owner := x.key[:strings.IndexByte(x.key, 0)]
		if owner != "" {
			what, shape = "of "+owner, shapeOf(owner, x.cells...)
		}
		rows = append(rows, alikeRow{cells: []string{"  " + x.label(what), x.nodeCell(), x.cells[0], x.cells[1]}, shape: shape, name: owner, pods: x.n,
			gist: x.cells[0]})
	}
	printFolded(pw, []string{"  POD", "NODE", "FATE", "WHY"}, rows, "pod", opt)
}

func podFate(p prediction.OutagePod) string {
	var s string
	switch p.Fate {
	case "deleted":
		s = "deleted " + window(p.DeletedAfterSeconds)
	case "stuck":
		s = "STUCK from " + window(p.TerminatingAfterSeconds)
	default:
		s = "stays"
	}
	if !p.Certain {
		s += " ?"
	}
	return s
}

func outageReplacements(pw *paragraphs, rs []prediction.OutageReplacement, opt TableOptions) {
	if len(rs) == 0 {
		return
	}
	pw.blank()
	pw.para("REPLACEMENTS (created when the old pod is terminating; the scheduler filters out the tainted nodes):", "  ")
	var g grouped
	for _, r := range rs {
		node, why := r.Node, r.Reason
		switch {
		case node == "":
			node, why = "-", r.Reason+" It stays Pending until capacity is added."
		case len(r.Candidates) > 1:
			node, why = "any of "+fmt.Sprint(len(r.Candidates)), appendWhy(nodeList(r.Candidates, 3)+" (the scheduler's scoring picks)", r.Reason)
		}
		at := window(r.AtSeconds)
		g.add(strings.Join([]string{r.Owner, node, at, why}, "\x00"), r.For, "", []string{r.Owner, node, at, orDash(why)})
	}
	var rows []alikeRow
	for _, x := range g.order {
		owner, shape := x.cells[0], ""
		if owner != "" {
			shape = shapeOf(owner, x.cells[1:]...)
		}
		gist := "on " + x.cells[1]
		if x.cells[1] == "-" {
			gist = "fitting nowhere"
		}
		rows = append(rows, alikeRow{cells: append([]string{"  " + x.label("pods")}, x.cells...), shape: shape, name: owner, pods: x.n, gist: gist})
	}
	printFolded(pw, []string{"  FOR", "OWNER", "NODE", "CREATED", "WHY"}, rows, "replacement", opt)
}

func appendWhy(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}

func outageWorkloads(pw *paragraphs, o *prediction.Outage, opt TableOptions) {
	if len(o.Workloads) == 0 {
		return
	}
	pw.blank()
	pw.para("WORKLOADS (pods on a failed node are unavailable from T=0; a placed replacement counts from its creation):", "  ")
	var rows []alikeRow
	for _, w := range o.Workloads {
		avail := fmt.Sprint(w.AvailableMin)
		if w.ReachesZero {
			avail = "0 !!!"
		}
		name := w.Kind + " " + w.Name
		shape, gist := workloadShape(w)
		rows = append(rows, alikeRow{cells: []string{"  " + name, fmt.Sprint(w.Replicas), avail, budgetCell(w)}, shape: shape, name: name,
			pods: w.Replicas, gist: gist})
	}
	printFolded(pw, []string{"  WORKLOAD", "PODS", "AVAILABLE MIN", "BUDGETS"}, rows, "pod", opt)
}

// workloadShape is what a workload's row says but its name, counts and
// budgets' names: whether it reaches 0 and its budgets' state, which the
// gist words.
func workloadShape(w prediction.OutageWorkload) (shape, gist string) {
	w.Name, w.Budgets = "", slices.Repeat([]string{""}, len(w.Budgets))
	budgets := strings.TrimSpace(budgetCell(w))
	switch {
	case len(w.Budgets) == 0:
		gist = "no budget"
	default:
		gist = "budgets " + budgets
	}
	if w.ReachesZero {
		gist = "0 available, " + gist
	}
	return fmt.Sprintf("%s|%t|%s", w.Kind, w.ReachesZero, budgets), gist
}

func budgetCell(w prediction.OutageWorkload) string {
	if len(w.Budgets) == 0 {
		return "-"
	}
	names := strings.Join(w.Budgets, ", ")
	if !w.BudgetBroken {
		return names + " met"
	}
	until := "never restored (by what the model sees)"
	if w.BrokenUntil != nil {
		until = fmt.Sprintf("until T+%gs", *w.BrokenUntil)
	}
	return fmt.Sprintf("%s BROKEN from T+0 %s", names, until)
}
