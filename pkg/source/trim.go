package source

import (
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
