// Package printer renders a prediction as a kubectl-style table: the
// default layout fits 120 columns, a compact one fits narrow terminals, and
// -o wide shows every fact. JSON, YAML, jsonpath and templates go through
// kubectl's own printers (see pkg/cmd); -o name is Names.
package printer

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mitchellh/go-wordwrap"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// Formats are -o's values for completion: the plugin's own and the common
// ones of kubectl's printers.
var Formats = []string{"wide", "name", "json", "yaml", "jsonpath=", "jsonpath-file=", "go-template=", "go-template-file="}

// Widths of the layouts.
const (
	// StandardWidth is the width the default layout is made for, and the
	// width assumed when the output is not a terminal.
	StandardWidth = 120
	// CompactBelow: terminals narrower than this get the compact layout.
	CompactBelow = 100
)

// TableOptions shape the table.
type TableOptions struct {
	Wide bool
	// Width is the terminal's width; 0 when output is not a terminal.
	Width int
}

func (o TableOptions) width() int {
	if o.Width <= 0 || o.Wide {
		return StandardWidth
	}
	return o.Width
}

func (o TableOptions) compact() bool { return !o.Wide && o.Width > 0 && o.Width < CompactBelow }

// Names prints the victims as kubectl's pod/NAME, one a line, in deletion
// order. That form has no namespace: a script reads it in the namespace it
// runs kubectl in. So every victim must be in ns, the namespace the command
// ran in (-n, else the context's); otherwise Names prints nothing and
// returns a *NamespaceError. A victim is "namespace/name" where the mode's
// victims span namespaces (node/NAME, pod/NAME), else a name in the
// target's namespace.
func Names(w io.Writer, ns string, preds ...*prediction.Prediction) error {
	var lines strings.Builder
	other := map[string]bool{}
	for _, p := range preds {
		for _, v := range p.Victims {
			vns, name := VictimNamespace(p, v)
			if vns != ns {
				other[vns] = true
			}
			fmt.Fprintf(&lines, "pod/%s\n", name)
		}
	}
	if len(other) > 0 {
		return &NamespaceError{Namespace: ns, Others: slices.Sorted(maps.Keys(other))}
	}
	_, err := io.WriteString(w, lines.String())
	return err
}

// VictimNamespace splits a victim of p into its namespace and name.
func VictimNamespace(p *prediction.Prediction, victim string) (namespace, name string) {
	if ns, name, ok := strings.Cut(victim, "/"); ok {
		return ns, name
	}
	return p.Target.Namespace, victim
}

// NamespaceError: some victims are outside the namespace the command ran
// in, which pod/NAME cannot say.
type NamespaceError struct {
	Namespace string   // the command's
	Others    []string // the victims' namespaces that differ
}

func (e *NamespaceError) Error() string {
	return fmt.Sprintf("-o name prints kubectl's pod/NAME, which has no namespace, and some victims are in namespace(s) %s, not in %s",
		strings.Join(e.Others, ", "), e.Namespace)
}

// Table prints the header lines, the pods in deletion order with a cut
// line after the last victim, the legend, then open choices, impact,
// conflicts, steering and warnings.
func Table(w io.Writer, p *prediction.Prediction, opt TableOptions) error {
	pw := &paragraphs{w: w, width: opt.width()}
	header(pw, p)
	rows, legend := buildRows(p, opt)
	if err := render(w, p, rows); err != nil {
		return err
	}
	pw.blank()
	for _, l := range legend {
		pw.para(l, "  ")
	}
	footer(pw, p)
	return pw.err
}

