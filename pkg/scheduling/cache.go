package scheduling

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// PodCache keeps what the filters read of each existing pod (requests,
// host ports, required anti-affinity terms, priority) across calls, so
// that placing many pods in one cluster reads each pod once. Entries are
// keyed by the pod's pointer: a caller must not change a pod in place
// while it is cached (the drain copies a pod before changing it). The
// zero value is an empty cache. Not safe for concurrent use.
type PodCache struct {
	infos map[podCacheKey]*PodInfo
	// slab backs the PodInfos of the cluster Place builds and drops, reused
	// by the next Place.
	slab []PodInfo
}

// placeSlab is n PodInfos for a Place call to fill; nil without a cache.
func (pc *PodCache) placeSlab(n int) []PodInfo {
	if pc == nil {
		return nil
	}
	if cap(pc.slab) < n {
		pc.slab = make([]PodInfo, n)
	}
	return pc.slab[:n]
}

// podCacheKey holds the pod and the request options newPodInfo derives
// from the rules and from whether the pod is bound.
type podCacheKey struct {
	pod                 *corev1.Pod
	useStatus, podLevel bool
}

// podInfo is newPodInfo through the cache: a fresh PodInfo (node and
// Index are per cluster) copied from the cached one. Cached PodInfos are
// never handed out: nothing a Cluster does can reach them.
func (pc *PodCache) podInfo(pod *corev1.Pod, r rules.SchedulerRules, useStatus bool, scratch corev1.ResourceList, dst *PodInfo) error {
	if pc == nil {
		pi, err := newPodInfo(pod, r, useStatus, scratch)
		if err != nil {
			return err
		}
		*dst = *pi
		return nil
	}
	k := podCacheKey{pod: pod, useStatus: useStatus && r.UseStatusResources, podLevel: r.PodLevelResources}
	if pc.infos == nil {
		pc.infos = map[podCacheKey]*PodInfo{}
	}
	cached := pc.infos[k]
	if cached == nil {
		pi, err := newPodInfo(pod, r, useStatus, scratch)
		if err != nil {
			return err
		}
		cached = pi
		pc.infos[k] = cached
	}
	*dst = *cached
	return nil
}
