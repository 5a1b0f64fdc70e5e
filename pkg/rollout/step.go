package rollout

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/deployment"
	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/workload"
)

// stepRun is one step as it happens.
type stepRun struct {
	out     prediction.RolloutStep
	changed bool // the controllers did something
}

// step runs the deployment and ReplicaSet controllers until neither has
// anything left to do at this availability.
func (s *sim) step() stepRun {
	st := stepRun{out: prediction.RolloutStep{Certain: true}}
	s.unbound = nil // the last step's terminations changed the view
	s.retryPlacement(&st)
	s.reconcilePods(&st)
	for range maxSyncs {
		s.refresh()
		next, changes := deployment.Sync(s.d, s.state, deployment.Version(s.in.Rules.Minor))
		acted := false
		for _, ch := range changes {
			if ch.Error != "" {
				s.warnings = append(s.warnings, fmt.Sprintf("the deployment controller's update of %s fails: %s", ch.ReplicaSet, ch.Error))
				break
			}
			acted = acted || ch.From != ch.To
		}
		s.state = next
		if !acted {
			break
		}
		st.changed = true
		s.reconcilePods(&st)
	}
	st.out.AvailableMin = s.available()
	st.out.Budgets = s.budgetStates()
	return st
}

// reconcilePods is each ReplicaSet controller bringing its pods to
// spec.replicas: the ranking picks the pods to delete; new pods are placed.
func (s *sim) reconcilePods(st *stepRun) {
	for _, r := range s.state {
		have := int32(len(s.pods[r.Name]))
		switch {
		case have > r.Replicas:
			s.deletePods(r.Name, int(have-r.Replicas), st)
			st.changed = true
		case have < r.Replicas && r.New:
			s.createPods(r.Name, int(r.Replicas-have), st)
		}
	}
}

// createPods is the ReplicaSet controller's creation of n pods; the quota
// admission may refuse one (FailedCreate), and then the rest of the burst
// (the controller's slow start stops at the first error).
func (s *sim) createPods(rs string, n int, st *stepRun) {
	for range n {
		m := s.createPod(rs)
		if msg := s.admit(m.pod); msg != "" {
			s.created--
			if s.quotaBlocked != msg || len(st.out.Created) == 0 {
				st.out.Created = append(st.out.Created, prediction.RolloutCreate{Reason: msg + "; " + quotaRetryShort})
			}
			s.quotaBlocked = msg
			return
		}
		retried := s.quotaBlocked != ""
		s.quotaBlocked = ""
		s.pods[rs] = append(s.pods[rs], m)
		s.placeAlike(m)
		c := created(m)
		if retried {
			c.Reason = strings.TrimSuffix(quotaRetried+"; "+c.Reason, "; ")
		}
		st.out.Created = append(st.out.Created, c)
		st.changed = true
	}
}

// placeAlike places a new pod, or gives it the answer the step's last
// placement got when that pod was bound nowhere (several nodes pass, or
// none): the verdict depends on the view, the template and whether an
// earlier new pod is unbound, and an unbound pod leaves the view as it
// was. So once a placement left all three as they were, thousands of
// surge pods cost one pass of the filters, not one each.
func (s *sim) placeAlike(m *member) {
	if u := s.unbound; u != nil {
		m.candidates, m.fitError = u.candidates, u.fitError
		return
	}
	before := s.unboundNew()
	s.place(m)
	if m.pod.Spec.NodeName == "" && s.unboundNew() == before {
		s.unbound = m
	}
}