func header(pw *paragraphs, p *prediction.Prediction) {
	if p.Job != nil {
		pw.field("Target:", fmt.Sprintf("%s %s/%s, parallelism %d -> %d", p.Target.Kind, p.Target.Namespace, p.Target.Name, p.CurrentReplicas, p.DesiredReplicas))
	} else {
		pw.field("Target:", fmt.Sprintf("%s %s/%s, %d -> %d replicas", p.Target.Kind, p.Target.Namespace, p.Target.Name, p.CurrentReplicas, p.DesiredReplicas))
	}
	src := p.Rules.VersionSource
	if p.Rules.VersionDetail != "" {
		src += ": " + p.Rules.VersionDetail
	}
	pw.field("Rules:", fmt.Sprintf("Kubernetes %s (%s)", p.Rules.KubernetesVersion, src))
	pw.field("Gates:", gatesLine(p.Rules))
	pw.field("Reference:", fmt.Sprintf("%s (%s)", p.ReferenceTime.UTC().Format(time.RFC3339), stableLine(p)))
	if len(p.ReplicaSets) > 0 {
		pw.field("Split:", "before -> after the scale -> after the rollout continues")
		for _, rs := range p.ReplicaSets {
			tag := ""
			if rs.New {
				tag = " (new)"
			}
			pw.field("", fmt.Sprintf("%s%s %d -> %d -> %d", rs.Name, tag, rs.Before, rs.AfterScale, rs.Final))
		}
	}
	if st := p.StatefulSet; st != nil {
		pw.field("Ordinals:", fmt.Sprintf("keep [%d, %d], policy %s; the highest ordinal goes first", st.Start, st.End, st.PodManagementPolicy))
		if st.Stalled {
			pw.field("STALL:", st.StallReason)
		}
	}
	if p.Job != nil {
		pw.field("Job:", jobLine(p.Job))
	}
	pw.field("Result:", resultLine(p))
	pw.blank()
}

func footer(pw *paragraphs, p *prediction.Prediction) {
	for i, g := range p.Contenders {
		kind := "estimated by simulating the controller's sort"
		if g.Exact {
			kind = "exact"
		}
		pw.blank()
		pw.para(fmt.Sprintf("Open choice [%d]: %d of %s go (%s). Why: %s.", i, g.Delete, strings.Join(g.Pods, ", "), kind, g.Reason), "  ")
	}
	if st := p.StatefulSet; st != nil {
		claimLines(pw, st)
	}
	if p.Impact != nil && len(p.Victims) > 0 {
		impactLines(pw, p.Impact)
	}
	list(pw, "Conflicts:", conflictMessages(p.Conflicts))
	if st := p.Steering; st != nil {
		steeringLines(pw, st)
	}
	if p.Creates > 0 {
		pw.blank()
		pw.para(fmt.Sprintf("The controllers would also create %d pod(s) (Pending, never victims).", p.Creates), "")
	}
	list(pw, "Warnings:", p.Warnings)
}

func conflictMessages(cs []prediction.Conflict) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Message)
	}
	return out
}

func list(pw *paragraphs, title string, items []string) {
	if len(items) == 0 {
		return
	}
	pw.blank()
	pw.line(title)
	for _, x := range items {
		pw.para("  - "+x, "    ")
	}
}

func gatesLine(r prediction.RulesInfo) string {
	var gates []string
	for name, on := range r.FeatureGates {
		gates = append(gates, fmt.Sprintf("%s=%v", name, on))
	}
	sort.Strings(gates)
	if len(gates) == 0 {
		return "-"
	}
	return strings.Join(gates, ", ")
}

func stableLine(p *prediction.Prediction) string {
	if p.StableUntil == nil {
		return "no age-based rule can change this outcome"
	}
	return fmt.Sprintf("holds until %s, %s from now, if nothing else changes", p.StableUntil.UTC().Format(time.RFC3339), age(p.StableUntil.Sub(p.ReferenceTime)))
}

// age is kubectl's human duration (as in its AGE column).
func age(d time.Duration) string { return duration.HumanDuration(d) }

// paragraphs writes lines wrapped to the table's width, keeping the first
// error.
type paragraphs struct {
	w     io.Writer
	width int
	err   error
}

func (pw *paragraphs) line(s string) {
	if pw.err == nil {
		_, pw.err = fmt.Fprintln(pw.w, strings.TrimRight(s, " "))
	}
}

