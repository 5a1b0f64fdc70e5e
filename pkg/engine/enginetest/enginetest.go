// Package enginetest generates realistic pod sets for benchmarks and for
// the conformance module's side-by-side timing of the real controller sort.
package enginetest

import (
	"fmt"
	"math/rand/v2"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Fleet returns n pods of one large Deployment as a cluster would show them:
// spread over n/30 nodes, mostly running and ready, readied over the past
// weeks in waves (so many share a second), a few pending or not ready, some
// restarts and a few deletion costs. Ranks are per-node pod counts.
func Fleet(n int, seed uint64, now time.Time) (pods []*corev1.Pod, ranks []int, perNode map[string]int) {
	rng := rand.New(rand.NewPCG(seed, 7))
	nodes := max(1, n/30)
	perNode = map[string]int{}
	waves := make([]time.Time, 20)
	for i := range waves {
		waves[i] = now.Add(-time.Duration(rng.Int64N(int64(30 * 24 * time.Hour)))).Truncate(time.Second)
	}
	pods = make([]*corev1.Pod, n)
	for i := range pods {
		created := waves[rng.IntN(len(waves))].Add(time.Duration(rng.IntN(120)) * time.Second)
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("web-7d9f8c6b5-%06d", i), Namespace: "bench",
			UID:               types.UID(fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12), rng.IntN(1<<12), rng.Uint64()&(1<<48-1))),
			CreationTimestamp: metav1.NewTime(created),
		}}
		if rng.IntN(200) != 0 {
			p.Spec.NodeName = fmt.Sprintf("node-%04d", rng.IntN(nodes))
		}
		p.Status.Phase = corev1.PodRunning
		switch {
		case p.Spec.NodeName == "":
			p.Status.Phase = corev1.PodPending
		case rng.IntN(50) == 0:
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse, LastTransitionTime: metav1.NewTime(created)}}
		default:
			ready := created.Add(time.Duration(5+rng.IntN(30)) * time.Second)
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(ready)}}
		}
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "web", RestartCount: int32(rng.IntN(10) / 8)}}
		if rng.IntN(100) == 0 {
			p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": fmt.Sprint(rng.IntN(5) - 2)}
		}
		pods[i] = p
		perNode[p.Spec.NodeName]++
	}
	ranks = make([]int, n)
	for i, p := range pods {
		ranks[i] = perNode[p.Spec.NodeName]
	}
	return pods, ranks, perNode
}
