package outage

import (
	"fmt"
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
)

// TaintKey is the NoExecute taint the condition leads to.
func TaintKey(condition string) string {
	if condition == ConditionNotReady {
		return TaintNotReady
	}
	return TaintUnreachable
}

// verdict is the taint eviction controller's answer for one pod.
type verdict struct {
	delay   float64 // seconds after the taint
	forever bool    // tolerated without tolerationSeconds
	used    string  // the toleration that set it, or "none"
}

// evictionVerdict is processPodOnNode: for each NoExecute taint the first
// toleration that tolerates it (GetMatchingTolerations); one taint not
// tolerated deletes the pod at once; else the least tolerationSeconds
// among those used (<= 0: at once), none with seconds: never.
func evictionVerdict(pod *corev1.Pod, taints []corev1.Taint) verdict {
	var used []*corev1.Toleration
	for i := range taints {
		var match *corev1.Toleration
		for j := range pod.Spec.Tolerations {
			// TaintTolerationComparisonOperators is alpha (off): Lt and Gt never match.
			if pod.Spec.Tolerations[j].ToleratesTaint(klog.Background(), &taints[i], false) {
				match = &pod.Spec.Tolerations[j]
				break
			}
		}
		if match == nil {
			return verdict{used: "none: " + taints[i].Key + ":NoExecute not tolerated"}
		}
		used = append(used, match)
	}
	best, bestSecs := (*corev1.Toleration)(nil), int64(math.MaxInt64)
	for _, t := range used {
		if t.TolerationSeconds == nil {
			continue
		}
		if s := *t.TolerationSeconds; s < bestSecs {
			best, bestSecs = t, s
		}
	}
	if best == nil {
		return verdict{forever: true, used: describe(used[len(used)-1]) + " without tolerationSeconds"}
	}
	return verdict{delay: float64(max(bestSecs, 0)), used: fmt.Sprintf("%s for %ds", describe(best), bestSecs)}
}

// describe names a toleration as key:effect, or what it matches.
func describe(t *corev1.Toleration) string {
	key := t.Key
	if key == "" {
		key = "any taint"
	}
	if t.Effect == "" {
		return key + " (any effect)"
	}
	return key + ":" + string(t.Effect)
}

// noExecuteTaints are the node's NoExecute taints once the controller
// sets key (it swaps the unreachable and not-ready ones).
func noExecuteTaints(n *corev1.Node, key string) []corev1.Taint {
	out := []corev1.Taint{}
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoExecute && t.Key != TaintUnreachable && t.Key != TaintNotReady {
			out = append(out, t)
		}
	}
	return append(out, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoExecute})
}

// admitted fills in the tolerations a pod that never went through the
// API server (a manifest: no creationTimestamp) would get: the DaemonSet
// controller's (without seconds) for its pods, then DefaultTolerationSeconds'
// for both taints when nothing tolerates them. It says whether it added any.
func admitted(pod *corev1.Pod, daemon bool, seconds int64) (*corev1.Pod, bool) {
	if !pod.CreationTimestamp.IsZero() {
		return pod, false
	}
	add := []corev1.Toleration{}
	for _, key := range []string{TaintNotReady, TaintUnreachable} {
		if toleratesKey(pod.Spec.Tolerations, key) {
			continue
		}
		t := corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}
		if !daemon {
			t.TolerationSeconds = &seconds
		}
		add = append(add, t)
	}
	if len(add) == 0 {
		return pod, false
	}
	cp := pod.DeepCopy()
	cp.Spec.Tolerations = append(cp.Spec.Tolerations, add...)
	return cp, true
}

// toleratesKey is the admission plugin's check: a toleration of the key
// (or of every key) with effect NoExecute (or every effect).
func toleratesKey(ts []corev1.Toleration, key string) bool {
	for _, t := range ts {
		if (t.Key == key || t.Key == "") && (t.Effect == corev1.TaintEffectNoExecute || t.Effect == "") {
			return true
		}
	}
	return false
}
