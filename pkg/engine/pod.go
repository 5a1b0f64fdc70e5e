// Package engine orders scale-in candidates exactly as the ReplicaSet
// controller's ActivePodsWithRanks.Less does, says which rule decided every
// comparison, and quantifies the outcomes the controller leaves to chance.
//
// It is pure: pods, ranks, a reference time and a rules.RuleSet go in, an
// order comes out. No clock, no client, no globals.
package engine

import (
	"math"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/kubectl/pkg/util/podutils"
)

// DeletionCostAnnotation is controller.kubernetes.io/pod-deletion-cost.
const DeletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"

// Pod is what the comparator reads of a pod, extracted once.
type Pod struct {
	Name      string
	Namespace string
	UID       string
	Node      string
	Phase     corev1.PodPhase
	Ready     bool
	// ReadyTime is the lastTransitionTime of the first Ready=True condition;
	// zero when not ready (podReadyTime).
	ReadyTime time.Time
	Created   time.Time
	// Cost is the parsed deletion cost; CostSet says the annotation exists,
	// CostInvalid that it exists but the controller reads it as 0.
	Cost            int32
	CostRaw         string
	CostSet         bool
	CostInvalid     bool
	Restarts        int // max restartCount over regular containers
	SidecarRestarts int // max over restartable init containers
	Rank            int // active related pods on the same node; set by the caller
	// Source is the original object, for printers; the engine never reads it.
	Source *corev1.Pod
}

// FromPod extracts the comparator's inputs. Times are truncated to whole
// seconds, as the API server stores them, so that files with fractional
// seconds compare as the controller would see them.
func FromPod(p *corev1.Pod) Pod {
	out := Pod{
		Name:      p.Name,
		Namespace: p.Namespace,
		UID:       string(p.UID),
		Node:      p.Spec.NodeName,
		Phase:     p.Status.Phase,
		Created:   p.CreationTimestamp.Truncate(time.Second),
		Source:    p,
	}
	out.Ready, out.ReadyTime = podutils.IsPodReady(p), ReadySince(p)
	if raw, ok := p.Annotations[DeletionCostAnnotation]; ok {
		out.CostSet, out.CostRaw = true, raw
		out.Cost, out.CostInvalid = ParseDeletionCost(raw)
	}
	for _, c := range p.Status.ContainerStatuses {
		out.Restarts = max(out.Restarts, int(c.RestartCount))
	}
	sidecars := map[string]bool{}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
			sidecars[c.Name] = true
		}
	}
	for _, c := range p.Status.InitContainerStatuses {
		if sidecars[c.Name] {
			out.SidecarRestarts = max(out.SidecarRestarts, int(c.RestartCount))
		}
	}
	return out
}

// ReadySince is when a ready pod became ready, at whole seconds as the API
// server stores it; zero when the pod is not ready. Readiness is the first
// Ready condition (IsPodReady, the same in kubectl's podutils as in the
// controllers), so this is that condition's lastTransitionTime: the
// comparator's podReadyTime (the first Ready=True condition) and the time
// IsPodAvailable adds minReadySeconds to.
func ReadySince(p *corev1.Pod) time.Time {
	if !podutils.IsPodReady(p) {
		return time.Time{}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.LastTransitionTime.Truncate(time.Second)
		}
	}
	return time.Time{}
}

// Available is the controllers' IsPodAvailable: ready, and minReady
// seconds have passed since it became ready. atBoundary (the rule set's
// AvailableAtBoundary, 1.34+) counts the exact moment; older releases need
// now strictly after it, as kubectl's podutils.IsPodAvailable still does.
func Available(p *corev1.Pod, minReady int32, now time.Time, atBoundary bool) bool {
	if !podutils.IsPodReady(p) {
		return false
	}
	if minReady == 0 {
		return true
	}
	t := ReadySince(p)
	if t.IsZero() {
		return false
	}
	at := t.Add(time.Duration(minReady) * time.Second)
	if atBoundary {
		return !at.After(now)
	}
	return at.Before(now)
}

// ParseDeletionCost follows GetDeletionCostFromPodAnnotations: a leading
// '-', exactly "0", or a digit 1-9, then a base-10 int32. Anything else
// counts as 0 and is reported invalid.
func ParseDeletionCost(raw string) (cost int32, invalid bool) {
	if raw == "" || (raw[0] != '-' && raw != "0" && (raw[0] < '1' || raw[0] > '9')) {
		return 0, true
	}
	v, err := strconv.ParseInt(raw, 10, 32)
	if err != nil {
		return 0, true
	}
	return int32(v), false
}

// phaseOrdinal is podPhaseToOrdinal: Pending 0, Unknown 1, Running 2, any
// other phase (including "") 0.
func phaseOrdinal(p corev1.PodPhase) int {
	switch p {
	case corev1.PodUnknown:
		return 1
	case corev1.PodRunning:
		return 2
	}
	return 0
}

// Bucket is logarithmicRankDiff's rank of one time: trunc(log2(now-t)) in
// nanoseconds, or -1 when t is not in the past. Go's math.Log2 is used on
// purpose: it differs from an exact integer log2 just below powers of two.
func Bucket(t, now time.Time) int64 {
	d := now.Sub(t)
	if d <= 0 {
		return -1
	}
	return int64(math.Log2(float64(d)))
}
