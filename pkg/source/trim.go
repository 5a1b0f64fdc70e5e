package source

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"unique"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/engine"
)

// trimPod keeps only what some part of the prediction reads, so that a
// snapshot of many pods stays small (a trimmed pod is the compact record
// of a pod):
//   - metadata: name, namespace, UID, creation and deletion times, labels
//     (selectors), owner references, the deletion-cost annotation and the
//     managed-fields entries that own it (who would overwrite steering),
//     a Job's completion index and tracking finalizer;
//   - spec: the node, and of init containers the name and restart policy
//     (a sidecar is an init container that restarts always);
//   - status: phase, the Ready conditions, start time, and of container
//     statuses the name and restart count.
//
// Strings that repeat across pods (namespace, label keys and values, owner,
// node, condition and container names) are shared rather than copied.
func trimPod(p *corev1.Pod) {
	in := *p
	*p = corev1.Pod{TypeMeta: in.TypeMeta}
	p.ObjectMeta = metav1.ObjectMeta{
		Name:              in.Name,
		Namespace:         intern(in.Namespace),
		UID:               in.UID,
		CreationTimestamp: in.CreationTimestamp,
		DeletionTimestamp: in.DeletionTimestamp,
		Labels:            internMap(in.Labels),
		OwnerReferences:   trimOwners(in.OwnerReferences),
		ManagedFields:     costManagers(in.ManagedFields),
	}
	if v, ok := in.Annotations[engine.DeletionCostAnnotation]; ok {
		p.Annotations = map[string]string{engine.DeletionCostAnnotation: v}
	}
	keepJobFields(p, &in)
	p.Spec.NodeName = intern(in.Spec.NodeName)
	p.Spec.InitContainers = trimContainers(in.Spec.InitContainers)
	p.Status.Phase = corev1.PodPhase(intern(string(in.Status.Phase)))
	p.Status.StartTime = in.Status.StartTime
	p.Status.Conditions = readyConditions(in.Status.Conditions)
	p.Status.ContainerStatuses = trimStatuses(in.Status.ContainerStatuses)
	p.Status.InitContainerStatuses = trimStatuses(in.Status.InitContainerStatuses)
}

func intern(s string) string { return unique.Make(s).Value() }

func internMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[intern(k)] = intern(v)
	}
	return out
}

func trimOwners(refs []metav1.OwnerReference) []metav1.OwnerReference {
	if refs == nil {
		return nil
	}
	out := make([]metav1.OwnerReference, len(refs))
	for i, r := range refs {
		out[i] = metav1.OwnerReference{APIVersion: intern(r.APIVersion), Kind: intern(r.Kind), Name: intern(r.Name),
			UID: r.UID, Controller: r.Controller, BlockOwnerDeletion: r.BlockOwnerDeletion}
	}
	return out
}

// readyConditions keeps the Ready conditions, in order: readiness is the
// first of them (podutils.GetPodConditionFromList), nothing reads the others.
func readyConditions(cs []corev1.PodCondition) []corev1.PodCondition {
	n := 0
	for _, c := range cs {
		if c.Type == corev1.PodReady {
			n++
		}
	}
	if n == 0 {
		if cs == nil {
			return nil
		}
		return []corev1.PodCondition{}
	}
	out := make([]corev1.PodCondition, 0, n)
	for _, c := range cs {
		if c.Type == corev1.PodReady {
			out = append(out, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionStatus(intern(string(c.Status))),
				LastTransitionTime: c.LastTransitionTime})
		}
	}
	return out
}

func trimContainers(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: intern(c.Name), RestartPolicy: c.RestartPolicy}
	}
	return out
}

func trimStatuses(cs []corev1.ContainerStatus) []corev1.ContainerStatus {
	if cs == nil {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(cs))
	for i, c := range cs {
		out[i] = corev1.ContainerStatus{Name: intern(c.Name), RestartCount: c.RestartCount}
	}
	return out
}

// trimForScheduler keeps of a bound pod what the scheduler's filters,
// preemption, the Eviction API and kubectl drain's pod filters read, so
// that a cluster of many pods stays small; a pod that is not bound (the
// pending pod, nominated pods) is kept whole. Unlike trimPod it removes
// what is known to be unread, and keeps everything else:
//   - metadata: managed fields, and annotations other than the mirror-pod
//     and deletion-cost ones;
//   - spec: of containers everything but name, resources, ports and
//     restart policy (image, command, env, mounts, probes, ...); ephemeral
//     containers; volumes' sources other than their kind (an emptyDir and
//     a claim are kept whole); security context, image pull secrets, DNS
//     config, host aliases, readiness gates;
//   - status: IPs, message, ephemeral container statuses, and of container
//     statuses everything but name, readiness, restarts and resources;
//     condition messages.
func trimForScheduler(p *corev1.Pod) {
	if p.Spec.NodeName == "" {
		return
	}
	p.TypeMeta = metav1.TypeMeta{APIVersion: intern(p.APIVersion), Kind: intern(p.Kind)}
	trimSchedulerMeta(&p.ObjectMeta)
	trimSchedulerSpec(&p.Spec)
	trimSchedulerStatus(&p.Status)
}

