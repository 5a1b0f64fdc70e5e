package source

import corev1 "k8s.io/api/core/v1"

// trimPod drops what no part of the prediction reads, so that a snapshot
// of many pods stays small: managed fields other than the deletion cost's, volumes, and of containers all
// but their names (and, for init containers, the restart policy that marks
// a sidecar); of container statuses all but name, readiness, start, state
// and restart count. Everything else is kept: metadata, the scheduling
// fields, phase and conditions.
func trimPod(p *corev1.Pod) {
	p.ManagedFields = costManagers(p.ManagedFields) // who would overwrite steering
	p.Spec.Volumes = nil
	p.Spec.EphemeralContainers = nil
	p.Spec.Containers = trimContainers(p.Spec.Containers)
	p.Spec.InitContainers = trimContainers(p.Spec.InitContainers)
	p.Status.ContainerStatuses = trimStatuses(p.Status.ContainerStatuses)
	p.Status.InitContainerStatuses = trimStatuses(p.Status.InitContainerStatuses)
	p.Status.EphemeralContainerStatuses = trimStatuses(p.Status.EphemeralContainerStatuses)
	// Decoding grows slices by doubling; exact copies hold a third less.
	p.Status.Conditions = exact(p.Status.Conditions)
	p.Status.PodIPs = exact(p.Status.PodIPs)
	p.Status.HostIPs = exact(p.Status.HostIPs)
	p.Spec.Tolerations = exact(p.Spec.Tolerations)
	p.OwnerReferences = exact(p.OwnerReferences)
	p.Finalizers = exact(p.Finalizers)
}

func exact[T any](s []T) []T {
	if cap(s) == len(s) {
		return s
	}
	return append(make([]T, 0, len(s)), s...)
}

func trimContainers(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: c.Name, RestartPolicy: c.RestartPolicy}
	}
	return out
}

func trimStatuses(cs []corev1.ContainerStatus) []corev1.ContainerStatus {
	if cs == nil {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(cs))
	for i, c := range cs {
		out[i] = corev1.ContainerStatus{Name: c.Name, Ready: c.Ready, Started: c.Started, State: c.State, RestartCount: c.RestartCount}
	}
	return out
}
