package rules

// The kubelet's node-pressure eviction switches, read from
// pkg/kubelet/eviction (eviction_manager.go, helpers.go, defaults_linux.go)
// and pkg/api/v1/resource of each release; docs/eviction.md explains them.

// Gate names that change node-pressure eviction.
const (
	// KubeletSeparateDiskGC: a runtime with a separate container filesystem
	// gets its own ranking; with the gate off such a kubelet has no ranking
	// at all and evicts only for local storage.
	KubeletSeparateDiskGC = "KubeletSeparateDiskGC"
	// AllowOverwriteTerminationGracePeriodSeconds (deprecated, default off
	// from 1.32): when on, soft evictions ignore the pod's own grace period.
	// It existed (GA, on) long before 1.32, but eviction reads it only then.
	AllowOverwriteTerminationGracePeriodSeconds = "AllowOverwriteTerminationGracePeriodSeconds"
	// PodLevelResources: pod-level requests replace the containers' sum.
	PodLevelResources = "PodLevelResources"
	// InPlacePodVerticalScalingMemoryBackedVolumes: size limits of
	// memory-backed emptyDirs are left to the kernel.
	InPlacePodVerticalScalingMemoryBackedVolumes = "InPlacePodVerticalScalingMemoryBackedVolumes"
)

// KindKubelet marks the kubelet's switches.
const KindKubelet = "kubelet"

// KubeletRules are the kubelet eviction manager's switches.
type KubeletRules struct {
	// NodeReclaimMinReclaim: after image and container garbage collection
	// the kubelet evicts pods unless every threshold is back above its value
	// plus minimum reclaim; before, back above its value sufficed, so a disk
	// signal held only by its minimum reclaim evicted no more pods.
	NodeReclaimMinReclaim bool
	// EffectiveRequests: a pod's request is resourcehelper.PodRequests
	// (restartable init containers add to the regular ones, pod-level
	// requests replace them); before, the containers' sum or the largest
	// init container's, whichever is larger.
	EffectiveRequests bool
	// ContainerFsSignals: containerfs.available and containerfs.inodesFree
	// exist (earlier kubelets reject them as unsupported signals).
	ContainerFsSignals bool
	// SplitContainerFs: a separate container filesystem is ranked on its
	// own (nodefs counts writable layers, imagefs only images).
	SplitContainerFs bool
	// ImageFsInodesDefault: the default hard thresholds include
	// imagefs.inodesFree<5%.
	ImageFsInodesDefault bool
	// OneSecondGrace: hard and local-storage evictions give 1 s, not 0.
	OneSecondGrace bool
	// SoftGracePodCap: soft evictions give min(evictionMaxPodGracePeriod,
	// the pod's terminationGracePeriodSeconds), not the maximum alone.
	SoftGracePodCap bool
	// SoftGraceOverwrite: the deprecated gate that, when on, ignores the
	// pod's own grace period in soft evictions.
	SoftGraceOverwrite bool
	// PodLevelRequests: pod-level requests are the pod's request in ranking.
	PodLevelRequests bool
	// SidecarStorageLimits: restartable init containers' ephemeral-storage
	// limits are enforced like regular containers'.
	SidecarStorageLimits bool
	// MemoryEmptyDirExempt: memory-backed emptyDirs are not evicted for
	// exceeding their sizeLimit.
	MemoryEmptyDirExempt bool
}

var kubeletSwitches = []Switch{
	{Field: "Kubelet.NodeReclaimMinReclaim", Kind: KindKubelet, Since: 22,
		What: "after image and container GC, pods are evicted until every threshold is back above value + minimum reclaim (was: above value)", ref: func(r *RuleSet) *bool { return &r.Kubelet.NodeReclaimMinReclaim }},
	{Field: "Kubelet.ContainerFsSignals", Kind: KindKubelet, Since: 29,
		What: "containerfs.available and containerfs.inodesFree are signals (set from nodefs or imagefs)", ref: func(r *RuleSet) *bool { return &r.Kubelet.ContainerFsSignals }},
	{Field: "Kubelet.SplitContainerFs", Kind: KindKubelet, Since: 29, Gate: KubeletSeparateDiskGC,
		What: "a separate container filesystem is ranked on its own (off: such a kubelet evicts only for local storage)", ref: func(r *RuleSet) *bool { return &r.Kubelet.SplitContainerFs }},
	{Field: "Kubelet.ImageFsInodesDefault", Kind: KindKubelet, Since: 30,
		What: "default hard thresholds include imagefs.inodesFree<5%", ref: func(r *RuleSet) *bool { return &r.Kubelet.ImageFsInodesDefault }},
	{Field: "Kubelet.OneSecondGrace", Kind: KindKubelet, Since: 31,
		What: "hard and local-storage evictions give 1 s to stop (was 0)", ref: func(r *RuleSet) *bool { return &r.Kubelet.OneSecondGrace }},
	{Field: "Kubelet.SoftGracePodCap", Kind: KindKubelet, Since: 32,
		What: "soft evictions give min(evictionMaxPodGracePeriod, the pod's terminationGracePeriodSeconds)", ref: func(r *RuleSet) *bool { return &r.Kubelet.SoftGracePodCap }},
	{Field: "Kubelet.SoftGraceOverwrite", Kind: KindKubelet, Since: 32, Until: 35, Gate: AllowOverwriteTerminationGracePeriodSeconds,
		What: "soft evictions ignore the pod's terminationGracePeriodSeconds", ref: func(r *RuleSet) *bool { return &r.Kubelet.SoftGraceOverwrite }},
	{Field: "Kubelet.PodLevelRequests", Kind: KindKubelet, Since: 34, Gate: PodLevelResources,
		What: "pod-level requests are the pod's request when ranking", ref: func(r *RuleSet) *bool { return &r.Kubelet.PodLevelRequests }},
	{Field: "Kubelet.EffectiveRequests", Kind: KindKubelet, Since: 34,
		What: "ranking reads the pod's effective requests: sidecars add up, pod-level requests apply (was: containers' sum or largest init container)", ref: func(r *RuleSet) *bool { return &r.Kubelet.EffectiveRequests }},
	{Field: "Kubelet.SidecarStorageLimits", Kind: KindKubelet, Since: 37,
		What: "sidecar (restartable init) containers' ephemeral-storage limits are enforced", ref: func(r *RuleSet) *bool { return &r.Kubelet.SidecarStorageLimits }},
	{Field: "Kubelet.MemoryEmptyDirExempt", Kind: KindKubelet, Since: 37, Gate: InPlacePodVerticalScalingMemoryBackedVolumes,
		What: "memory-backed emptyDirs are not evicted for exceeding sizeLimit", ref: func(r *RuleSet) *bool { return &r.Kubelet.MemoryEmptyDirExempt }},
}

// The kubelet's switches join the one version table.
func init() { Switches = append(Switches, kubeletSwitches...) }
