package conformance

import (
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

var refNow = time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

// randomPods builds a pod set that exercises every rule: few nodes, mixed
// phases and readiness, ready and creation times that often share a second
// or a log2 bucket, restarts, sidecars and (sometimes invalid) costs.
func randomPods(rng *rand.Rand, n int) []*corev1.Pod {
	// A small pool of times so that equal seconds and shared buckets are common.
	pool := make([]time.Time, 1+rng.IntN(6))
	for i := range pool {
		pool[i] = refNow.Add(-time.Duration(rng.Int64N(int64(90 * 24 * time.Hour)))).Truncate(time.Second)
	}
	pick := func() time.Time {
		t := pool[rng.IntN(len(pool))]
		if rng.IntN(3) == 0 {
			t = t.Add(time.Duration(rng.IntN(5)) * time.Second)
		}
		if rng.IntN(40) == 0 {
			return time.Time{}
		}
		return t
	}
	nodes := []string{"", "n1", "n2", "n3"}[:1+rng.IntN(4)]
	costs := []string{"", "", "", "0", "5", "-3", "100", "+5", "007", "abc"}
	pods := make([]*corev1.Pod, n)
	for i := range pods {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("pod-%03d", i), Namespace: "ns",
			UID:               types.UID(fmt.Sprintf("%08x-%04x", rng.Uint32(), i)),
			CreationTimestamp: metav1.NewTime(pick()),
		}}
		p.Spec.NodeName = nodes[rng.IntN(len(nodes))]
		p.Status.Phase = []corev1.PodPhase{corev1.PodRunning, corev1.PodRunning, corev1.PodRunning, corev1.PodPending, corev1.PodUnknown, ""}[rng.IntN(6)]
		switch rng.IntN(4) {
		case 0:
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(pick())}}
		case 1, 2, 3:
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(pick())}}
		}
		if c := costs[rng.IntN(len(costs))]; c != "" {
			p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": c}
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app", RestartCount: int32(rng.IntN(3))}}
		if rng.IntN(3) == 0 {
			always := corev1.ContainerRestartPolicyAlways
			p.Spec.InitContainers = []corev1.Container{{Name: "proxy", RestartPolicy: &always}, {Name: "init"}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "proxy", RestartCount: int32(rng.IntN(3))}, {Name: "init", RestartCount: int32(rng.IntN(3))}}
		}
		pods[i] = p
	}
	return pods
}

// ranksFor counts active related pods per node, as
// getPodsRankedByRelatedPodsOnSameNode does.
func ranksFor(pods, related []*corev1.Pod) ([]int, map[string]int) {
	if related == nil {
		return make([]int, len(pods)), nil
	}
	onNode := map[string]int{}
	for _, p := range related {
		if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			onNode[p.Spec.NodeName]++
		}
	}
	ranks := make([]int, len(pods))
	for i, p := range pods {
		ranks[i] = onNode[p.Spec.NodeName]
	}
	return ranks, onNode
}
