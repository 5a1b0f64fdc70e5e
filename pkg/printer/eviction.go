package printer

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/scale-preview/scale-preview/pkg/eviction"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// EvictionTable prints a node preview: the signals and thresholds, the
// pods in the kubelet's eviction order with a cut line after the last
// victim, then the pods it never evicts, local-storage evictions and why
// the answer is uncertain.
func EvictionTable(w io.Writer, p *prediction.Prediction, opt TableOptions) error {
	e := p.Eviction
	pw := &paragraphs{w: w, width: opt.width()}
	evictionHeader(pw, p)
	if err := writeGrid(w, signalGrid(e), -1, ""); err != nil {
		return err
	}
	pw.blank()
	pw.para(fmt.Sprintf("Order for %s (ranking: %s); TARGET is threshold + minimum reclaim, what eviction restores.", e.Signal, e.Ranking), "  ")
	t, cutAfter := orderGrid(e, opt)
	cut := ""
	if cutAfter >= 0 && cutAfter+1 < len(e.Order) {
		cut = fmt.Sprintf("---- cut: %d pod(s) evicted, one per sync, until every threshold is back at its target ----", e.Cut)
		if !e.Certain {
			cut = fmt.Sprintf("---- cut: about %d pod(s) evicted; see Uncertain below ----", e.Cut)
		}
	}
	legend := fitLastColumn(&t, opt.width())
	if err := writeGrid(w, t, cutAfter, cut); err != nil {
		return err
	}
	for _, l := range legend {
		pw.para(l, "      ")
	}
	evictionExempt(pw, e)
	evictionRemarks(pw, e, p.Warnings)
	return pw.err
}

// evictionHeader is the lines above the signals.
func evictionHeader(pw *paragraphs, p *prediction.Prediction) {
	e := p.Eviction
	src := p.Rules.VersionSource
	if p.Rules.VersionDetail != "" {
		src += ": " + p.Rules.VersionDetail
	}
	pw.field("Node:", e.Node)
	pw.field("Rules:", fmt.Sprintf("kubelet of Kubernetes %s (%s)", p.Rules.KubernetesVersion, src))
	pw.field("Disks:", e.DiskLayout)
	// Offline the files are the source; live, the line says which path.
	if slices.ContainsFunc(e.KubeletReads, func(r snapshot.KubeletRead) bool { return r.Path != "file" }) {
		pw.field("Kubelet:", kubeletReadsLine(e.KubeletReads))
	}
	pw.blank()
}

// signalGrid is a row per threshold, under its signal.
func signalGrid(e *eviction.Result) grid {
	sig := grid{header: []string{"SIGNAL", "AVAILABLE", "THRESHOLD", "TARGET", "PRESSURE"}}
	for _, s := range e.Signals {
		avail := "-"
		if s.Observed {
			avail = amount(s.Available, s.Unit)
			if s.Assumed {
				avail += " (assumed)"
			}
		}
		for i, t := range s.Thresholds {
			th := "<" + t.Value + " " + t.Kind
			if t.Kind == "soft" {
				th += " " + t.GracePeriod
			}
			target := "-"
			if s.Observed {
				target = amount(t.Target, s.Unit)
			}
			press := "no"
			if t.Met {
				press = "YES"
			}
			name := s.Signal
			if i > 0 {
				name, avail = "", ""
			}
			sig.rows = append(sig.rows, []string{name, avail, th, target, press})
		}
	}
	return sig
}

// orderGrid is the eviction order; cutAfter is the last row with a chance
// of eviction (-1: none).
func orderGrid(e *eviction.Result, opt TableOptions) (t grid, cutAfter int) {
	unit := "bytes"
	switch {
	case strings.HasPrefix(e.Ranking, "pid"):
		unit = "pids"
	case strings.Contains(e.Ranking, "inodes"):
		unit = "inodes"
	}
	t = grid{header: []string{"#", "POD", "QOS", "PRIO", "USAGE", "REQUEST", "FATE", "WHY (vs next)"}}
	if opt.compact() {
		t.header = []string{"#", "POD", "USAGE", "FATE", "WHY (vs next)"}
	}
	cutAfter = -1
	for i, c := range e.Order {
		if c.EvictProbability > 0 {
			cutAfter = i
		}
		usage := amount(c.Usage, unit)
		if !c.InStats {
			usage = "no stats"
		}
		row := []string{fmt.Sprint(c.Position), c.Pod, c.QOSClass, fmt.Sprint(c.Priority), usage, amount(c.Request, unit), fate(c), whyVsNext(c, unit)}
		if opt.compact() {
			row = []string{row[0], row[1], row[4], row[6], row[7]}
		}
		t.rows = append(t.rows, row)
	}
	return t, cutAfter
}

// evictionExempt lists the pods never evicted and those evicted for local
// storage whatever the pressure.
func evictionExempt(pw *paragraphs, e *eviction.Result) {
	if len(e.Never) > 0 {
		pw.blank()
		pw.line("Never evicted:")
		for _, x := range e.Never {
			pw.para("  "+x.Pod+": "+x.Reason, "    ")
		}
	}
	if len(e.LocalStorage) > 0 {
		pw.blank()
		pw.line("Evicted whatever the pressure (local storage, all in the first sync):")
		for _, x := range e.LocalStorage {
			what := fmt.Sprintf("evicted, %ds grace", x.GracePeriodSeconds)
			if !x.Evicted {
				what = "critical, kept"
			}
			pw.para(fmt.Sprintf("  %s: %s (%s)", x.Pod, x.Reason, what), "    ")
		}
	}
}

