package drain

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/disruption"
)

// maxDisruptedPodSize is the Eviction API's MaxDisruptedPodSize.
const maxDisruptedPodSize = 2000

// Eviction API answers.
const (
	evOK    = iota // the pod is deleted
	evWait         // 429: kubectl retries every 5 s
	evError        // any other error: kubectl gives the pod up
)

type answer struct {
	code   int
	budget *budgetState
	why    string
}

// evict is EvictionREST.Create for p against the budgets' current status;
// a successful eviction decrements the budget as checkAndDecrement does.
func (s *state) evict(p *podState) answer {
	pod := p.pod
	if canIgnorePDB(pod) {
		return answer{code: evOK, why: ignoreWhy(pod)}
	}
	bs := s.budgetsOf(pod)
	switch len(bs) {
	case 0:
		return answer{code: evOK, why: "no PodDisruptionBudget selects it"}
	case 1:
	default:
		return answer{code: evError, budget: bs[0], why: fmt.Sprintf("%d PodDisruptionBudgets select it (%s, %s): the Eviction API refuses with 500 and kubectl gives the pod up", len(bs), bs[0].b.PDB.Name, bs[1].b.PDB.Name)}
	}
	b := bs[0]
	if !disruption.IsReady(pod) {
		if b.b.UnhealthyAlwaysAllow(s.in.Disruption.UnhealthyPodEvictionPolicy) {
			return answer{code: evOK, budget: b, why: fmt.Sprintf("PDB %s: not Ready, and unhealthyPodEvictionPolicy AlwaysAllow evicts unhealthy pods", b.b.PDB.Name)}
		}
		if st := b.status; st.CurrentHealthy >= st.DesiredHealthy && st.DesiredHealthy > 0 {
			return answer{code: evOK, budget: b, why: fmt.Sprintf("PDB %s: not Ready, and the budget is healthy (%d >= %d)", b.b.PDB.Name, st.CurrentHealthy, st.DesiredHealthy)}
		}
	}
	return s.checkAndDecrement(p, b)
}

func (s *state) checkAndDecrement(p *podState, b *budgetState) answer {
	st := &b.status
	name := b.b.PDB.Name
	switch {
	case b.lag:
		return answer{code: evWait, budget: b, why: fmt.Sprintf("PDB %s: status.observedGeneration lags its generation; the Eviction API answers 429 until the disruption controller syncs it", name)}
	case st.SyncFailed != "":
		return answer{code: evWait, budget: b, why: fmt.Sprintf("PDB %s cannot be synced (%s): 0 disruptions allowed", name, st.SyncFailed)}
	case st.DisruptionsAllowed < 0:
		return answer{code: evError, budget: b, why: fmt.Sprintf("PDB %s: disruptionsAllowed is negative; the Eviction API answers 403 and kubectl gives the pod up", name)}
	case len(st.DisruptedPods) > maxDisruptedPodSize:
		return answer{code: evError, budget: b, why: fmt.Sprintf("PDB %s: more than %d evictions not yet confirmed by the controller (403)", name, maxDisruptedPodSize)}
	case st.DisruptionsAllowed == 0:
		return answer{code: evWait, budget: b, why: budgetWhy(b)}
	}
	why := fmt.Sprintf("PDB %s: %s, healthy %d -> %d disruption(s) allowed", name, disruption.Describe(b.b), st.CurrentHealthy, st.DisruptionsAllowed)
	st.DisruptionsAllowed--
	b.synced = false // the API wrote the status; the controller rewrites it
	if st.DisruptedPods == nil {
		st.DisruptedPods = map[string]metav1.Time{}
	}
	st.DisruptedPods[p.pod.Name] = metav1.Time{Time: s.in.Now}
	return answer{code: evOK, budget: b, why: why}
}

// budgetWhy is the arithmetic behind 0 disruptions allowed.
func budgetWhy(b *budgetState) string {
	st := b.status
	return fmt.Sprintf("PDB %s: %s, healthy %d -> 0 disruptions allowed", b.b.PDB.Name, disruption.Describe(b.b), st.CurrentHealthy)
}

// canIgnorePDB: finished, pending and terminating pods are deleted
// without a budget check.
func canIgnorePDB(p *corev1.Pod) bool {
	switch p.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed, corev1.PodPending:
		return true
	}
	return p.DeletionTimestamp != nil
}

func ignoreWhy(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return "already terminating: the Eviction API ignores budgets"
	}
	return fmt.Sprintf("%s: the Eviction API ignores budgets", p.Status.Phase)
}
