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
// Alike steps and rows are counted, not printed, but with -o wide.
func RolloutTable(w io.Writer, p *prediction.Prediction, opt TableOptions) error {
	width := opt.Width
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
	rolloutSteps(pw, r.Steps, opt, width)
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
		pw.para(fmt.Sprintf("Remaining old pods (%d): %s", len(r.Remaining), nodeList(r.Remaining, opt.podNames())), "  ")
	}
	f := r.IfNewPodsFail
	pw.para(fmt.Sprintf("If the new pods never become Ready: %d old pod(s) deleted before the rollout stops (%s); %d available at the lowest.",
		len(f.Deleted), orNone(f.Deleted, opt.podNames()), f.AvailableMin), "  ")
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

func rolloutStep(pw *paragraphs, n int, st prediction.RolloutStep, opt TableOptions, width int) {
	pw.blank()
	pw.para(stepHead(fmt.Sprintf("STEP %d", n), st), "  ")
	for _, b := range st.Budgets {
		state := "kept"
		if b.Violated {
			state = "VIOLATED (a rollout never asks the Eviction API)"
		}
		pw.para(fmt.Sprintf("  budget %s: %d healthy at least, %d desired: %s", b.Name, b.CurrentHealthyMin, b.DesiredHealthy, state), "    ")
	}
	t := grid{header: []string{"  POD", "ACTION", "NODE / WHY"}}
	deleted := st.Deleted
	if !opt.Wide && len(deleted) > rowsShown {
		deleted = deleted[:rowsShown]
	}
	for i, d := range deleted {
		why := ""
		if i < len(st.Why) {
			why = st.Why[i]
		}
		t.rows = append(t.rows, []string{"  " + d, "deleted", why})
	}
	created, more := createdRows(st.Created, opt.Wide)
	t.rows = append(t.rows, created...)
	printGrid(pw, t, width)
	if left := st.Deleted[len(deleted):]; len(left) > 0 {
		pw.para("  "+moreLikeThese(len(left), ": deleted after these, in rank order: "+nodeList(left, opt.podNames())), "    ")
	}
	if more != "" {
		pw.para("  "+more, "    ")
	}
}

// stepHead is a step's (or a run of alike steps') first line.
func stepHead(title string, st prediction.RolloutStep) string {
	head := fmt.Sprintf("%s: %d deleted, %d created; available at least %d", title, len(st.Deleted), len(st.Created), st.AvailableMin)
	if st.WaitsFor > 0 {
		head += fmt.Sprintf("; waits for %d new pod(s) available", st.WaitsFor)
	}
	if !st.Certain {
		head += " (uncertain)"
	}
	return head
}

func orNone(s []string, most int) string {
	if len(s) == 0 {
		return "none"
	}
	return nodeList(s, most)
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
