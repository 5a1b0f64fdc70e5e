package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync"
)

// drainPrediction is the plugin's `drain -o json` contract
// (/work/notes/drain-contract.md, docs/output.md); other fields are ignored.
type drainPrediction struct {
	Certain  bool     `json:"certain"`
	Victims  []string `json:"victims"`
	Warnings []string `json:"warnings"`
	Drain    struct {
		Nodes []struct {
			Node      string   `json:"node"`
			Outcome   string   `json:"outcome"`
			Evicted   []string `json:"evicted"`
			Remaining []string `json:"remaining"`
			Skipped   []string `json:"skipped"`
			Certain   *bool    `json:"certain"`
			Reason    string   `json:"reason"`
			// Outcomes: the branches of a race, when they end the node
			// differently; the real outcome must be one of them.
			Outcomes []drainPredictedOutcome `json:"outcomes"`
		} `json:"nodes"`
		Replacements []drainPredictedReplacement `json:"replacements"`
	} `json:"drain"`
}

type drainPredictedOutcome struct {
	Outcome     string   `json:"outcome"`
	Probability *float64 `json:"probability"`
}

type drainPredictedReplacement struct {
	For        string   `json:"for"`
	Node       string   `json:"node"`
	Reason     string   `json:"reason"`
	Candidates []string `json:"candidates"`
	Certain    *bool    `json:"certain"`
	// Placements: the nodes the branches of a race give it ("" fits
	// nowhere); the real node must be one of them or a candidate.
	Placements []struct {
		Node string `json:"node"`
	} `json:"placements"`
}

func parseDrainPrediction(out string) (*drainPrediction, error) {
	var p drainPrediction
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		return nil, fmt.Errorf("plugin output is not the drain JSON: %w", err)
	}
	return &p, nil
}

// drainStats are the figures of a run: determined answers compared,
// mismatches, undetermined answers counted (never compared).
type drainStats struct {
	mu                    sync.Mutex
	scenarios             int
	predicted             int
	nodesCompared         int
	nodesUncertain        int
	nodesRaced            int // uncertain nodes judged against every branch of a race
	replacementsCompared  int
	replacementsRaced     int // raced replacement groups judged against every branch
	replacementsUncertain int
	mismatches            []string
	outcomes              map[string]int // real outcomes seen
	unschedulable         int            // replacements the scheduler could not place
	twoNode               int
	pluginFailures        []int // scenarios where the plugin gave no answer
}

func (s *drainStats) pluginFailed(scenario int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pluginFailures = append(s.pluginFailures, scenario)
}

var drainRun = &drainStats{outcomes: map[string]int{}}

func (s *drainStats) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprintf("drain e2e: %d scenarios (%d predicted), real outcomes %v, %d two-node drains, %d unschedulable replacements; "+
		"determined answers compared: %d node outcomes (with evicted/remaining/skipped), %d replacement groups; %d mismatches; "+
		"uncertain counted: %d nodes, %d replacement groups (of which judged against every branch of a race: %d nodes, %d groups); plugin failed (no answer) on scenarios %v",
		s.scenarios, s.predicted, s.outcomes, s.twoNode, s.unschedulable, s.nodesCompared, s.replacementsCompared, len(s.mismatches),
		s.nodesUncertain, s.replacementsUncertain, s.nodesRaced, s.replacementsRaced, s.pluginFailures)
}

// drainComparison compares one scenario's prediction with what happened.
type drainComparison struct {
	mismatches              []string
	nodes, nodesUncertain   int
	groups, groupsUncert    int
	nodesRaced, groupsRaced int
}

func (c *drainComparison) differ(format string, args ...any) {
	c.mismatches = append(c.mismatches, fmt.Sprintf(format, args...))
}

func compareDrain(p *drainPrediction, nodes []drainNodeObserved, repl map[string][]string, owners map[string]string) *drainComparison {
	c := &drainComparison{}
	if len(p.Drain.Nodes) != len(nodes) {
		c.differ("predicted %d nodes, drained %d", len(p.Drain.Nodes), len(nodes))
		return c
	}
	var evictedAll []string
	for i, o := range nodes {
		evictedAll = append(evictedAll, o.evicted...)
		pn := p.Drain.Nodes[i]
		if pn.Node != o.node {
			c.differ("node %d: predicted %s, kubectl drained %s", i, pn.Node, o.node)
			continue
		}
		if !boolOr(pn.Certain, p.Certain) {
			c.nodesUncertain++
			c.judgeRaced(o, pn.Outcomes)
			continue
		}
		c.nodes++
		c.compareNode(o, pn.Outcome, pn.Evicted, pn.Remaining, pn.Skipped)
	}
	if p.Certain && !sameSet(p.Victims, evictedAll) {
		c.differ("victims: predicted %v, evicted %v", p.Victims, sorted(evictedAll))
	}
	c.compareReplacements(p, repl, owners)
	return c
}