func trimSchedulerMeta(m *metav1.ObjectMeta) {
	m.Namespace = intern(m.Namespace)
	m.GenerateName = intern(m.GenerateName)
	m.ResourceVersion = ""
	m.ManagedFields = nil
	m.Labels = shareMap(m.Labels)
	m.OwnerReferences = trimOwners(m.OwnerReferences)
	var keep map[string]string
	for _, k := range []string{corev1.MirrorPodAnnotationKey, engine.DeletionCostAnnotation} {
		if v, ok := m.Annotations[k]; ok {
			if keep == nil {
				keep = map[string]string{}
			}
			keep[k] = v
		}
	}
	m.Annotations = keep
}

func trimSchedulerSpec(s *corev1.PodSpec) {
	s.NodeName = intern(s.NodeName)
	s.PriorityClassName = intern(s.PriorityClassName)
	s.SchedulerName = intern(s.SchedulerName)
	s.ServiceAccountName, s.DeprecatedServiceAccount = "", ""
	s.Containers = trimSchedulerContainers(s.Containers)
	s.InitContainers = trimSchedulerContainers(s.InitContainers)
	s.EphemeralContainers = nil
	s.Volumes = trimVolumes(s.Volumes)
	s.SecurityContext, s.ImagePullSecrets, s.DNSConfig, s.HostAliases, s.ReadinessGates = nil, nil, nil, nil, nil
	s.NodeSelector = shareMap(s.NodeSelector)
	for i := range s.Tolerations {
		t := &s.Tolerations[i]
		t.Key, t.Value = intern(t.Key), intern(t.Value)
	}
}

func trimSchedulerContainers(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: intern(c.Name), Ports: c.Ports, RestartPolicy: c.RestartPolicy, Resources: corev1.ResourceRequirements{
			Requests: shareResources(c.Resources.Requests), Limits: shareResources(c.Resources.Limits), Claims: c.Resources.Claims}}
	}
	return out
}

// trimVolumes keeps each volume's name and kind; the scheduler's volume
// filters are not modelled for bound pods, and kubectl drain asks only
// whether a volume is an emptyDir.
func trimVolumes(vs []corev1.Volume) []corev1.Volume {
	if vs == nil {
		return nil
	}
	out := make([]corev1.Volume, len(vs))
	for i, v := range vs {
		src := v.VolumeSource
		switch {
		case src.Projected != nil:
			src = corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{}}
		case src.ConfigMap != nil:
			src = corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{}}
		case src.Secret != nil:
			src = corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{}}
		case src.DownwardAPI != nil:
			src = corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{}}
		}
		out[i] = corev1.Volume{Name: intern(v.Name), VolumeSource: src}
	}
	return out
}

func trimSchedulerStatus(s *corev1.PodStatus) {
	s.Phase = corev1.PodPhase(intern(string(s.Phase)))
	s.QOSClass = corev1.PodQOSClass(intern(string(s.QOSClass)))
	s.HostIP, s.HostIPs, s.PodIP, s.PodIPs, s.Message = "", nil, "", nil, ""
	s.EphemeralContainerStatuses = nil
	for i := range s.Conditions {
		c := &s.Conditions[i]
		*c = corev1.PodCondition{Type: corev1.PodConditionType(intern(string(c.Type))), Status: corev1.ConditionStatus(intern(string(c.Status))),
			Reason: intern(c.Reason), LastTransitionTime: c.LastTransitionTime, ObservedGeneration: c.ObservedGeneration}
	}
	s.ContainerStatuses = trimSchedulerStatuses(s.ContainerStatuses)
	s.InitContainerStatuses = trimSchedulerStatuses(s.InitContainerStatuses)
}

func trimSchedulerStatuses(cs []corev1.ContainerStatus) []corev1.ContainerStatus {
	if cs == nil {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(cs))
	for i, c := range cs {
		out[i] = corev1.ContainerStatus{Name: intern(c.Name), Ready: c.Ready, Started: c.Started, RestartCount: c.RestartCount,
			AllocatedResources: c.AllocatedResources, Resources: c.Resources}
	}
	return out
}

// Pods of one workload have the same labels and requests: the scheduler
// trim shares one map among them (about 1 KB per pod). Nothing changes a
// read pod's maps: a pod that is changed is a deep copy.
var sharedLabelMaps, sharedResourceLists sync.Map // canonical text -> map

func shareMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(m[k])
		b.WriteByte(0)
	}
	if v, ok := sharedLabelMaps.Load(b.String()); ok {
		return v.(map[string]string)
	}
	v, _ := sharedLabelMaps.LoadOrStore(b.String(), internMap(m))
	return v.(map[string]string)
}

func shareResources(rl corev1.ResourceList) corev1.ResourceList {
	if len(rl) == 0 {
		return rl
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(rl)) {
		q := rl[k]
		b.WriteString(string(k))
		b.WriteByte(0)
		b.WriteString(q.String())
		b.WriteByte(0)
	}
	if v, ok := sharedResourceLists.Load(b.String()); ok {
		return v.(corev1.ResourceList)
	}
	v, _ := sharedResourceLists.LoadOrStore(b.String(), rl)
	return v.(corev1.ResourceList)
}

// trimNode drops what no filter reads and is large on real nodes: managed
// fields and the list of images (ImageLocality only scores).
func trimNode(n *corev1.Node) {
	n.ManagedFields = nil
	n.Status.Images = nil
}
