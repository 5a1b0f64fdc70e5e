package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/scale-preview/scale-preview/test/internal/chance"
)

// rolloutPrediction is the part of `kubectl scale-preview rollout -o json`
// the proof compares (the contract in docs/output.md).
type rolloutPrediction struct {
	Certain    bool               `json:"certain"`
	Victims    []string           `json:"victims"`
	Contenders []rolloutContender `json:"contenders"`
	Rollout    *struct {
		Kind      string   `json:"kind"`
		Outcome   string   `json:"outcome"`
		Reason    string   `json:"reason"`
		Unblock   string   `json:"unblock"`
		Remaining []string `json:"remaining"`
		Steps     []struct {
			Deleted []string `json:"deleted"`
			Created []struct {
				Pod        string             `json:"pod"`
				Node       string             `json:"node"`
				Candidates []string           `json:"candidates"`
				Chances    map[string]float64 `json:"chances"`
				Reason     string             `json:"reason"`
			} `json:"created"`
			WaitsFor     int `json:"waitsFor"`
			AvailableMin int `json:"availableMin"`
			Budgets      []struct {
				Name           string `json:"name"`
				DesiredHealthy int    `json:"desiredHealthy"`
				Violated       bool   `json:"violated"`
			} `json:"budgets"`
			Certain bool `json:"certain"`
		} `json:"steps"`
		IfNewPodsFail *struct {
			Deleted      []string `json:"deleted"`
			AvailableMin int      `json:"availableMin"`
		} `json:"ifNewPodsFail"`
	} `json:"rollout"`
}

func parseRolloutPrediction(out string) (*rolloutPrediction, error) {
	var p rolloutPrediction
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		return nil, fmt.Errorf("plugin output is not JSON: %w", err)
	}
	if p.Rollout == nil {
		return nil, fmt.Errorf("plugin output has no rollout object")
	}
	switch p.Rollout.Outcome {
	case "completes", "stalls", "not-started":
	default:
		return nil, fmt.Errorf("rollout.outcome %q is not completes|stalls|not-started", p.Rollout.Outcome)
	}
	return &p, nil
}

// updateComparison counts what was compared and what differed.
type updateComparison struct {
	compared, uncertain []string // aspects
	mismatches          []string
	chances             []chanceObs
}

type chanceObs struct {
	p   float64
	hit bool
}

func (c *updateComparison) check(aspect string, same bool, format string, args ...any) {
	c.compared = append(c.compared, aspect)
	if !same {
		c.mismatches = append(c.mismatches, aspect+": "+fmt.Sprintf(format, args...))
	}
}

// compareUpdate compares a prediction with the real rollout. Everything
// the plugin calls determined must match; uncertain parts are counted.
func compareUpdate(s *updateScenario, p *rolloutPrediction, o *updateObserved) *updateComparison {
	c := &updateComparison{}
	r := p.Rollout
	if s.kind == "DaemonSet" {
		c.compareDaemonSet(p, o)
		return c
	}
	if s.newNeverReady {
		c.compareBadRelease(p, o)
		return c
	}
	// Where the scheduler's scoring or a tie leaves the order or the nodes
	// open (certain false), the outcome, a completing rollout's victims (every
	// old pod) and the budgets' counts still are determined.
	if o.backOff {
		// Stalled with room in the quota: the rest comes after the
		// ReplicaSet controller's back-off, a matter of time only.
		c.uncertain = append(c.uncertain, "outcome (quota back-off)")
		if !p.Certain {
			return c
		}
		c.check("victims", subMultiset(o.victims, p.Victims), "real %v not all among the predicted %v", o.victims, p.Victims)
		return c
	}
	c.check("outcome", r.Outcome == o.outcome, "predicted %s (%s), real %s", r.Outcome, r.Reason, o.outcome)
	if p.Certain || r.Outcome == "completes" {
		c.check("victims", sameSet(p.Victims, o.victims), "predicted %v, real %v", p.Victims, o.victims)
	} else {
		c.uncertain = append(c.uncertain, "victims")
	}
	if p.Certain && r.Outcome == "stalls" {
		c.check("remaining", sameSet(r.Remaining, o.remaining), "predicted %v, real %v", r.Remaining, o.remaining)
	}
	c.compareBudgets(p, o)
	c.compareSteps(p, o)
	c.comparePlacements(p, o)
	return c
}

