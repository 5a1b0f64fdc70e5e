package eviction

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/kubectl/pkg/util/qos"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/scale-preview/scale-preview/pkg/rules"
)

// Annotations the kubelet reads to tell static and mirror pods
// (pkg/kubelet/types/pod_update.go).
const (
	configSourceAnnotation = "kubernetes.io/config.source"
	configMirrorAnnotation = v1.MirrorPodAnnotationKey
	// systemCriticalPriority is scheduling.SystemCriticalPriority.
	systemCriticalPriority = 2000000000
)

// fsUsage is a pod's disk usage split the way the kubelet's fsStatsType
// sets add it up.
type fsUsage struct {
	Bytes, Inodes int64
}

func (a fsUsage) plus(b fsUsage) fsUsage { return fsUsage{a.Bytes + b.Bytes, a.Inodes + b.Inodes} }

// podInfo is one active pod and every figure the ranking reads.
type podInfo struct {
	Pod      *v1.Pod
	Name     string // namespace/name
	Stats    *statsapi.PodStats
	Critical string // why the kubelet never evicts it ("" when it may)
	Priority int32
	QOS      string
	// Requests as GetResourceRequestQuantity reads them.
	MemRequest, StorageRequest, InodeRequest int64
	WorkingSet, Processes                    int64
	Root, Logs, Volumes, HostPath            fsUsage
	TGPS                                     *int64
	LocalStorage                             string // the local-storage limit it exceeds
}

// criticalReason is kubelettypes.IsCriticalPod, saying which test matched.
func criticalReason(p *v1.Pod) string {
	if src, ok := p.Annotations[configSourceAnnotation]; ok && src != "api" {
		return fmt.Sprintf("static pod (%s=%s): never evicted", configSourceAnnotation, src)
	}
	if _, ok := p.Annotations[configMirrorAnnotation]; ok {
		return "mirror of a static pod: never evicted"
	}
	if p.Spec.Priority != nil && *p.Spec.Priority >= systemCriticalPriority {
		return fmt.Sprintf("priority %d >= %d (system critical): never evicted", *p.Spec.Priority, systemCriticalPriority)
	}
	return ""
}

// request is GetResourceRequestQuantity: the pod's request without
// overhead, plus the overhead when that request is not zero.
func request(p *v1.Pod, name v1.ResourceName, k rules.KubeletRules) int64 {
	var q resource.Quantity
	if k.EffectiveRequests {
		podLevel := k.PodLevelRequests && resourcehelper.IsPodLevelResourcesSet(p)
		q = resourcehelper.PodRequests(p, resourcehelper.PodResourcesOptions{SkipContainerLevelResources: podLevel, ExcludeOverhead: true})[name]
	} else {
		q = containerRequests(p, name)
	}
	v := q.Value()
	if o, ok := p.Spec.Overhead[name]; ok && !q.IsZero() {
		v += o.Value()
	}
	return v
}

// containerRequests is the request before 1.34: the regular containers'
// sum or the largest init container's (sidecars included), whichever is
// larger; pod-level requests are not read.
func containerRequests(p *v1.Pod, name v1.ResourceName) resource.Quantity {
	var q resource.Quantity
	for _, c := range p.Spec.Containers {
		if r, ok := c.Resources.Requests[name]; ok {
			q.Add(r)
		}
	}
	for _, c := range p.Spec.InitContainers {
		if r, ok := c.Resources.Requests[name]; ok && q.Cmp(r) < 0 {
			q = r.DeepCopy()
		}
	}
	return q
}

func fsOf(f *statsapi.FsStats) fsUsage {
	if f == nil {
		return fsUsage{}
	}
	return fsUsage{u64(f.UsedBytes), u64(f.InodesUsed)}
}

