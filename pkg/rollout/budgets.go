package rollout

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/disruption"
	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// budget is a PodDisruptionBudget that selects the workload's pods.
type budget struct {
	b       *disruption.Budget
	desired int32
	// others: healthy pods it selects that are not the workload's.
	others int32
}

// healthyFunc counts the workload's pods a budget selects that are healthy.
type healthyFunc func(*disruption.Budget) int32

// readBudgetsFor: every budget selecting the probe (a new pod) or one of
// pods, with its desiredHealthy as the disruption controller computes it
// now.
func readBudgetsFor(in Input, probe *corev1.Pod, pods []*corev1.Pod, healthy healthyFunc) []*budget {
	owners := disruption.NewOwners(in.Workloads)
	var out []*budget
	for _, b := range disruption.Parse(in.PDBs) {
		if b.Selector == nil || !selectsAny(b, probe, pods) {
			continue
		}
		st := disruption.Compute(b, in.Pods, owners, in.Now)
		out = append(out, &budget{b: b, desired: st.DesiredHealthy, others: st.CurrentHealthy - healthy(b)})
	}
	return out
}

func selectsAny(b *disruption.Budget, probe *corev1.Pod, pods []*corev1.Pod) bool {
	if b.EvictionSelects(probe) {
		return true
	}
	for _, p := range pods {
		if b.EvictionSelects(p) {
			return true
		}
	}
	return false
}

// statesOf: each budget at the step's lowest point.
func statesOf(budgets []*budget, healthy healthyFunc) []prediction.RolloutBudget {
	var out []prediction.RolloutBudget
	for _, b := range budgets {
		cur := b.others + healthy(b.b)
		out = append(out, prediction.RolloutBudget{Name: b.b.Name(), DesiredHealthy: b.desired, CurrentHealthyMin: cur, Violated: cur < b.desired})
	}
	return out
}

// readBudgets: the Deployment's budgets (the expected count is its
// replicas before and after).
func (s *sim) readBudgets() []*budget {
	probe := s.createPod("<probe>")
	s.created--
	var pods []*corev1.Pod
	for _, ms := range s.pods {
		for _, m := range ms {
			pods = append(pods, m.pod)
		}
	}
	return readBudgetsFor(s.in, probe.pod, pods, s.healthy)
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
func (s *sim) budgetStates() []prediction.RolloutBudget { return statesOf(s.budgets, s.healthy) }

// stepController is a controller whose syncs the StatefulSet and DaemonSet
// step loops drive (fillStep).
type stepController interface {
	retryPlacement(*prediction.RolloutStep)
	sync(*prediction.RolloutStep) bool
	waitingNew() int
	badRelease() bool
	availableNow() int32
	budgetStates() []prediction.RolloutBudget
}

// fillStep runs a step's syncs until the controller waits for new pods,
// then records how many it waits for (none when they never turn Ready),
// the lowest availability and each budget's state. false: it did nothing
// and waits for nothing (or only for a bad release), so the rollout is
// over.
func fillStep(c stepController, st *prediction.RolloutStep) bool {
	c.retryPlacement(st)
	acted := false
	for range maxSyncs {
		if !c.sync(st) {
			break
		}
		acted = true
	}
	waiting, bad := c.waitingNew(), c.badRelease()
	if !acted && (bad || waiting == 0) {
		return false
	}
	st.WaitsFor = waiting
	if bad {
		st.WaitsFor = 0
	}
	st.AvailableMin = c.availableNow()
	st.Budgets = c.budgetStates()
	return true
}