// compareBadRelease: the new revision never turns Ready, so the real
// rollout is what ifNewPodsFail predicts.
func (c *updateComparison) compareBadRelease(p *rolloutPrediction, o *updateObserved) {
	f := p.Rollout.IfNewPodsFail
	if f == nil {
		c.check("ifNewPodsFail", false, "missing")
		return
	}
	c.check("ifNewPodsFail.availableMin", f.AvailableMin == o.rec.availableMin, "predicted %d, real %d", f.AvailableMin, o.rec.availableMin)
	c.compareBudgets(p, o)
	// The old pods deleted before the first new pod is needed are the
	// first step's, whose ranking the snapshot determines.
	if !p.Certain && (len(p.Rollout.Steps) == 0 || !p.Rollout.Steps[0].Certain) {
		c.uncertain = append(c.uncertain, "ifNewPodsFail")
		return
	}
	c.check("ifNewPodsFail.deleted", sameSet(f.Deleted, o.victims), "predicted %v, real %v", f.Deleted, o.victims)
}

// compareSteps: the real deletion passes and the predicted steps'
// deleted sets must have a common coarsening, in order: two steps merge
// when their new pods turn Ready in one kubelet pass, and a pass splits
// when the API is slow. Compared up to the first uncertain step.
func (c *updateComparison) compareSteps(p *rolloutPrediction, o *updateObserved) {
	var steps [][]string
	cut := false
	for _, st := range p.Rollout.Steps {
		if !st.Certain {
			c.uncertain = append(c.uncertain, "steps")
			cut = true
			break
		}
		if len(st.Deleted) > 0 {
			steps = append(steps, st.Deleted)
		}
	}
	i, j := 0, 0
	var real, pred []string
	for i < len(o.batches) || j < len(steps) {
		switch {
		case len(real) <= len(pred) && i < len(o.batches) && (len(real) < len(pred) || len(real) == 0):
			real = append(real, o.batches[i]...)
			i++
		case len(pred) <= len(real) && j < len(steps):
			pred = append(pred, steps[j]...)
			j++
		case cut:
			return // the rest was uncertain
		default:
			c.check("step", false, "real passes %v, predicted steps %v: %v left over against %v", o.batches, steps, real, pred)
			return
		}
		if len(real) == len(pred) {
			c.check("step", sameSet(real, pred), "real passes %v, predicted steps %v: %v against %v", o.batches, steps, real, pred)
			if !sameSet(real, pred) {
				return
			}
			real, pred = nil, nil
		}
	}
}

// comparePlacements: determined nodes must be where new pods were bound
// (as a multiset; StatefulSet pods by name), tied ones must land on a
// candidate, and as many new pods as predicted must fit nowhere.
func (c *updateComparison) comparePlacements(p *rolloutPrediction, o *updateObserved) {
	var realNodes []string
	byName := map[string]string{}
	unbound := 0
	for _, cr := range o.created {
		_, name, _ := strings.Cut(cr.pod, "/")
		byName[name] = cr.node
		if cr.node == "" {
			unbound++
		} else {
			realNodes = append(realNodes, cr.node)
		}
	}
	var want []string
	nowhere := 0
	for _, st := range p.Rollout.Steps {
		for _, cr := range st.Created {
			switch {
			case len(cr.Candidates) > 0:
				c.uncertain = append(c.uncertain, "placement")
				c.checkCandidates(cr.Pod, cr.Candidates, cr.Chances, byName, realNodes)
			case strings.HasPrefix(cr.Reason, "FailedCreate"):
				// refused by quota admission: never a pod
			case cr.Node == "" && cr.Reason != "":
				nowhere++
			case cr.Pod != "" && st.Certain:
				if got, ok := byName[cr.Pod]; ok {
					c.check("placement", got == cr.Node, "%s predicted on %s, bound to %q", cr.Pod, cr.Node, got)
				}
			case cr.Node != "" && st.Certain:
				want = append(want, cr.Node)
			}
		}
	}
	if len(want) > 0 {
		c.check("placement", subMultiset(want, realNodes), "predicted nodes %v, real %v", sorted(want), sorted(realNodes))
	}
	if p.Certain && p.Rollout.Outcome == "stalls" {
		c.check("fits-nowhere", nowhere == unbound, "predicted %d new pods that fit nowhere, real %d unbound", nowhere, unbound)
	}
}

func (c *updateComparison) checkCandidates(pod string, cands []string, chances map[string]float64, byName map[string]string, realNodes []string) {
	got := ""
	if pod != "" {
		got = byName[pod]
	}
	if got == "" {
		for _, n := range realNodes {
			if slices.Contains(cands, n) {
				got = n
				break
			}
		}
	}
	if got == "" {
		return
	}
	c.check("candidates", slices.Contains(cands, got), "%s bound to %s, not among the candidates %v", pod, got, cands)
	for node, pr := range chances {
		c.chances = append(c.chances, chanceObs{p: pr, hit: node == got})
	}
}

