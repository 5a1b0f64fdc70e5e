// Package printer renders a prediction as a kubectl-style table, or as one
// JSON or YAML document.
package printer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"sigs.k8s.io/yaml"

	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// Formats accepted by -o.
var Formats = []string{"table", "wide", "json", "yaml"}

// Print writes p in the given format ("" is the table).
func Print(w io.Writer, p *prediction.Prediction, format string) error {
	switch format {
	case "", "table":
		return Table(w, p, false)
	case "wide":
		return Table(w, p, true)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(p)
	case "yaml":
		b, err := yaml.Marshal(p)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("unknown output format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

// Table prints the header lines, the pods in deletion order with a cut line
// after the last victim, then open choices and warnings.
func Table(w io.Writer, p *prediction.Prediction, wide bool) error {
	fmt.Fprintf(w, "Target:     %s %s/%s, %d -> %d replicas\n", p.Target.Kind, p.Target.Namespace, p.Target.Name, p.CurrentReplicas, p.DesiredReplicas)
	fmt.Fprintf(w, "Rules:      %s\n", rulesLine(p.Rules))
	fmt.Fprintf(w, "Reference:  %s (%s)\n", p.ReferenceTime.UTC().Format(time.RFC3339), stableLine(p))
	if len(p.ReplicaSets) > 0 {
		fmt.Fprintf(w, "Split:      %s\n", splitLine(p))
	}
	if st := p.StatefulSet; st != nil {
		fmt.Fprintf(w, "Ordinals:   keep [%d, %d], policy %s, rule: reverse ordinal (highest first)\n", st.Start, st.End, st.PodManagementPolicy)
		if st.Stalled {
			fmt.Fprintf(w, "STALL:      %s\n", st.StallReason)
		}
	}
	fmt.Fprintf(w, "Result:     %s\n\n", p.Message)

	header := []string{"#", "POD", "NODE", "PHASE", "READY", "COST", "RANK", "READY AGE", "RESTARTS", "AGE", "FATE", "DECIDED BY"}
	if wide {
		header = append(header, "UID", "OWNER", "STEP", "CREATED", "READY SINCE", "BUCKETS r/c")
	}
	var buf bytes.Buffer
	t := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders:  tw.BorderNone,
			Symbols:  tw.NewSymbols(tw.StyleNone),
			Settings: tw.Settings{Separators: tw.Separators{BetweenRows: tw.Off, BetweenColumns: tw.Off}, Lines: tw.Lines{ShowHeaderLine: tw.Off}},
		})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignLeft),
		tablewriter.WithRowAlignment(tw.AlignLeft),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithPadding(tw.Padding{Left: "", Right: "  ", Overwrite: true}),
	)
	t.Header(anyRow(header)...)
	cutAfter := 0 // rows before the cut line
	for i, pod := range p.Pods {
		if pod.Fate == prediction.FateDelete {
			cutAfter = i + 1
		}
		if err := t.Append(anyRow(row(p, pod, wide))...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	for i, line := range lines {
		fmt.Fprintln(w, strings.TrimRight(line, " "))
		if i == cutAfter && cutAfter > 0 && cutAfter < len(p.Pods) {
			fmt.Fprintf(w, "---- cut: the %d pod(s) above are deleted, the rest stay ----\n", len(p.Victims))
		}
	}
	for i, g := range p.Contenders {
		kind := "estimated by simulating the controller's sort"
		if g.Exact {
			kind = "exact"
		}
		fmt.Fprintf(w, "\nOpen choice [%d]: %d of %s go (%s). Why: %s.\n", i, g.Delete, strings.Join(g.Pods, ", "), kind, g.Reason)
	}
	if st := p.StatefulSet; st != nil {
		claimLines(w, st)
	}
	if p.Impact != nil && len(p.Victims) > 0 {
		impactLines(w, p.Impact)
	}
	if len(p.Conflicts) > 0 {
		fmt.Fprintln(w, "\nConflicts:")
		for _, c := range p.Conflicts {
			fmt.Fprintf(w, "  - %s\n", c.Message)
		}
	}
	if st := p.Steering; st != nil {
		steeringLines(w, st)
	}
	if p.Creates > 0 {
		fmt.Fprintf(w, "\nThe controllers would also create %d pod(s) (Pending, never victims).\n", p.Creates)
	}
	if len(p.Warnings) > 0 {
		fmt.Fprintln(w, "\nWarnings:")
		for _, x := range p.Warnings {
			fmt.Fprintf(w, "  - %s\n", x)
		}
	}
	return nil
}

func anyRow(s []string) []any {
	out := make([]any, len(s))
	for i := range s {
		out[i] = s[i]
	}
	return out
}

func row(p *prediction.Prediction, pod prediction.Pod, wide bool) []string {
	pos := "-"
	if pod.Position > 0 {
		pos = fmt.Sprint(pod.Position)
	}
	node := pod.Node
	if node == "" {
		node = "<none>"
	}
	ready := "False"
	if pod.Ready {
		ready = "True"
	}
	cost := fmt.Sprint(pod.DeletionCost)
	if pod.DeletionCostInvalid {
		cost = fmt.Sprintf("0 (invalid %q)", pod.DeletionCostRaw)
	}
	readyAge := "-"
	if pod.ReadySince != nil {
		readyAge = engine.HumanAge(p.ReferenceTime.Sub(*pod.ReadySince))
	}
	restarts := fmt.Sprint(pod.Restarts)
	if pod.SidecarRestarts > 0 {
		restarts += fmt.Sprintf("+%d sidecar", pod.SidecarRestarts)
	}
	age := "-"
	if !pod.Created.IsZero() {
		age = engine.HumanAge(p.ReferenceTime.Sub(pod.Created))
	}
	r := []string{pos, pod.Name, node, orDash(pod.Phase), ready, cost, fmt.Sprint(pod.Rank), readyAge, restarts, age, fate(pod), decided(pod)}
	if wide {
		buckets := bucket(pod.ReadyBucket) + "/" + bucket(pod.CreatedBucket)
		since := "-"
		if pod.ReadySince != nil {
			since = pod.ReadySince.UTC().Format(time.RFC3339)
		}
		step := orDash(pod.Step)
		if pod.ReplicaSet != "" {
			step += " " + pod.ReplicaSet
		}
		r = append(r, pod.UID, orDash(pod.Owner), step, pod.Created.UTC().Format(time.RFC3339), since, buckets)
	}
	return r
}

func fate(pod prediction.Pod) string {
	switch pod.Fate {
	case prediction.FateDelete, prediction.FateKeep:
		word := "keep"
		if pod.Fate == prediction.FateDelete {
			word = "DELETE"
		}
		if pod.Certain {
			switch pod.Step {
			case prediction.StepRollout:
				word += " (rollout)"
			case prediction.StepEither:
				word += " (scale or rollout)"
			}
			return word
		}
		// The word is the most likely outcome, the number always the
		// probability of deletion.
		return fmt.Sprintf("%s? %.0f%%", word, 100*pod.DeleteProbability)
	}
	return pod.Fate
}

func decided(pod prediction.Pod) string {
	if pod.Reason != "" && pod.DecidedBy == nil {
		return pod.Reason
	}
	if pod.DecidedBy == nil {
		return "-"
	}
	d := pod.DecidedBy
	if d.Against == "" {
		return d.Rule + " " + d.Text
	}
	s := fmt.Sprintf("%s %s: %s vs %s (%s)", d.Rule, d.Name, d.This, d.Other, d.Against)
	if d.Rule == "TIE" {
		s = fmt.Sprintf("TIE with %s: no rule separates them", d.Against)
	}
	if pod.ContenderGroup != nil {
		s += fmt.Sprintf(" [open choice %d]", *pod.ContenderGroup)
	}
	return s
}

func bucket(b *int64) string {
	if b == nil {
		return "-"
	}
	return fmt.Sprint(*b)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func rulesLine(r prediction.RulesInfo) string {
	var gates []string
	for name, on := range r.FeatureGates {
		gates = append(gates, fmt.Sprintf("%s=%v", name, on))
	}
	sort.Strings(gates)
	src := r.VersionSource
	if r.VersionDetail != "" {
		src += ": " + r.VersionDetail
	}
	return fmt.Sprintf("Kubernetes %s (%s); gates %s", r.KubernetesVersion, src, strings.Join(gates, ", "))
}

func stableLine(p *prediction.Prediction) string {
	if p.StableUntil == nil {
		return "no age-based rule can change this outcome"
	}
	return fmt.Sprintf("holds until %s, %s from now, if nothing else changes", p.StableUntil.UTC().Format(time.RFC3339), engine.HumanAge(p.StableUntil.Sub(p.ReferenceTime)))
}

func splitLine(p *prediction.Prediction) string {
	var parts []string
	for _, rs := range p.ReplicaSets {
		tag := ""
		if rs.New {
			tag = " (new)"
		}
		parts = append(parts, fmt.Sprintf("%s%s %d -> %d -> %d", rs.Name, tag, rs.Before, rs.AfterScale, rs.Final))
	}
	return strings.Join(parts, "; ") + "   (before -> after the scale -> after the rollout continues)"
}

func claimLines(w io.Writer, st *prediction.StatefulSetInfo) {
	var del []string
	for _, c := range st.Claims {
		if c.Fate == prediction.FateDelete {
			del = append(del, c.Name+claimPresence(c))
		}
	}
	if len(del) > 0 {
		fmt.Fprintf(w, "\n!!! DATA LOSS: whenScaled=Delete: these PersistentVolumeClaims are deleted with their pods: %s\n", strings.Join(del, ", "))
	} else if st.ClaimPolicy == "Delete" {
		fmt.Fprintf(w, "\nPersistentVolumeClaims: whenScaled=Delete: no claim is deleted now (no pod with claims is deleted now).\n")
	} else if len(st.Claims) > 0 || st.ClaimPolicy != "" {
		fmt.Fprintf(w, "\nPersistentVolumeClaims: whenScaled=%s: the claims of deleted pods stay.\n", orDash(st.ClaimPolicy))
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
func impactLines(w io.Writer, im *prediction.Impact) {
	draw := func(title string, list []prediction.Placement) {
		if len(list) == 0 {
			return
		}
		width := 0
		for _, pl := range list {
			width = max(width, len(pl.Name))
		}
		fmt.Fprintf(w, "\nImpact by %s (# stays, x deleted):\n", title)
		for _, pl := range list {
			bar := strings.Repeat("#", min(pl.After, 40)) + strings.Repeat("x", min(pl.Before-pl.After, 40))
			flag := ""
			if pl.Emptied {
				flag = "  <- loses all its replicas"
			}
			fmt.Fprintf(w, "  %-*s  %2d -> %-2d  %s%s\n", width, pl.Name, pl.Before, pl.After, bar, flag)
		}
	}
	draw("node", im.Nodes)
	draw("zone", im.Zones)
}

func steeringLines(w io.Writer, st *prediction.Steering) {
	fmt.Fprintf(w, "\nSteering: wanted victims %s\n", strings.Join(st.Wanted, ", "))
	if !st.Possible {
		fmt.Fprintf(w, "  impossible: %s\n", st.Reason)
		return
	}
	if len(st.Commands) == 0 {
		fmt.Fprintf(w, "  %s\n", st.Reason)
		return
	}
	verified := "verified: the prediction with these annotations deletes exactly the wanted pods"
	if !st.Verified {
		verified = "NOT verified"
	}
	fmt.Fprintf(w, "  %d annotation(s), %s:\n", len(st.Commands), verified)
	for _, c := range st.Commands {
		fmt.Fprintf(w, "    %s\n", c)
	}
	fmt.Fprintf(w, "  %s\n", st.Note)
}