// deletePods is the ReplicaSet controller's scale-down of rs by n: its
// active pods ranked against the related pods of every ReplicaSet. After
// several new pods became available (s.oneByOne) the controller sees them
// in groups that timing decides, and deletes each group's share after one
// sort of what is left; where the groupings delete other pods (the ranks
// move as pods go), the step is uncertain. The one-at-a-time picks are
// shown, readiness events being separate.
func (s *sim) deletePods(rs string, n int, st *stepRun) {
	picks := s.rank(rs, n, nil, st)
	if s.oneByOne && n > maxSequential && s.ranksDiffer(rs) {
		st.out.Certain, s.certain = false, false
		s.warnings = append(s.warnings, fmt.Sprintf("%s: which %d pods go depends on how the new pods' readiness reaches the controller (shown: all together)", rs, n))
	}
	if s.oneByOne && n > 1 && n <= maxSequential {
		seq := s.sequential(rs, n, st)
		if sets := s.groupings(rs, n, st); sets > 1 || !samePicks(picks, seq) {
			st.out.Certain, s.certain = false, false
			s.warnings = append(s.warnings, fmt.Sprintf("%s: which %d pods go depends on how the new pods' readiness reaches the controller (together: %s; one at a time: %s, shown)", rs, n, pickNames(picks), pickNames(seq)))
		}
		picks = seq
	}
	gone := map[string]bool{}
	for _, p := range picks {
		gone[p.name] = true
		st.out.Deleted = append(st.out.Deleted, s.in.Deployment.Namespace+"/"+p.name)
		st.out.Why = append(st.out.Why, p.why)
	}
	var keep []*member
	for _, m := range s.pods[rs] {
		if gone[m.pod.Name] {
			s.markTerminating(m)
			s.terminat = append(s.terminat, m)
		} else {
			keep = append(keep, m)
		}
	}
	s.pods[rs] = keep
}

// sequential: one pod per sync, each re-ranked.
func (s *sim) sequential(rs string, n int, st *stepRun) []pick {
	var seq []pick
	gone := map[string]bool{}
	for range n {
		p := s.rank(rs, 1, gone, st)
		seq = append(seq, p...)
		gone[p[0].name] = true
	}
	return seq
}

// maxSequential is the largest share re-ranked one pod at a time (n sorts
// of the ReplicaSet); above it one sort is shown, uncertain where ranks differ.
const maxSequential = 64

// maxGrouped is the largest share whose every grouping is tried (2^(n-1)
// of them); above it, differing ranks alone make the step uncertain.
const maxGrouped = 8

// groupings counts the distinct sets of pods the n deletions take over
// every way of splitting them into successive sorts.
func (s *sim) groupings(rs string, n int, st *stepRun) int {
	if n > maxGrouped {
		if s.ranksDiffer(rs) {
			return 2
		}
		return 1
	}
	sets := map[string]bool{}
	var walk func(left int, gone map[string]bool)
	walk = func(left int, gone map[string]bool) {
		if left == 0 {
			sets[strings.Join(slices.Sorted(maps.Keys(gone)), ",")] = true
			return
		}
		for g := 1; g <= left; g++ {
			next := maps.Clone(gone)
			for _, p := range s.rank(rs, g, gone, st) {
				next[p.name] = true
			}
			walk(left-g, next)
		}
	}
	walk(n, map[string]bool{})
	return len(sets)
}

// ranksDiffer: rs's pods do not all share one rank (related pods on the
// node), so deletions move the order.
func (s *sim) ranksDiffer(rs string) bool {
	rel := s.related(nil)
	ranks := map[int]bool{}
	for _, m := range s.pods[rs] {
		ranks[rel[m.pod.Spec.NodeName]] = true
	}
	return len(ranks) > 1
}

// pick is one pod the ranking deletes and why.
type pick struct{ name, why string }