// compareBudgets: a budget is broken when the healthy pods it selects
// fell below its desiredHealthy at any moment.
func (c *updateComparison) compareBudgets(p *rolloutPrediction, o *updateObserved) {
	predicted := map[string]bool{}
	desired := map[string]int{}
	steps := p.Rollout.Steps
	if s := p.Rollout.IfNewPodsFail; s != nil && o.rec.newNeverReady {
		steps = steps[:min(1, len(steps))] // a bad release stops in the first step
	}
	for _, st := range steps {
		for _, b := range st.Budgets {
			predicted[b.Name] = predicted[b.Name] || b.Violated
			desired[b.Name] = b.DesiredHealthy
		}
	}
	for name, w := range o.rec.pdbs {
		if d, ok := desired[name]; ok {
			c.check("budget.desiredHealthy", d == w.desiredHealthy, "%s: predicted %d, the disruption controller's %d", name, d, w.desiredHealthy)
		}
		real := o.rec.pdbMin[name] < w.desiredHealthy
		c.check("budget.violated", predicted[name] == real, "%s: predicted violated=%v, real healthy min %d of %d", name, predicted[name], o.rec.pdbMin[name], w.desiredHealthy)
	}
}

// updateStats is the run's tally, printed at the end of TestRolloutUpdateE2E.
type updateStats struct {
	mu                          sync.Mutex
	scenarios, predicted        int
	outcomes                    map[string]int
	compared, agreed, uncertain map[string]int
	selfChecks, selfFailed      int
	mismatches                  []string
	chances                     map[string][2]int // predicted probability -> hits, trials
	skipped                     []string
}

var updateRun = &updateStats{outcomes: map[string]int{}, compared: map[string]int{}, agreed: map[string]int{},
	uncertain: map[string]int{}, chances: map[string][2]int{}}

func (st *updateStats) add(c *updateComparison, scenario int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.predicted++
	bad := map[string]int{}
	for _, m := range c.mismatches {
		aspect, _, _ := strings.Cut(m, ":")
		bad[aspect]++
		st.mismatches = append(st.mismatches, fmt.Sprintf("scenario %d: %s", scenario, m))
	}
	for _, a := range c.compared {
		st.compared[a]++
		st.agreed[a]++
	}
	for a, n := range bad {
		st.agreed[a] -= n
	}
	for _, a := range c.uncertain {
		st.uncertain[a]++
	}
	for _, ch := range c.chances {
		k := fmt.Sprintf("%.2f", ch.p)
		v := st.chances[k]
		if ch.hit {
			v[0]++
		}
		v[1]++
		st.chances[k] = v
	}
}

// chanceMisses are the predicted probabilities whose measured frequency
// is off beyond the tolerance and the sampling noise.
func (st *updateStats) chanceMisses() []string {
	var out []string
	for k, v := range st.chances {
		var p float64
		if _, err := fmt.Sscanf(k, "%g", &p); err != nil {
			continue
		}
		if chance.BeyondNoise(v[0], v[1], p) {
			out = append(out, fmt.Sprintf("p=%s: %d of %d", k, v[0], v[1]))
		}
	}
	sort.Strings(out)
	return out
}

func (st *updateStats) String() string {
	st.mu.Lock()
	defer st.mu.Unlock()
	var aspects []string
	for a := range st.compared {
		aspects = append(aspects, a)
	}
	sort.Strings(aspects)
	var parts []string
	for _, a := range aspects {
		parts = append(parts, fmt.Sprintf("%s %d/%d", a, st.agreed[a], st.compared[a]))
	}
	s := fmt.Sprintf("rollout e2e: %d scenarios (%v), %d predicted; agreed %s; uncertain %v; chances %v; self-checks %d (%d failed); %d mismatches",
		st.scenarios, st.outcomes, st.predicted, strings.Join(parts, ", "), st.uncertain, st.chances, st.selfChecks, st.selfFailed, len(st.mismatches))
	skipped := map[string][]string{}
	var why []string
	for _, sk := range st.skipped {
		n, reason, _ := strings.Cut(sk, ": ")
		if skipped[reason] == nil {
			why = append(why, reason)
		}
		skipped[reason] = append(skipped[reason], n)
	}
	for _, reason := range why {
		s += fmt.Sprintf("; comparison skipped in scenarios %s: %s", strings.Join(skipped[reason], ","), reason)
	}
	return s
}
