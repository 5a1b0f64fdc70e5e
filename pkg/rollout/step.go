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
			for range r.Replicas - have {
				m := s.createPod(r.Name)
				s.pods[r.Name] = append(s.pods[r.Name], m)
				s.place(m)
				st.out.Created = append(st.out.Created, created(m))
			}
			st.changed = true
		}
	}
}

// deletePods is the ReplicaSet controller's scale-down of rs by n: its
// active pods ranked against the related pods of every ReplicaSet.
func (s *sim) deletePods(rs string, n int, st *stepRun) {
	var cands []engine.Pod
	for _, m := range s.pods[rs] {
		cands = append(cands, engine.FromPod(m.pod))
	}
	res := engine.Predict(engine.Input{Candidates: cands, Related: s.related(), Delete: n, Now: s.in.Now, Rules: s.in.Rules, Seed: 1})
	if s.unboundNew() {
		st.out.Certain = false // a new pod's node would change the ranks
	}
	if !res.Certain {
		st.out.Certain = false
		s.certain = false
		for _, g := range res.Contenders {
			s.warnings = append(s.warnings, fmt.Sprintf("%s deletes %d of %s: %s", rs, g.Delete, strings.Join(g.Pods, ", "), g.Reason))
		}
	}
	gone := map[string]bool{}
	for _, pl := range res.Order {
		if !pl.Delete {
			continue
		}
		gone[pl.Pod.Name] = true
		st.out.Deleted = append(st.out.Deleted, pl.Pod.Namespace+"/"+pl.Pod.Name)
		why := "every pod of the ReplicaSet goes"
		if pl.Boundary != nil {
			why = workload.Explain(pl.Pod.Name, pl.BoundaryPod.Name, *pl.Boundary)
		}
		if !pl.Certain {
			why += fmt.Sprintf(" (chance %.0f%%)", 100*pl.Probability)
		}
		st.out.Why = append(st.out.Why, why)
	}
	var keep []*member
	for _, m := range s.pods[rs] {
		if gone[m.pod.Name] {
			s.terminat = append(s.terminat, m)
		} else {
			keep = append(keep, m)
		}
	}
	s.pods[rs] = keep
}

// related counts the active pods of every ReplicaSet of the Deployment per
// node (getIndirectlyRelatedPods); a new pod with no determined node
// counts nowhere.
func (s *sim) related() map[string]int {
	out := map[string]int{}
	for _, ms := range s.pods {
		for _, m := range ms {
			if n := m.pod.Spec.NodeName; n != "" {
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
