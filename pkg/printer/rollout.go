package printer

import (
	"fmt"
	"io"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// RolloutTable prints a rollout: one block per step (the pods deleted,
// with the rule that chose each, and created, with their node), then the
// verdict, what a bad release costs, and the warnings.
func RolloutTable(w io.Writer, p *prediction.Prediction, width int) error {
	if width <= 0 {
		width = StandardWidth
	}
	pw := &paragraphs{w: w, width: width}
	r := p.Rollout
	pw.field("Rollout:", fmt.Sprintf("%s %s/%s (%s, %s)", r.Kind, r.Namespace, r.Name, r.Strategy, changeWords[r.Change]))
	pw.field("Rules:", fmt.Sprintf("Kubernetes %s (%s)", p.Rules.KubernetesVersion, p.Rules.VersionSource))
	result := p.Message
	if !p.Certain {
		result += " (uncertain: see below)"
	}
	pw.field("Result:", result)
	for i, st := range r.Steps {
		rolloutStep(pw, i+1, st, width)
	}
	pw.blank()
	verdict := strings.ToUpper(r.Outcome)
	if r.Reason != "" {
		verdict += ": " + r.Reason
	}
	pw.para("Verdict: "+verdict, "  ")
	if r.Unblock != "" {
		pw.para("Unblock: "+r.Unblock, "  ")
	}
	if len(r.Remaining) > 0 {
		pw.para("Remaining old pods: "+strings.Join(r.Remaining, ", "), "  ")
	}
	f := r.IfNewPodsFail
	pw.para(fmt.Sprintf("If the new pods never become Ready: %d old pod(s) deleted before the rollout stops (%s); %d available at the lowest.",
		len(f.Deleted), orNone(f.Deleted), f.AvailableMin), "  ")
	if len(p.Warnings) > 0 {
		list(pw, "Uncertain / warnings:", p.Warnings)
	}
	return pw.err
}

var changeWords = map[string]string{
	"restart": "kubectl rollout restart",
	"image":   "kubectl set image",
	"resume":  "kubectl rollout resume",
	"desired": "the manifests' template",
}

func rolloutStep(pw *paragraphs, n int, st prediction.RolloutStep, width int) {
	pw.blank()
	head := fmt.Sprintf("STEP %d: %d deleted, %d created; available at least %d", n, len(st.Deleted), len(st.Created), st.AvailableMin)
	if st.WaitsFor > 0 {
		head += fmt.Sprintf("; waits for %d new pod(s) available", st.WaitsFor)
	}
	if !st.Certain {
		head += " (uncertain)"
	}
	pw.para(head, "  ")
	for _, b := range st.Budgets {
		state := "kept"
		if b.Violated {
			state = "VIOLATED (a rollout never asks the Eviction API)"
		}
		pw.para(fmt.Sprintf("  budget %s: %d healthy at least, %d desired: %s", b.Name, b.CurrentHealthyMin, b.DesiredHealthy, state), "    ")
	}
	t := grid{header: []string{"  POD", "ACTION", "NODE / WHY"}}
	for i, d := range st.Deleted {
		why := ""
		if i < len(st.Why) {
			why = st.Why[i]
		}
		t.rows = append(t.rows, []string{"  " + d, "deleted", why})
	}
	for _, c := range st.Created {
		name, where := c.Pod, c.Node
		if name == "" {
			name = "(new pod)"
		}
		action := "created"
		switch {
		case strings.HasPrefix(c.Reason, "FailedCreate"):
			name, action, where = "(new pod)", "refused", c.Reason
		case where == "" && len(c.Candidates) > 0:
			where = c.Reason
		case where == "":
			where = "fits no node: " + c.Reason
		}
		t.rows = append(t.rows, []string{"  " + name, action, where})
	}
	printGrid(pw, t, width)
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// Lines prints each line wrapped at the width, continuation lines under
// indent (a summary of one line per object).
func Lines(w io.Writer, lines []string, indent string, width int) error {
	if width <= 0 {
		width = StandardWidth
	}
	pw := &paragraphs{w: w, width: width}
	for _, l := range lines {
		pw.para(l, indent)
	}
	return pw.err
}
