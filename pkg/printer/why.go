package printer

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// why builds the WHY column: for a victim, the rule that puts it before the
// first pod kept; for a kept pod, the rule that keeps it after the last
// victim (the pods' vsBoundary), with the values compared. In the compact
// layout the row carries the rule's short label and the words go to a
// numbered legend.
type why struct {
	p       *prediction.Prediction
	compact bool
	wide    bool
	short   map[string]string // pod name -> the shortest unambiguous name
	notes   []string          // the compact layout's numbered legend
}

func newWhy(p *prediction.Prediction, opt TableOptions) *why {
	return &why{p: p, compact: opt.compact(), wide: opt.Wide, short: shortNames(p.Pods)}
}

func (w *why) cell(pod prediction.Pod) string {
	text, label := w.explain(pod)
	if text == "" {
		return "-"
	}
	if !w.compact || label == "" {
		return text
	}
	return w.legend(pod, text, label)
}

// legend puts a row's WHY text in the numbered legend and returns the
// row's short form: the label and the note's number.
func (w *why) legend(pod prediction.Pod, text, label string) string {
	if label == "" {
		label = "note"
	}
	w.notes = append(w.notes, fmt.Sprintf("[%d] %s: %s", len(w.notes)+1, pod.Name, text))
	return fmt.Sprintf("%s [%d]", label, len(w.notes))
}

// explain returns the WHY text and its short label ("" when the text is
// short enough to stand in the row).
func (w *why) explain(pod prediction.Pod) (string, string) {
	d := pod.VsBoundary
	if d == nil && pod.DecidedBy != nil && pod.DecidedBy.Rule == prediction.RuleOrdinal {
		d = pod.DecidedBy // StatefulSets: the ordinal decides alone
	}
	if d == nil {
		return pod.Reason, labelFor(pod.Reason)
	}
	var text string
	label := d.Rule + " " + d.Name
	switch d.Rule {
	case prediction.RuleOrdinal:
		text = orDash(pod.Reason)
		if pod.Reason == "" {
			text = d.Text
		}
		return text, "ordinal " + d.This
	case prediction.RuleTie:
		text = fmt.Sprintf("tie with %s", w.name(d.Against))
		label = "tie"
	default:
		text = fmt.Sprintf("%s %s (%s)", d.Rule, values(d, w.compact || w.wide), w.name(d.Against))
	}
	switch pod.Step {
	case prediction.StepRollout:
		text = "rollout: " + text
	case prediction.StepEither:
		text = "scale or rollout, by chance: " + text
	}
	if pod.ContenderGroup != nil {
		text += fmt.Sprintf(" [open choice %d]", *pod.ContenderGroup)
	}
	return text, label
}

// labelFor shortens a remark for the compact layout's row.
func labelFor(reason string) string {
	if len(reason) <= 24 {
		return ""
	}
	return "note"
}

// bucketNote and uidNote are the details -o wide and JSON keep.
var (
	bucketNote = regexp.MustCompile(` \(bucket -?\d+\)`)
	uidNote    = regexp.MustCompile(` uid \S+`)
)

// values says what a rule compared, in words: this pod's value first.
func values(d *prediction.Decision, keepBuckets bool) string {
	this, other := d.This, d.Other
	if (d.How == "bucket" || d.How == "uid") && !keepBuckets {
		// The ages show the order (or, in one bucket, the note below
		// does); -o wide and JSON keep the bucket numbers and UIDs.
		for _, re := range []*regexp.Regexp{bucketNote, uidNote} {
			this, other = re.ReplaceAllString(this, ""), re.ReplaceAllString(other, "")
		}
	}
	format := map[string]string{
		"R1": "%s vs %s", "R2": "phase %s vs %s", "R3": "%s vs %s", "R4": "deletion cost %s vs %s",
		"R5": "%s vs %s pods on the node", "R6": "ready %s vs %s", "R7": "restarts %s vs %s", "R8": "age %s vs %s",
	}[d.Rule]
	if format == "" {
		format = d.Name + " %s vs %s"
	}
	if d.How == "uid" && !keepBuckets {
		// One log2 bucket: the ages do not decide, the UIDs do.
		return map[string]string{"R6": "same ready-age bucket, lower UID", "R8": "same age bucket, lower UID"}[d.Rule]
	}
	s := fmt.Sprintf(format, this, other)
	if d.How == "uid" {
		s += ": same bucket, lower UID first"
	}
	return s
}

func (w *why) name(pod string) string {
	if s, ok := w.short[pod]; ok {
		return s
	}
	return pod
}

// shortNames maps each pod to the part after its last "-" when no other
// pod shares it (the ReplicaSet hash and the workload name repeat on every
// row).
func shortNames(pods []prediction.Pod) map[string]string {
	count := map[string]int{}
	suffix := func(n string) string { return n[strings.LastIndex(n, "-")+1:] }
	for _, p := range pods {
		count[suffix(p.Name)]++
	}
	m := map[string]string{}
	for _, p := range pods {
		if s := suffix(p.Name); count[s] == 1 && len(s) >= 3 {
			m[p.Name] = s
		}
	}
	return m
}

