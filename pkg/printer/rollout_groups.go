package printer

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// rowsShown is how many deleted pods, and how many distinct created rows,
// a step prints; -o wide prints them all.
const rowsShown = 5

// podNames is how many pod names a list prints before "+N more".
func (o TableOptions) podNames() int {
	if o.Wide {
		return math.MaxInt
	}
	return 5
}

// rolloutSteps prints the steps; a run of alike steps (the same counts,
// availability, budgets' states and kinds of placement) prints its first
// sectionsShown, then one line for the rest.
func rolloutSteps(pw *paragraphs, steps []prediction.RolloutStep, opt TableOptions, width int) {
	for i := 0; i < len(steps); {
		j := i + 1
		for j < len(steps) && alikeSteps(steps[i], steps[j]) {
			j++
		}
		shown := j
		if !opt.Wide {
			shown = min(j, i+sectionsShown)
		}
		for k := i; k < shown; k++ {
			rolloutStep(pw, k+1, steps[k], opt, width)
		}
		if shown < j {
			pw.blank()
			pw.para(stepHead(fmt.Sprintf("STEPS %d-%d", shown+1, j), steps[shown])+"; "+
				moreLikeThese(j-shown, ", each as the step above in its counts, availability and budgets"), "  ")
		}
		i = j
	}
}

// alikeSteps: what an operator reads off a step is the same.
func alikeSteps(a, b prediction.RolloutStep) bool {
	if len(a.Deleted) != len(b.Deleted) || len(a.Created) != len(b.Created) || a.AvailableMin != b.AvailableMin ||
		a.WaitsFor != b.WaitsFor || a.Certain != b.Certain || len(a.Budgets) != len(b.Budgets) {
		return false
	}
	for i := range a.Budgets {
		if a.Budgets[i] != b.Budgets[i] {
			return false
		}
	}
	return slices.Equal(placementKinds(a.Created), placementKinds(b.Created))
}

// placementKinds: for each created pod, whether it is bound, left to the
// scoring, or fits nowhere (and why).
func placementKinds(cs []prediction.RolloutCreate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		switch {
		case c.Node != "":
			out[i] = "bound"
		case len(c.Candidates) > 0:
			out[i] = "scored"
		default:
			out[i] = c.Reason
		}
	}
	return out
}

// createdRows are a step's created rows: generated pods with the same
// placement are one row ("(N new pods)"); past rowsShown distinct rows,
// one line counts the rest.
func createdRows(cs []prediction.RolloutCreate, wide bool) (rows [][]string, more string) {
	type row struct {
		name, action, where string
		n                   int
	}
	var out []*row
	at := map[string]*row{}
	for _, c := range cs {
		name, action, where := createdCell(c)
		key := action + "\x00" + where
		if r, ok := at[key]; ok && c.Pod == "" && !wide {
			r.n++
			continue
		}
		r := &row{name: name, action: action, where: where, n: 1}
		out = append(out, r)
		if c.Pod == "" {
			at[key] = r
		}
	}
	var left []string
	for i, r := range out {
		if !wide && i >= rowsShown {
			left = append(left, r.where)
			continue
		}
		if r.n > 1 {
			r.name = fmt.Sprintf("(%d new pods)", r.n)
		}
		rows = append(rows, []string{"  " + r.name, r.action, r.where})
	}
	if len(left) > 0 {
		more = moreLikeThese(len(left), ": created, "+nodeList(left, 3))
	}
	return rows, more
}

// createdCell is a created pod's name, action and where it goes (or why
// nowhere).
func createdCell(c prediction.RolloutCreate) (name, action, where string) {
	name, action, where = c.Pod, "created", c.Node
	if name == "" {
		name = "(new pod)"
	}
	switch {
	case strings.HasPrefix(c.Reason, "FailedCreate"):
		name, action, where = "(new pod)", "refused", c.Reason
	case where == "" && len(c.Candidates) > 0:
		where = c.Reason
	case where == "":
		where = "fits no node: " + c.Reason
	}
	return name, action, where
}
