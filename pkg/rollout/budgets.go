package rollout

import (
	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// budget is a PodDisruptionBudget that selects the Deployment's pods.
type budget struct {
	b       *disruption.Budget
	desired int32
	// others: healthy pods it selects that are not the Deployment's.
	others int32
}

// readBudgets: every budget selecting an old pod or the new template,
// with its desiredHealthy as the disruption controller computes it now (the
// expected count is the Deployment's replicas before and after).
func (s *sim) readBudgets() []*budget {
	probe := s.createPod("<probe>")
	s.created--
	owners := disruption.NewOwners(s.in.Workloads)
	var out []*budget
	for _, b := range disruption.Parse(s.in.PDBs) {
		if b.Selector == nil || !s.selects(b, probe) {
			continue
		}
		st := disruption.Compute(b, s.in.Pods, owners, s.in.Now)
		out = append(out, &budget{b: b, desired: st.DesiredHealthy, others: st.CurrentHealthy - s.healthy(b)})
	}
	return out
}

func (s *sim) selects(b *disruption.Budget, probe *member) bool {
	if b.EvictionSelects(probe.pod) {
		return true
	}
	for _, ms := range s.pods {
		for _, m := range ms {
			if b.EvictionSelects(m.pod) {
				return true
			}
		}
	}
	return false
}

// healthy counts the Deployment's pods b selects that are Ready (new
// pods: once available).
func (s *sim) healthy(b *disruption.Budget) int32 {
	var n int32
	for _, ms := range s.pods {
		for _, m := range ms {
			ready := m.available || (!m.isNew && disruption.IsReady(m.pod))
			if ready && b.EvictionSelects(m.pod) {
				n++
			}
		}
	}
	return n
}

// budgetStates: each budget at the step's lowest point.
func (s *sim) budgetStates() []prediction.RolloutBudget {
	var out []prediction.RolloutBudget
	for _, b := range s.budgets {
		cur := b.others + s.healthy(b.b)
		out = append(out, prediction.RolloutBudget{Name: b.b.Name(), DesiredHealthy: b.desired, CurrentHealthyMin: cur, Violated: cur < b.desired})
	}
	return out
}
