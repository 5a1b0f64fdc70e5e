package statefulset

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/scale-preview/scale-preview/pkg/engine"
)

// ParentAndOrdinal mirrors getParentNameAndOrdinal, whose regexp is
// `(.*)-([0-9]+)$`: the parent is everything before the last "-" when what
// follows is one or more ASCII digits. Digits that do not fit an int32 keep
// the parent but give ordinal -1. No "-digits" suffix gives ("", -1).
//
// The greedy `(.*)` makes the regexp equivalent to "split at the last dash";
// pod names cannot contain the newline that `.` would refuse.
func ParentAndOrdinal(name string) (string, int) {
	i := strings.LastIndexByte(name, '-')
	if i < 0 || i == len(name)-1 {
		return "", -1
	}
	digits := name[i+1:]
	for j := 0; j < len(digits); j++ {
		if digits[j] < '0' || digits[j] > '9' {
			return "", -1
		}
	}
	n, err := strconv.ParseInt(digits, 10, 32)
	if err != nil {
		return name[:i], -1
	}
	return name[:i], int(n)
}

// readyCondition is GetPodReadyCondition: the first condition of type
// Ready. Only the explanations read it; readiness is podutils.IsPodReady.
func readyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

func isRunningAndReady(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && podutils.IsPodReady(p)
}

func isTerminating(p *corev1.Pod) bool { return p.DeletionTimestamp != nil }

// isTerminal is the phase test of processReplica: Failed, plus Succeeded
// from 1.27.
func (r switches) isTerminal(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodFailed ||
		(r.SucceededRecreated && p.Status.Phase == corev1.PodSucceeded)
}

// availableAt is when a ready pod becomes available; zero if never.
func (r switches) availableAt(p *corev1.Pod, minReady int32) time.Time {
	t := engine.ReadySince(p)
	if t.IsZero() {
		return time.Time{}
	}
	at := t.Add(time.Duration(minReady) * time.Second)
	if !r.AvailableAtBoundary {
		at = at.Add(time.Nanosecond) // ≤1.33 needs now strictly after
	}
	return at
}

// unhealthy is what picks the "first unhealthy pod": !isHealthy up to 1.33,
// isUnavailable from 1.34. Both count terminating pods.
func (r switches) unhealthy(p *corev1.Pod, minReady int32, now time.Time) bool {
	if isTerminating(p) {
		return true
	}
	if r.UnavailableFirst {
		return !engine.Available(p, minReady, now, r.AvailableAtBoundary)
	}
	return !isRunningAndReady(p)
}

// healthWord describes why a pod is not Running and Ready.
func healthWord(p *corev1.Pod) string {
	phase := string(p.Status.Phase)
	if phase == "" {
		phase = "no phase"
	}
	c := readyCondition(p)
	switch {
	case p.Status.Phase != corev1.PodRunning && podutils.IsPodReady(p):
		return fmt.Sprintf("%s (Ready=True but not Running)", phase)
	case c == nil:
		return fmt.Sprintf("%s, no Ready condition", phase)
	default:
		return fmt.Sprintf("%s, Ready=%s", phase, c.Status)
	}
}

// claim decides whether the controller's getPodsForStatefulSet returns the
// pod (ClaimPods with the isMemberOf filter). related says whether the pod
// is worth listing at all when it is not claimed.
func (r switches) claim(set *appsv1.StatefulSet, sel labels.Selector, p *corev1.Pod) (claimed, adopted, related bool, why string) {
	parent, _ := ParentAndOrdinal(p.Name)
	member := parent == set.Name
	matches := sel.Matches(labels.Set(p.Labels))
	ref := metav1.GetControllerOfNoCopy(p)
	ours := ref != nil && ref.UID == set.UID
	related = member || matches || ours
	if set.Namespace != "" && p.Namespace != "" && p.Namespace != set.Namespace {
		return false, false, related, fmt.Sprintf("in namespace %s, not %s", p.Namespace, set.Namespace)
	}
	if ref != nil && !ours {
		return false, false, related, fmt.Sprintf("owned by %s/%s, another controller", ref.Kind, ref.Name)
	}
	if ours {
		if r.OwnerIndex && (ref.Kind != "StatefulSet" || ref.Name != set.Name) {
			// 1.34+ lists pods by a kind/name/UID index key.
			return false, false, related, fmt.Sprintf("controller reference %s/%s carries the set's UID but not its kind and name: the pod index does not list it", ref.Kind, ref.Name)
		}
		switch {
		case !matches:
			return false, false, related, "controlled by the set but its labels do not match the selector: released"
		case !member:
			return false, false, related, fmt.Sprintf("controlled by the set but the name does not parse as %s-<ordinal>: released", set.Name)
		}
		return true, false, related, ""
	}
	// Orphan.
	switch {
	case set.DeletionTimestamp != nil:
		return false, false, related, "orphan: a StatefulSet being deleted adopts nothing"
	case !matches:
		return false, false, related, "orphan whose labels do not match the selector"
	case !member:
		return false, false, related, fmt.Sprintf("orphan whose name does not parse as %s-<ordinal>", set.Name)
	case isTerminating(p):
		return false, false, related, "orphan being deleted: not adopted"
	}
	return true, true, related, ""
}
