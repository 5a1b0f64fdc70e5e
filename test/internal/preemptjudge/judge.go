// Package preemptjudge judges pkg/preemption against what a real
// scheduler did on a preemptgen scenario: the in-process 1.37 runs and the
// recorded answers of older releases go through the same rules.
package preemptjudge

import (
	"fmt"
	"math"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"

	"github.com/scale-preview/scale-preview/pkg/preemption"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/test/internal/chance"
	"github.com/scale-preview/scale-preview/test/versions/oraclegen/preemptgen"
)

// Cluster is a scenario decoded into this module's API types.
type Cluster struct {
	Nodes     []*corev1.Node
	Pods      []*corev1.Pod
	PDBs      []*policyv1.PodDisruptionBudget
	Preemptor *corev1.Pod
}

// Decode decodes every object strictly (an unknown field is an error).
func Decode(sc *preemptgen.Scenario) (*Cluster, error) {
	c := &Cluster{Preemptor: &corev1.Pod{}}
	for _, raw := range sc.Nodes {
		n := &corev1.Node{}
		if err := preemptgen.Strict(raw, n); err != nil {
			return nil, err
		}
		c.Nodes = append(c.Nodes, n)
	}
	for _, raw := range sc.Pods {
		p := &corev1.Pod{}
		if err := preemptgen.Strict(raw, p); err != nil {
			return nil, err
		}
		c.Pods = append(c.Pods, p)
	}
	for _, raw := range sc.PDBs {
		b := &policyv1.PodDisruptionBudget{}
		if err := preemptgen.Strict(raw, b); err != nil {
			return nil, err
		}
		c.PDBs = append(c.PDBs, b)
	}
	return c, preemptgen.Strict(sc.Preemptor, c.Preemptor)
}

// Predict runs the model under the rules of 1.<minor>.
func Predict(c *Cluster, minor int) (*preemption.Result, error) {
	return preemption.Predict(preemption.Input{Nodes: c.Nodes, Pods: c.Pods, PDBs: c.PDBs,
		Preemptor: c.Preemptor.DeepCopy(), Rules: rules.Scheduler(minor, nil)})
}

// Observed is one outcome of the real scheduler and how often it came.
type Observed struct {
	FitsOn []string // sorted; non-empty: no preemption
	// Tied are the nodes it nominated (or could have, in a tie) with their
	// victims; empty: no nomination.
	Tied  []preemptgen.Choice
	Count int
}

// Verdict counts what was checked.
type Verdict struct {
	Errors  []string
	Matched int // observations whose node and victims matched
}

// Judge checks a prediction against the real outcomes: nodes it fits on
// must be the same; a certain prediction must match every outcome (node
// and victims); an uncertain one must list every real node, with the same
// victims unless it said their order is undetermined, and give each node
// its measured frequency within chance.BeyondNoise (a tie counts its
// nodes in equal shares).
func Judge(pred *preemption.Result, obs []Observed) Verdict {
	var v Verdict
	errf := func(format string, a ...any) { v.Errors = append(v.Errors, fmt.Sprintf(format, a...)) }
	freq := map[string]float64{}
	total := 0
	predFits := slices.Sorted(slices.Values(pred.FitsOn))
	for _, o := range obs {
		if len(predFits) > 0 || len(o.FitsOn) > 0 {
			if !slices.Equal(o.FitsOn, predFits) {
				errf("predicted fits on %v, real fits on %v (nominated %v)", predFits, o.FitsOn, o.Tied)
			} else {
				v.Matched += o.Count
			}
			continue
		}
		total += o.Count
		if len(o.Tied) == 0 {
			freq[""] += float64(o.Count)
			if pred.Certain && pred.Nominated() != "" {
				errf("predicted nomination %q (%s), real none", pred.Nominated(), pred.Reason)
			} else {
				v.Matched += o.Count
			}
			continue
		}
		ok := true
		for _, c := range o.Tied {
			freq[c.Node] += float64(o.Count) / float64(len(o.Tied))
			var want []string
			found := false
			for _, out := range pred.Outcomes {
				if out.Node == c.Node {
					want, found = victimNames(out.Candidate), true
				}
			}
			switch {
			case pred.Certain && c.Node != pred.Nominated():
				errf("predicted nomination %q (%s), real %v", pred.Nominated(), pred.Reason, o.Tied)
				ok = false
			case !found:
				errf("real nomination %s %v not among predicted outcomes %v", c.Node, c.Victims, outcomeNodes(pred))
				ok = false
			case !slices.Equal(want, c.Victims) && !victimsUncertain(pred, c.Node):
				errf("on %s predicted victims %v, real %v", c.Node, want, c.Victims)
				ok = false
			}
		}
		if ok {
			v.Matched += o.Count
		}
	}
	if !pred.Certain && len(predFits) == 0 && total > 0 {
		for _, o := range pred.Outcomes {
			if chance.BeyondNoise(int(math.Round(freq[o.Node])), total, o.Probability) {
				errf("%s predicted %.2f, measured %.1f of %d", o.Node, o.Probability, freq[o.Node], total)
			}
		}
	}
	return v
}

// FromRecord turns a recorded case into observations.
func FromRecord(c *preemptgen.Case) []Observed {
	if len(c.FitsOn) > 0 {
		return []Observed{{FitsOn: c.FitsOn, Count: 1}}
	}
	var out []Observed
	for _, r := range c.Runs {
		out = append(out, Observed{Tied: r.Tied, Count: r.Offsets})
	}
	return out
}

func victimNames(c preemption.Candidate) []string {
	var out []string
	for _, v := range c.Victims {
		out = append(out, v.Pod.Name)
	}
	slices.Sort(out)
	return out
}

// victimsUncertain: the prediction said the victims on this node depend
// on the order of pods of equal rank.
func victimsUncertain(res *preemption.Result, node string) bool {
	for _, u := range res.Uncertain {
		if strings.HasPrefix(u, "on node "+node+" ") {
			return true
		}
	}
	return false
}

func outcomeNodes(r *preemption.Result) []string {
	var out []string
	for _, o := range r.Outcomes {
		out = append(out, o.Node)
	}
	return out
}
