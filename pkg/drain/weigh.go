package drain

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// weigh gives the answer (the creation-order branch) the chances of every
// branch of the races: a node whose drain ends differently gets each
// outcome with its chance and shows the likeliest; a replacement placed
// differently gets each node with its chance; candidates span every
// branch.
func weigh(res *Result, branches []branch, exact bool, nodes []*corev1.Node) {
	res.Unweighed = !exact
	weighNodes(res, branches)
	weighReplacements(res, branches, nodes)
	if len(branches) > 1 && exact {
		res.Uncertain = append(res.Uncertain, fmt.Sprintf("kubectl evicts a node's pods in parallel: the plugin ran each of the %d orders in which their replacements can reach the scheduler (by owner), each as likely, and gives each outcome and node its chance", len(branches)))
	}
	if !exact {
		res.Uncertain = appendNew(res.Uncertain, fmt.Sprintf("the replacements race in more orders than the plugin runs (it ran %d): the outcomes and nodes listed are those the runs met, without chances", len(branches)))
	}
}

// weighNodes sums, per node, the chances of the branches by outcome.
func weighNodes(res *Result, branches []branch) {
	for i := range res.Nodes {
		var cs []Chance
		first := map[string]NodeResult{}
		for _, b := range branches {
			n := b.res.Nodes[i]
			j := slices.IndexFunc(cs, func(c Chance) bool { return c.Value == n.Outcome })
			if j < 0 {
				cs, j = append(cs, Chance{Value: n.Outcome, Reason: branchReason(n)}), len(cs)
				first[n.Outcome] = n
			}
			cs[j].P += b.p
		}
		if len(cs) < 2 {
			continue
		}
		// Stable: on a tie the creation-order branch's outcome stays first.
		slices.SortStableFunc(cs, func(a, b Chance) int { return cmp.Compare(b.P, a.P) })
		n := &res.Nodes[i]
		if cs[0].Value != n.Outcome {
			*n = first[cs[0].Value]
		}
		n.Outcomes, n.Certain, res.Certain = cs, false, false
	}
	res.Victims = nil
	for _, n := range res.Nodes {
		res.Victims = append(res.Victims, n.Evicted...)
	}
}

// branchReason is what the node's drain does in a branch, in a line.
func branchReason(n NodeResult) string {
	if n.Outcome == OutcomeDrained {
		if len(n.Evicted) == 0 {
			return "nothing to evict"
		}
		return "every pod kubectl acts on leaves: " + strings.Join(n.Evicted, ", ")
	}
	for _, p := range n.Pods {
		if _, unblock, ok := strings.Cut(p.Why, "; unblock: "); ok && p.Action == ActionBlocking {
			return n.Reason + "; unblock: " + unblock
		}
	}
	return n.Reason
}

// weighReplacements sums, per replacement, the chances of the branches by
// node, and lists those created only in other branches after the answer's.
func weighReplacements(res *Result, branches []branch, nodes []*corev1.Node) {
	dist := map[string][]Chance{}
	cands := map[string][]string{}
	fitError := map[string]string{}
	known := map[string]bool{}
	for _, r := range res.Replacements {
		known[r.For] = true
	}
	for _, b := range branches {
		for _, r := range b.res.Replacements {
			cands[r.For] = union(cands[r.For], r.Candidates)
			if r.Node == "" && fitError[r.For] == "" {
				fitError[r.For] = r.Reason
			}
			if !known[r.For] {
				known[r.For] = true
				r.Certain = false
				res.Replacements = append(res.Replacements, r)
			}
		}
		for _, sh := range alike(b.res.Replacements) {
			dist[sh.For] = addChance(dist[sh.For], sh.Node, sh.P*b.p)
		}
	}
	at := nodeOrder(nodes, len(branches))
	for i := range res.Replacements {
		r := &res.Replacements[i]
		for _, c := range dist[r.For] {
			if c.Value != "" && !slices.Contains(cands[r.For], c.Value) {
				// an alike replacement's node (alike): it fits there too
				cands[r.For] = append(cands[r.For], c.Value)
				if at == nil {
					at = nodeOrder(nodes, 2)
				}
			}
		}
		if at != nil {
			r.Candidates = byNodeOrder(cands[r.For], at)
		}
		cs := dist[r.For]
		if len(cs) == 1 && cs[0].P > 1-1e-9 {
			continue // placed alike in every branch
		}
		slices.SortStableFunc(cs, func(a, b Chance) int { return cmp.Compare(b.P, a.P) })
		r.Placements, r.Certain = cs, false
		if scheduledVaries(cs) {
			res.Certain = false // Certain covers whether it is scheduled, not where
		}
		for j := range cs {
			if cs[j].Value == "" {
				cs[j].Reason = fitError[r.For]
			}
		}
		r.Node, r.Reason = cs[0].Value, cs[0].Reason
	}
}

// scheduledVaries: some branches leave it Pending or never create it.
func scheduledVaries(cs []Chance) bool {
	total := 0.0
	for _, c := range cs {
		if c.Value == "" {
			return true
		}
		total += c.P
	}
	return total < 1-1e-9
}

// share is a replacement's chance of a node within one branch.
type share struct {
	For, Node string
	P         float64
}

// alike shares the nodes of replacements that raced in one round and are
// alike (one owner): which of them the scheduler took first is as much
// timing as the order of the owners, so each gets every node of the group
// with its count's share. The others keep their own node.
func alike(rs []Replacement) []share {
	groups := map[string][]Replacement{}
	var keys []string
	for _, r := range rs {
		k := "pod:" + r.For
		if r.raced {
			k = fmt.Sprintf("%d/%s", r.batch, r.class)
		}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], r)
	}
	var out []share
	for _, k := range keys {
		g := groups[k]
		for _, member := range g {
			for _, r := range g {
				out = append(out, share{For: member.For, Node: r.Node, P: 1 / float64(len(g))})
			}
		}
	}
	return out
}

func addChance(cs []Chance, value string, p float64) []Chance {
	if j := slices.IndexFunc(cs, func(c Chance) bool { return c.Value == value }); j >= 0 {
		cs[j].P += p
		return cs
	}
	return append(cs, Chance{Value: value, P: p})
}

func union(a, b []string) []string {
	for _, x := range b {
		if !slices.Contains(a, x) {
			a = append(a, x)
		}
	}
	return a
}

// nodeOrder is each node's place in the input, when several branches'
// candidates are merged (one branch's are in that order already).
func nodeOrder(nodes []*corev1.Node, branches int) map[string]int {
	if branches < 2 {
		return nil
	}
	at := make(map[string]int, len(nodes))
	for i, n := range nodes {
		at[n.Name] = i
	}
	return at
}

// byNodeOrder sorts names as the input lists the nodes.
func byNodeOrder(names []string, at map[string]int) []string {
	slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(at[a], at[b]) })
	return names
}
