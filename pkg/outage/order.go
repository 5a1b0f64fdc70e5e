package outage

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// made is one replacement's pod as placed (bound when Node is set), its
// owner's key and its template's (scheduling.Alike), parallel to
// Result.Replacements.
type made struct {
	pod   *corev1.Pod
	owner types.UID
	key   string
}

// orderDoubts: replacements whose creation windows overlap may be created
// in any order (pods deleted by the taint eviction controller's workers,
// nodes sharing a zone queue in heartbeat order). The model placed them
// in one order; in another, one of them may take the room another was
// given. Run after every placement: each run of overlapping windows is
// looked at on the view as it was before the run (its pods removed, last
// run first), where its candidates are every node it can reach in any
// order, and a placement stays certain only if the others that may reach
// its node leave it room.
func (f *follower) orderDoubts() {
	reps := f.s.res.Replacements
	if f.view == nil || len(f.made) != len(reps) {
		return
	}
	runs := overlapRuns(reps)
	for i := len(runs) - 1; i >= 0; i-- {
		run := runs[i]
		for _, k := range run {
			if f.made[k].pod.Spec.NodeName != "" {
				f.view.Remove(f.made[k].pod)
			}
		}
		if len(run) > 1 {
			f.runDoubts(run)
		}
	}
}

// overlapRuns groups the replacements (in creation order) into maximal
// runs of overlapping creation windows.
func overlapRuns(reps []Replacement) [][]int {
	var runs [][]int
	end := 0.0
	for k, r := range reps {
		if len(runs) > 0 && r.At.Min <= end {
			runs[len(runs)-1] = append(runs[len(runs)-1], k)
			end = max(end, r.At.Max)
			continue
		}
		runs, end = append(runs, []int{k}), r.At.Max
	}
	return runs
}

// runDoubts widens the run's candidates to every order and doubts the
// placements another order can change.
func (f *follower) runDoubts(run []int) {
	reps := f.s.res.Replacements
	reach := map[types.UID][]string{} // per owner, on the view before the run
	sets := map[types.UID]map[string]bool{}
	first := map[types.UID]made{} // the replacement reach was found for
	for _, k := range run {
		m := f.made[k]
		if _, ok := reach[m.owner]; ok {
			continue
		}
		first[m.owner] = m
		pl, _, err := f.alike.Place(unbound(m.pod), m.key)
		if err != nil {
			return // the placement met the error already, said so
		}
		reach[m.owner], sets[m.owner] = pl.Feasible, map[string]bool{}
		for _, n := range pl.Feasible {
			sets[m.owner][n] = true
		}
	}
	if len(reach) < 2 {
		return // one owner's replacements: the same pods in any order
	}
	room := map[string]bool{} // node|owner|n: still fits with every rival there
	for _, k := range run {
		r, m := &reps[k], f.made[k]
		if within(m, first[m.owner]) {
			r.Candidates = slices.Clip(reach[m.owner])
		} else {
			r.Candidates = anyOrder(reach[m.owner], r.Candidates, sets[m.owner])
		}
		switch {
		case !r.Certain:
		case r.Node == "" && f.tookRoom(run, m.owner, sets):
			f.orderDoubt(r, fmt.Sprintf("fits nowhere in the order modelled, but %s may be free had it been created earlier", nodeList(reach[m.owner])))
		case r.Node != "" && len(r.Candidates) > 1:
			f.orderDoubt(r, fmt.Sprintf("in another order it may go to %s", nodeList(r.Candidates)))
		case r.Node != "" && !f.roomLeft(run, k, sets, room):
			f.orderDoubt(r, fmt.Sprintf("another replacement created first in another order may take the room it needs on %s", r.Node))
		}
	}
}

// tookRoom: a replacement of another owner in the run was placed where
// owner's could go (its own are the same pods in any order).
func (f *follower) tookRoom(run []int, owner types.UID, reach map[types.UID]map[string]bool) bool {
	for _, j := range run {
		if m := f.made[j]; m.owner != owner && reach[owner][m.pod.Spec.NodeName] {
			return true
		}
	}
	return false
}

// roomLeft: replacement k still fits on its node with, bound there first,
// every replacement of another owner in the run that can reach it (the
// worst order) and those of its own owner the order modelled put there
// before it (its own are the same pods in any order).
func (f *follower) roomLeft(run []int, k int, reach map[types.UID]map[string]bool, memo map[string]bool) bool {
	node, self := f.made[k].pod.Spec.NodeName, f.made[k].owner
	var rivals []*corev1.Pod
	own := 0
	for _, j := range run {
		m := f.made[j]
		switch {
		case m.owner == self && j < k && m.pod.Spec.NodeName == node:
			own++
		case m.owner == self || !reach[m.owner][node]:
			continue
		}
		rivals = append(rivals, m.pod)
	}
	if len(rivals) == own {
		return true // only its own, where the order modelled had them
	}
	key := fmt.Sprintf("%s|%s|%d", node, self, own)
	if v, ok := memo[key]; ok {
		return v
	}
	var added []*corev1.Pod
	for _, q := range rivals {
		p := unbound(q)
		p.Spec.NodeName, p.Status.Phase = node, corev1.PodRunning
		if f.view.Add(p) == nil {
			added = append(added, p)
		}
	}
	pl, _, err := f.alike.Place(unbound(f.made[k].pod), f.made[k].key)
	ok := err == nil && slices.Contains(pl.Feasible, node)
	for _, p := range added {
		f.view.Remove(p)
	}
	memo[key] = ok
	return ok
}

func (f *follower) orderDoubt(r *Replacement, why string) {
	r.Certain = false
	r.Reason = appendReason(r.Reason, why+" (the deletions' order is timing)")
	f.s.doubt(fmt.Sprintf("replacements of %s: their placement depends on the order in which the deletions happen (timing)", r.Owner))
}

// anyOrder is every node reachable in some order: those reachable on the
// view before the run (shared by the owner's replacements, never
// changed), then any the order modelled found besides.
func anyOrder(reach, found []string, in map[string]bool) []string {
	var extra []string
	for _, n := range found {
		if !in[n] {
			extra = append(extra, n)
		}
	}
	if len(extra) == 0 {
		return slices.Clip(reach)
	}
	return append(slices.Clone(reach), extra...)
}

// within: the nodes pod's placement found are among those found for
// first on the view before the run, without looking (thousands of nodes
// for each of a zone's replacements). The run only added pods, and m,
// alike first (the same template and priority), is monotone: added pods
// only make its filters fail more.
func within(m, first made) bool {
	p, q := m.pod.Spec.Priority, first.pod.Spec.Priority
	return monotone(m.pod) && m.key == first.key && (p == q || p != nil && q != nil && *p == *q)
}

// unbound is a pending copy of a placed replacement.
func unbound(p *corev1.Pod) *corev1.Pod {
	cp := *p
	cp.Spec.NodeName, cp.Status.Phase = "", corev1.PodPending
	return &cp
}

func nodeList(nodes []string) string {
	if len(nodes) > 3 {
		return fmt.Sprintf("%s, %s, %s and %d more", nodes[0], nodes[1], nodes[2], len(nodes)-3)
	}
	return fmt.Sprint(nodes)
}