func (pw *paragraphs) blank() { pw.line("") }

// para wraps s at the width; continuation lines start with indent.
func (pw *paragraphs) para(s, indent string) {
	lines := strings.Split(wordwrap.WrapString(s, uint(max(pw.width-len(indent), 20))), "\n")
	for i, l := range lines {
		if i > 0 {
			l = indent + l
		}
		pw.line(l)
	}
}

// field prints "Title:     value", wrapping the value under itself.
func (pw *paragraphs) field(title, value string) {
	const col = 12
	lines := strings.Split(wordwrap.WrapString(value, uint(max(pw.width-col, 20))), "\n")
	for i, l := range lines {
		t := title
		if i > 0 {
			t = ""
		}
		pw.line(fmt.Sprintf("%-*s%s", col, t, l))
	}
}

func claimLines(pw *paragraphs, st *prediction.StatefulSetInfo) {
	var del []string
	for _, c := range st.Claims {
		if c.Fate == prediction.FateDelete {
			del = append(del, c.Name+claimPresence(c))
		}
	}
	switch {
	case len(del) > 0:
		pw.blank()
		pw.para("!!! DATA LOSS: whenScaled=Delete: these PersistentVolumeClaims are deleted with their pods: "+strings.Join(del, ", "), "    ")
	case st.ClaimPolicy == "Delete":
		pw.blank()
		pw.para("PersistentVolumeClaims: whenScaled=Delete: no claim is deleted now (no pod with claims is deleted now).", "  ")
	case len(st.Claims) > 0 || st.ClaimPolicy != "":
		pw.blank()
		pw.para(fmt.Sprintf("PersistentVolumeClaims: whenScaled=%s: the claims of deleted pods stay.", orDash(st.ClaimPolicy)), "  ")
	}
}

// claimPresence says whether a named claim was seen: its name follows
// from the template and the ordinal even when PVCs were not exported.
func claimPresence(c prediction.Claim) string {
	switch {
	case c.Exists == nil:
		return " (claims not read)"
	case *c.Exists:
		return " (exists)"
	}
	return " (not in the snapshot)"
}

// impactLines draws pods per node (and zone) before -> after as bars:
// '#' survives, 'x' is deleted.
func impactLines(pw *paragraphs, im *prediction.Impact) {
	draw := func(title string, list []prediction.Placement) {
		if len(list) == 0 {
			return
		}
		width := 0
		for _, pl := range list {
			width = max(width, len(pl.Name))
		}
		pw.blank()
		pw.line(fmt.Sprintf("Impact by %s (# stays, x deleted):", title))
		for _, pl := range list {
			bar := strings.Repeat("#", min(pl.After, 40)) + strings.Repeat("x", min(pl.Before-pl.After, 40))
			flag := ""
			if pl.Emptied {
				flag = "  <- loses all its replicas"
			}
			pw.line(fmt.Sprintf("  %-*s  %2d -> %-2d  %s%s", width, pl.Name, pl.Before, pl.After, bar, flag))
		}
	}
	draw("node", im.Nodes)
	draw("zone", im.Zones)
}

func steeringLines(pw *paragraphs, st *prediction.Steering) {
	pw.blank()
	pw.para("Steering: wanted victims "+strings.Join(st.Wanted, ", "), "  ")
	if !st.Possible {
		pw.para("  impossible: "+st.Reason, "    ")
		return
	}
	if len(st.Commands) == 0 {
		pw.para("  "+st.Reason, "    ")
		return
	}
	verified := "verified: the prediction with these annotations deletes exactly the wanted pods"
	if !st.Verified {
		verified = "NOT verified"
	}
	pw.para(fmt.Sprintf("  %d annotation(s), %s:", len(st.Commands), verified), "    ")
	for _, c := range st.Commands {
		pw.line("    " + c) // a command is copied whole: never wrapped
	}
	pw.para("  "+st.Note, "    ")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