// rank is one sort of rs's pods (but those gone): the n it deletes.
func (s *sim) rank(rs string, n int, gone map[string]bool, st *stepRun) []pick {
	var left []*member
	for _, m := range s.pods[rs] {
		if !gone[m.pod.Name] {
			left = append(left, m)
		}
	}
	if n >= len(left) {
		// getPodsToDelete sorts nothing when every pod goes (nor does a
		// new pod's node matter then).
		out := make([]pick, len(left))
		for i, m := range left {
			out[i] = pick{m.pod.Name, "every pod of the ReplicaSet goes"}
		}
		return out
	}
	cands := make([]engine.Pod, len(left))
	for i, m := range left {
		cands[i] = engine.FromPod(m.pod)
	}
	res := engine.Predict(engine.Input{Candidates: cands, Related: s.related(gone), Delete: n, Now: s.in.Now, Rules: s.in.Rules, Seed: 1})
	if s.unboundNew() {
		st.out.Certain = false // a new pod's node would change the ranks
	}
	if !res.Certain {
		st.out.Certain, s.certain = false, false
		for _, g := range res.Contenders {
			s.warnings = append(s.warnings, fmt.Sprintf("%s deletes %d of %s: %s", rs, g.Delete, someNames(g.Pods), g.Reason))
		}
	}
	var out []pick
	for _, pl := range res.Order {
		if !pl.Delete {
			continue
		}
		why := "every pod of the ReplicaSet goes"
		if pl.Boundary != nil {
			why = workload.Explain(pl.Pod.Name, pl.BoundaryPod.Name, *pl.Boundary)
		}
		if !pl.Certain {
			why += fmt.Sprintf(" (chance %.0f%%)", 100*pl.Probability)
		}
		out = append(out, pick{pl.Pod.Name, why})
	}
	return out
}

func samePicks(a, b []pick) bool {
	return slices.Equal(slices.Sorted(slices.Values(pickNamesList(a))), slices.Sorted(slices.Values(pickNamesList(b))))
}

func pickNamesList(ps []pick) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.name)
	}
	return out
}

func pickNames(ps []pick) string { return someNames(pickNamesList(ps)) }

// someNames lists up to 10 names, then counts the rest: a tie among
// thousands of pods stays one readable warning.
func someNames(names []string) string {
	if len(names) <= 10 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s, +%d more (of %d)", strings.Join(names[:10], ", "), len(names)-10, len(names))
}

// related counts the active pods of every ReplicaSet of the Deployment per
// node (getIndirectlyRelatedPods); a new pod with no determined node
// counts nowhere.
func (s *sim) related(gone map[string]bool) map[string]int {
	out := map[string]int{}
	for _, ms := range s.pods {
		for _, m := range ms {
			if n := m.pod.Spec.NodeName; n != "" && !gone[m.pod.Name] {
				out[n]++
			}
		}
	}
	return out
}

// available counts the Deployment's available pods.
func (s *sim) available() int32 {
	var n int32
	for _, ms := range s.pods {
		for _, m := range ms {
			if m.available {
				n++
			}
		}
	}
	return n
}

// waiting are the new pods the controller waits for: scheduled, not yet available.
func (s *sim) waiting() []*member {
	var out []*member
	for _, name := range slices.Sorted(maps.Keys(s.pods)) {
		for _, m := range s.pods[name] {
			if m.isNew && !m.available && m.scheduled() {
				out = append(out, m)
			}
		}
	}
	return out
}

// unplaced are the new pods that fit no node.
func (s *sim) unplaced() []*member {
	var out []*member
	for _, name := range slices.Sorted(maps.Keys(s.pods)) {
		for _, m := range s.pods[name] {
			if m.isNew && !m.scheduled() {
				out = append(out, m)
			}
		}
	}
	return out
}

// old are the pods of every ReplicaSet but the new one.
func (s *sim) old() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(s.pods)) {
		if name == s.newRS() {
			continue
		}
		for _, m := range s.pods[name] {
			out = append(out, podName(m.pod))
		}
	}
	return out
}

// done: no old pod left, the new ReplicaSet at spec.replicas and all available.
func (s *sim) done() bool {
	nr := s.newRS()
	if nr == "" || len(s.old()) > 0 || len(s.terminat) > 0 {
		return false
	}
	for _, r := range s.state {
		if r.Name == nr && r.Replicas != s.d.Replicas {
			return false
		}
	}
	for _, m := range s.pods[nr] {
		if !m.available {
			return false
		}
	}
	return true
}

// unboundNew: some new pod's node is left to the scheduler's scoring.
func (s *sim) unboundNew() bool {
	for _, ms := range s.pods {
		for _, m := range ms {
			if len(m.candidates) > 0 {
				return true
			}
		}
	}
	return false
}