// evictionRemarks is the assumed figures, the doubts and the notes.
func evictionRemarks(pw *paragraphs, e *eviction.Result, warnings []string) {
	for _, list := range []struct {
		title string
		items []string
	}{{"Assumed:", e.Assumed}, {"Uncertain:", e.Uncertain}, {"Notes:", append(append([]string{}, e.Notes...), warnings...)}} {
		if len(list.items) == 0 {
			continue
		}
		pw.blank()
		pw.line(list.title)
		for _, s := range list.items {
			pw.para("  - "+s, "    ")
		}
	}
}

func fate(c eviction.Candidate) string {
	switch {
	case c.Exempt != "":
		return "never"
	case c.Step == 0 && c.Certain:
		return "stays"
	}
	g := ""
	if c.GracePeriodSeconds != nil {
		g = fmt.Sprintf(", %ds", *c.GracePeriodSeconds)
	}
	if len(c.GraceAlternatives) > 1 {
		alts := make([]string, len(c.GraceAlternatives))
		for i, a := range c.GraceAlternatives {
			alts[i] = fmt.Sprint(a)
		}
		g = ", " + strings.Join(alts, "|") + "s"
	}
	if c.Certain {
		return fmt.Sprintf("evict #%d%s", c.Step, g)
	}
	if c.Step == 0 {
		return "evict? " + Percent(c.EvictProbability)
	}
	if n := len(c.PossibleSteps); n > 1 && c.EvictProbability > 0.999999 {
		return fmt.Sprintf("evict #%d-%d%s", c.PossibleSteps[0], c.PossibleSteps[n-1], g)
	}
	return "evict? " + Percent(c.EvictProbability) + g
}

func whyVsNext(c eviction.Candidate, unit string) string {
	d := c.DecidedBy
	if d == nil {
		return "-"
	}
	switch d.Rule {
	case eviction.RuleTie:
		return "exact tie"
	case eviction.RuleUsage:
		return fmt.Sprintf("over request %s > %s", amountText(d.This, unit), amountText(d.Other, unit))
	case eviction.RuleProcesses:
		return fmt.Sprintf("processes %s > %s", d.This, d.Other)
	case eviction.RulePriority:
		return fmt.Sprintf("priority %s < %s", d.This, d.Other)
	case eviction.RuleExceeds:
		return "over request; next within"
	case eviction.RuleNoStats:
		return "no stats; next has"
	}
	return d.Rule
}

func amountText(s, unit string) string {
	var v int64
	if _, err := fmt.Sscan(s, &v); err != nil {
		return s
	}
	return amount(v, unit)
}

// amount shows bytes as binary quantities (Mi, Gi), counts as numbers.
func amount(v int64, unit string) string {
	if unit != "bytes" {
		return fmt.Sprint(v)
	}
	neg := v < 0
	if neg {
		v = -v
	}
	s := resource.NewQuantity(v, resource.BinarySI).String()
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}} {
		if v >= u.size {
			s = fmt.Sprintf("%.1f%s", float64(v)/float64(u.size), u.suffix)
			s = strings.Replace(s, ".0"+u.suffix, u.suffix, 1)
			break
		}
	}
	if neg {
		s = "-" + s
	}
	return s
}

// writeGrid renders t as the pod tables are rendered, with an optional
// line after row cutAfter.
func writeGrid(w io.Writer, t grid, cutAfter int, cut string) error {
	lines, ok := plainLines(t)
	if !ok {
		var err error
		if lines, err = tableLines(t); err != nil {
			return err
		}
	}
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(l)
		b.WriteByte('\n')
		if cut != "" && i == cutAfter+1 {
			b.WriteString(cut)
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// fitLastColumn moves last-column texts that would run past width into a
// numbered legend, leaving [n] in the row; rows with the same text share
// one entry (a drain's many alike replacements).
func fitLastColumn(t *grid, width int) []string {
	last := len(t.header) - 1
	used := t.widthBefore(last, twwidth.Width)
	var legend []string
	number := map[string]int{}
	for i, r := range t.rows {
		if twwidth.Width(r[last]) <= width-used {
			continue
		}
		n, ok := number[r[last]]
		if !ok {
			legend = append(legend, fmt.Sprintf("[%d] %s", len(legend)+1, r[last]))
			n = len(legend)
			number[r[last]] = n
		}
		t.rows[i][last] = fmt.Sprintf("[%d]", n)
	}
	return legend
}

// kubeletReadsLine says how the summary and configz were read, once for
// both when they came the same way.
func kubeletReadsLine(reads []snapshot.KubeletRead) string {
	how := func(r snapshot.KubeletRead) string {
		switch r.Path {
		case "kubelet":
			s := "directly from the kubelet at " + r.Endpoint
			if r.InsecureTLS {
				s += " (its certificate did NOT verify: --kubelet-insecure-tls)"
			}
			return s
		case "node-proxy":
			return "through the API server's node proxy"
		case "file":
			return "from the files"
		}
		return "not read (assumed)"
	}
	var parts []string
	for i, r := range reads {
		if i > 0 && how(r) == how(reads[i-1]) {
			parts[len(parts)-1] = strings.Replace(parts[len(parts)-1], ": ", " and "+r.Document+": ", 1)
			continue
		}
		parts = append(parts, r.Document+": "+how(r))
	}
	return strings.Join(parts, "; ")
}
