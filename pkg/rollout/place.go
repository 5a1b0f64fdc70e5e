package rollout

import (
	"fmt"
	"strings"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// place runs the scheduler's filters for a new pod. One feasible node
// binds it there; several leave the node to the scoring, which is not
// modelled: the pod holds no node here and the answer is uncertain.
func (s *sim) place(m *member) {
	pl, err := s.view.Place(m.pod)
	if err != nil {
		m.fitError = err.Error()
		return
	}
	for _, u := range pl.Unmodelled {
		s.warnings = append(s.warnings, fmt.Sprintf("the new pods use %s, which the filters here do not model: where they fit is uncertain", u))
		s.certain = false
	}
	switch len(pl.Feasible) {
	case 0:
		m.fitError = pl.FitError
	case 1:
		m.fitError, m.candidates = "", nil
		m.pod.Spec.NodeName = pl.Feasible[0]
		_ = s.view.Add(m.pod)
	default:
		m.fitError, m.candidates = "", pl.Feasible
		s.certain = false
		s.warnings = append(s.warnings, "the filters pass on several nodes for the new pods and the scheduler's scoring (not modelled) picks one: "+
			"where they go, and so the old pods' ranks (R5, related pods on the node) in later deletions, are undetermined")
	}
}

// retryPlacement: the scheduler retries pending pods once room is freed.
func (s *sim) retryPlacement(st *stepRun) {
	for _, m := range s.unplaced() {
		s.place(m)
		if m.scheduled() {
			c := created(m)
			c.Reason = "pending until now: " + c.Reason
			st.out.Created = append(st.out.Created, c)
		}
	}
}

// finishTerminations: the pods deleted in the step are gone and free
// their node.
func (s *sim) finishTerminations() {
	for _, m := range s.terminat {
		s.view.Remove(m.pod)
		s.release(m.pod)
	}
	s.terminat = nil
}

// created is a new pod's row: its node, or its candidates, or why it fits
// nowhere.
func created(m *member) prediction.RolloutCreate {
	c := prediction.RolloutCreate{Node: m.pod.Spec.NodeName, Candidates: m.candidates}
	switch {
	case m.fitError != "":
		c.Reason = m.fitError
	case len(m.candidates) > 0:
		c.Reason = fmt.Sprintf("the scheduler's scoring picks one of %d nodes (%s); scoring is not modelled", len(m.candidates), short(m.candidates))
	}
	return c
}

func short(nodes []string) string {
	if len(nodes) > 4 {
		return strings.Join(nodes[:4], ", ") + ", ..."
	}
	return strings.Join(nodes, ", ")
}