func newPodInfo(p *v1.Pod, st *statsapi.PodStats, k rules.KubeletRules) *podInfo {
	pi := &podInfo{
		Pod: p, Name: p.Namespace + "/" + p.Name, Stats: st, Critical: criticalReason(p),
		Priority: corev1helpers.PodPriority(p), QOS: string(qos.GetPodQOS(p)),
		MemRequest: request(p, v1.ResourceMemory, k), StorageRequest: request(p, v1.ResourceEphemeralStorage, k),
		InodeRequest: request(p, "inodes", k), TGPS: p.Spec.TerminationGracePeriodSeconds,
	}
	if st == nil {
		return pi
	}
	if st.Memory != nil {
		pi.WorkingSet = u64(st.Memory.WorkingSetBytes)
	}
	if st.ProcessStats != nil {
		pi.Processes = u64(st.ProcessStats.ProcessCount)
	}
	for _, c := range st.Containers {
		pi.Root = pi.Root.plus(fsOf(c.Rootfs))
		pi.Logs = pi.Logs.plus(fsOf(c.Logs))
	}
	// localVolumeNames: hostPath and local ephemeral volumes (emptyDir on
	// disk, gitRepo, configMap), each counted once by name.
	for _, vol := range p.Spec.Volumes {
		local := vol.GitRepo != nil || vol.ConfigMap != nil || (vol.EmptyDir != nil && vol.EmptyDir.Medium == v1.StorageMediumDefault)
		if vol.HostPath == nil && !local {
			continue
		}
		for _, vs := range st.VolumeStats {
			if vs.Name == vol.Name {
				u := fsOf(&vs.FsStats)
				pi.Volumes = pi.Volumes.plus(u)
				if vol.HostPath != nil {
					pi.HostPath = pi.HostPath.plus(u)
				}
				break
			}
		}
	}
	return pi
}

// localStorageViolation is localStorageEviction's three checks, in its
// order: an emptyDir over its sizeLimit, the pod over its ephemeral-storage
// limit, a container over its own.
func localStorageViolation(pi *podInfo, l Layout, k rules.KubeletRules) string {
	p, st := pi.Pod, pi.Stats
	if st == nil {
		return ""
	}
	used := map[string]int64{}
	for _, vs := range st.VolumeStats {
		used[vs.Name] = u64(vs.UsedBytes)
	}
	for _, vol := range p.Spec.Volumes {
		ed := vol.EmptyDir
		if ed == nil {
			continue
		}
		if k.MemoryEmptyDirExempt && ed.Medium == v1.StorageMediumMemory {
			continue
		}
		u, ok := used[vol.Name]
		if ok && ed.SizeLimit != nil && ed.SizeLimit.Sign() == 1 && u > ed.SizeLimit.Value() {
			return fmt.Sprintf("emptyDir %q uses %d bytes, over its sizeLimit %s", vol.Name, u, ed.SizeLimit.String())
		}
	}
	limits := resourcehelper.PodLimits(p, resourcehelper.PodResourcesOptions{})
	if lim, ok := limits[v1.ResourceEphemeralStorage]; ok {
		var total int64
		if st.EphemeralStorage != nil {
			total = u64(st.EphemeralStorage.UsedBytes)
		}
		if total > lim.Value() {
			return fmt.Sprintf("pod uses %d bytes of ephemeral storage, over its containers' total limit %s", total, lim.String())
		}
	}
	perContainer := map[string]int64{}
	add := func(c v1.Container) {
		if lim := c.Resources.Limits.StorageEphemeral(); lim != nil && lim.Value() != 0 {
			perContainer[c.Name] = lim.Value()
		}
	}
	for _, c := range p.Spec.Containers {
		add(c)
	}
	if k.SidecarStorageLimits {
		for _, c := range p.Spec.InitContainers {
			if c.RestartPolicy != nil && *c.RestartPolicy == v1.ContainerRestartPolicyAlways {
				add(c)
			}
		}
	}
	for _, cs := range st.Containers {
		u := fsOf(cs.Logs).Bytes
		if !l.ImageFs {
			u += fsOf(cs.Rootfs).Bytes
		}
		if lim, ok := perContainer[cs.Name]; ok && lim < u {
			return fmt.Sprintf("container %s uses %d bytes of ephemeral storage, over its limit %d", cs.Name, u, lim)
		}
	}
	return ""
}