// adjacent is -o wide's DECIDED BY: the comparison with the next pod in
// deletion order.
func adjacent(pod prediction.Pod) string {
	d := pod.DecidedBy
	switch {
	case d == nil && pod.Reason != "":
		return pod.Reason
	case d == nil:
		return "-"
	case d.Against == "":
		return d.Rule + " " + d.Text
	case d.Rule == prediction.RuleTie:
		return fmt.Sprintf("TIE with %s: no rule separates them", d.Against)
	}
	return fmt.Sprintf("%s %s: %s vs %s (%s)", d.Rule, d.Name, d.This, d.Other, d.Against)
}

// fateCell shows every pod's chance of deletion the same way: the fate in
// the predicted outcome (or "tie" where equal chances decide) and the
// percentage. A percentage strictly between 0 and 1 never prints as 0% or
// 100%. ties is tieGroups(p).
func fateCell(ties []bool, pod prediction.Pod) string {
	var word string
	switch {
	case pod.Fate != prediction.FateDelete && pod.Fate != prediction.FateKeep:
		return pod.Fate
	case isTie(ties, pod):
		word = "tie"
	case pod.Fate == prediction.FateDelete:
		word = "DELETE"
	default:
		word = "keep"
	}
	if r := pod.DeleteProbabilityRange; len(r) == 2 {
		// A timing-decided chance: the range the cluster's load allows.
		return word + " " + rangeEnd(r[0]) + "–" + rangeEnd(r[1]) + "%"
	}
	return word + " " + percent(pod.DeleteProbability)
}

// rangeEnd is one end of a printed range, in whole percent: an open end
// stays within 1 to 99 (the range already says it is not certain), so a
// range reads "1–10%" or "65–99%", never "<1–10%".
func rangeEnd(x float64) string {
	pc := 100 * x
	if x > 0 && x < 1 {
		pc = min(max(pc, 1), 99)
	}
	return fmt.Sprintf("%.0f", pc)
}

// Percent formats a probability for a table: a chance that is neither
// none nor certain never reads as 0% or 100%.
func Percent(x float64) string {
	switch {
	case x <= 0:
		return "0%"
	case x >= 1:
		return "100%"
	case x < 0.01:
		return "<1%"
	case x > 0.99:
		return ">99%"
	}
	return fmt.Sprintf("%.0f%%", 100*x)
}

func percent(x float64) string { return Percent(x) }

// isTie: the pod's open choice gives every member the same chance, so no
// outcome is likelier than another.
func isTie(ties []bool, pod prediction.Pod) bool {
	return pod.ContenderGroup != nil && *pod.ContenderGroup >= 0 && *pod.ContenderGroup < len(ties) && ties[*pod.ContenderGroup]
}

// tieGroups tells, for each contender group, whether it is a tie. The
// chances are looked up once for all groups (per pod, this was quadratic).
func tieGroups(p *prediction.Prediction) []bool {
	if len(p.Contenders) == 0 {
		return nil
	}
	probs := make(map[string]float64, len(p.Pods))
	for _, pod := range p.Pods {
		probs[pod.Name] = pod.DeleteProbability
	}
	ties := make([]bool, len(p.Contenders))
	for i, g := range p.Contenders {
		ties[i] = len(g.Pods) > 1
		for _, n := range g.Pods {
			if math.Abs(probs[n]-probs[g.Pods[0]]) > 1e-9 {
				ties[i] = false
				break
			}
		}
	}
	return ties
}

func allTies(p *prediction.Prediction) bool {
	for _, t := range tieGroups(p) {
		if !t {
			return false
		}
	}
	return len(p.Contenders) > 0
}

// legend explains FATE and WHY under the table.
func legend(p *prediction.Prediction, w *why) []string {
	fate := "FATE: DELETE or keep, with the chance of deletion."
	if !p.Certain {
		fate = "FATE: the pod's fate in the likeliest outcome (\"tie\" when all outcomes are equally likely), " +
			"with its chance of deletion; chance decides every row between 0% and 100%."
		if slices.ContainsFunc(p.Pods, func(q prediction.Pod) bool { return len(q.DeleteProbabilityRange) == 2 }) {
			fate += " Two percentages (a range) are a chance the controllers' timing decides: it moves with the control plane's " +
				"load, which the plugin cannot see (-o json adds the central estimate)."
		}
	}
	whyLine := "WHY: the first rule that separates a victim from the first pod kept, or a kept pod from the last victim, " +
		"with both pods' values; the other pod is in parentheses. -o wide adds DECIDED BY (vs the next pod in order)."
	if p.StatefulSet != nil {
		whyLine = "WHY: a StatefulSet deletes its highest ordinals first; the ordinals kept are those in the range above."
	}
	out := []string{fate, whyLine}
	if len(w.notes) > 0 {
		out = append(out, w.notes...)
	}
	return out
}