// judgeRaced: where the plugin lists a race's outcomes, the real outcome
// must be one of them.
func (c *drainComparison) judgeRaced(o drainNodeObserved, outcomes []drainPredictedOutcome) {
	if len(outcomes) == 0 {
		return
	}
	c.nodesRaced++
	var listed []string
	for _, x := range outcomes {
		if x.Outcome == o.outcome {
			return
		}
		listed = append(listed, x.Outcome)
	}
	c.differ("%s: kubectl drain %s, none of the race's outcomes %v (%s)", o.node, o.outcome, listed, firstLines(o.err, 3))
}

func (c *drainComparison) compareNode(o drainNodeObserved, outcome string, evicted, remaining, skipped []string) {
	if outcome != o.outcome {
		c.differ("%s: predicted %s, kubectl drain %s (%s)", o.node, outcome, o.outcome, firstLines(o.err, 3))
	}
	if !sameSet(evicted, o.evicted) {
		c.differ("%s evicted: predicted %v, real %v", o.node, sorted(evicted), o.evicted)
	}
	if o.outcome == "blocked" && !sameSet(remaining, o.remaining) {
		c.differ("%s remaining: predicted %v, real %v", o.node, sorted(remaining), o.remaining)
	}
	if !sameSet(skipped, o.skipped) {
		c.differ("%s skipped: predicted %v, real %v", o.node, sorted(skipped), o.skipped)
	}
}

// compareReplacements compares, per owner, how many replacements were
// created and scheduled (determined when the whole answer is certain) and,
// where a replacement itself is certain, the node it went to.
func (c *drainComparison) compareReplacements(p *drainPrediction, got map[string][]string, owners map[string]string) {
	want := map[string][]drainPredictedReplacement{}
	for _, r := range p.Drain.Replacements {
		if owner := owners[r.For]; owner != "" {
			want[owner] = append(want[owner], r)
		}
	}
	for owner, rs := range want {
		if !p.Certain {
			c.groupsUncert++
			c.judgeRacedReplacements(owner, rs, got[owner])
			continue
		}
		c.groups++
		var wantNodes []string
		scheduled := 0
		for _, r := range rs {
			if r.Node != "" || len(r.Candidates) > 0 {
				scheduled++
			}
			if r.Node != "" && boolOr(r.Certain, true) {
				wantNodes = append(wantNodes, r.Node)
			}
		}
		real := got[owner]
		realScheduled := 0
		for _, n := range real {
			if n != "" {
				realScheduled++
			}
		}
		if len(real) != len(rs) || realScheduled != scheduled {
			c.differ("%s: predicted %d replacements, %d scheduled; real %d, %d scheduled (nodes %q)", owner, len(rs), scheduled, len(real), realScheduled, real)
			continue
		}
		if !subMultiset(wantNodes, real) {
			c.differ("%s: predicted replacement nodes %v (certain), real %v", owner, sorted(wantNodes), real)
		}
	}
	// Owners that made replacements the prediction does not list.
	for owner, nodes := range got {
		if _, ok := want[owner]; !ok && p.Certain {
			c.differ("%s: %d replacements (nodes %q) that the prediction does not list", owner, len(nodes), nodes)
		}
	}
}

// judgeRacedReplacements: where the plugin lists a race's placements for
// an owner's replacements, every real one went to a node some branch gives
// (or a candidate), and fits nowhere only where some branch says so.
func (c *drainComparison) judgeRacedReplacements(owner string, rs []drainPredictedReplacement, real []string) {
	allowed := map[string]bool{}
	raced := false
	for _, r := range rs {
		raced = raced || len(r.Placements) > 0
		allowed[r.Node] = true
		for _, n := range r.Candidates {
			allowed[n] = true
		}
		for _, pl := range r.Placements {
			allowed[pl.Node] = true
		}
	}
	if !raced {
		return
	}
	c.groupsRaced++
	for _, n := range real {
		if !allowed[n] {
			c.differ("%s: a real replacement on %q, which no branch of the race gives (%v)", owner, n, sorted(keys(allowed)))
		}
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func boolOr(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

func sorted(xs []string) []string {
	out := slices.Clone(xs)
	sort.Strings(out)
	return out
}

// subMultiset: every node in want occurs in have, counted.
func subMultiset(want, have []string) bool {
	left := map[string]int{}
	for _, h := range have {
		left[h]++
	}
	for _, w := range want {
		if left[w] == 0 {
			return false
		}
		left[w]--
	}
	return true
}
