package disruption

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// DeletionTimeout is the controller's DeletionTimeout: an entry of
// disruptedPods keeps its pod out of the healthy count this long.
const DeletionTimeout = 2 * time.Minute

// Status is what the disruption controller writes for a budget.
type Status struct {
	ExpectedPods, DesiredHealthy, CurrentHealthy, DisruptionsAllowed int32
	DisruptedPods                                                    map[string]metav1.Time
	// SyncFailed is set when the controller cannot compute the status
	// (failSafe): disruptionsAllowed stays 0.
	SyncFailed string
	// Unknown says why the snapshot cannot tell the status (an owner it
	// does not hold); the numbers are then a guess.
	Unknown string
}

// Compute is the controller's trySync for b over pods (any pods; those
// the budget selects are picked here), at now.
func Compute(b *Budget, pods []*corev1.Pod, owners *Owners, now time.Time) Status {
	if b.Selector == nil {
		return Status{SyncFailed: b.Err.Error()}
	}
	var selected []*corev1.Pod
	for _, p := range pods {
		if b.EvictionSelects(p) {
			selected = append(selected, p)
		}
	}
	return ComputeSelected(b, selected, owners, now)
}

// ComputeSelected is Compute over the pods the budget selects, picked by
// the caller (in the order Compute would pick them).
func ComputeSelected(b *Budget, selected []*corev1.Pod, owners *Owners, now time.Time) Status {
	if b.Selector == nil {
		return Status{SyncFailed: b.Err.Error()}
	}
	expected, desired, unknown, err := expectedCount(b, selected, owners)
	if err != nil {
		return Status{SyncFailed: err.Error(), Unknown: unknown}
	}
	disrupted := disruptedMap(b.PDB.Status.DisruptedPods, selected, now)
	st := Status{ExpectedPods: expected, DesiredHealthy: desired, DisruptedPods: disrupted, Unknown: unknown}
	st.CurrentHealthy = countHealthy(selected, disrupted, now)
	st.DisruptionsAllowed = st.CurrentHealthy - desired
	if expected <= 0 || st.DisruptionsAllowed <= 0 {
		st.DisruptionsAllowed = 0
	}
	return st
}

// expectedCount is getExpectedPodCount.
func expectedCount(b *Budget, pods []*corev1.Pod, owners *Owners) (expected, desired int32, unknown string, err error) {
	spec := b.PDB.Spec
	switch {
	case spec.MaxUnavailable != nil:
		expected, unknown, err = owners.ExpectedScale(pods)
		if err != nil {
			return 0, 0, unknown, err
		}
		maxUnavailable, err := intstr.GetScaledValueFromIntOrPercent(spec.MaxUnavailable, int(expected), true)
		if err != nil {
			return 0, 0, unknown, err
		}
		return expected, max(expected-int32(maxUnavailable), 0), unknown, nil
	case spec.MinAvailable != nil && spec.MinAvailable.Type == intstr.Int:
		return int32(len(pods)), spec.MinAvailable.IntVal, "", nil
	case spec.MinAvailable != nil:
		expected, unknown, err = owners.ExpectedScale(pods)
		if err != nil {
			return 0, 0, unknown, err
		}
		minAvailable, err := intstr.GetScaledValueFromIntOrPercent(spec.MinAvailable, int(expected), true)
		if err != nil {
			return 0, 0, unknown, err
		}
		return expected, int32(minAvailable), unknown, nil
	}
	return 0, 0, "", nil
}

// countHealthy is countHealthyPods: Ready, not terminating, not recently
// disrupted.
func countHealthy(pods []*corev1.Pod, disrupted map[string]metav1.Time, now time.Time) int32 {
	var n int32
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if t, ok := disrupted[p.Name]; ok && t.Add(DeletionTimeout).After(now) {
			continue
		}
		if IsReady(p) {
			n++
		}
	}
	return n
}

// disruptedMap is buildDisruptedPodMap: entries of pods that still exist,
// are not terminating and whose deletion is not overdue.
func disruptedMap(old map[string]metav1.Time, pods []*corev1.Pod, now time.Time) map[string]metav1.Time {
	out := map[string]metav1.Time{}
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		if t, ok := old[p.Name]; ok && !t.Add(DeletionTimeout).Before(now) {
			out[p.Name] = t
		}
	}
	return out
}

// IsReady is podutil.IsPodReady.
func IsReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Describe is the budget's rule in words, e.g. "minAvailable 2".
func Describe(b *Budget) string {
	switch s := b.PDB.Spec; {
	case s.MaxUnavailable != nil:
		return "maxUnavailable " + s.MaxUnavailable.String()
	case s.MinAvailable != nil:
		return "minAvailable " + s.MinAvailable.String()
	}
	return "neither minAvailable nor maxUnavailable"
}

// CheckStatus says what in a recorded status is malformed (negative
// counts, disruptionsAllowed above currentHealthy).
func CheckStatus(b *Budget) error {
	s := b.PDB.Status
	if s.CurrentHealthy < 0 || s.DesiredHealthy < 0 || s.ExpectedPods < 0 {
		return fmt.Errorf("PodDisruptionBudget %s has negative counts in its status", b.Name())
	}
	if s.DisruptionsAllowed > s.CurrentHealthy {
		return fmt.Errorf("PodDisruptionBudget %s: status.disruptionsAllowed %d exceeds currentHealthy %d", b.Name(), s.DisruptionsAllowed, s.CurrentHealthy)
	}
	return nil
}
