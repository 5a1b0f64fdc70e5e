package disruption

import (
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Template is the pod template of a known owner: the pod its controller
// creates in place of one that leaves.
func Template(owner metav1.Object) (corev1.PodTemplateSpec, bool) {
	switch o := owner.(type) {
	case *appsv1.ReplicaSet:
		return o.Spec.Template, true
	case *appsv1.StatefulSet:
		return o.Spec.Template, true
	case *corev1.ReplicationController:
		if o.Spec.Template != nil {
			return *o.Spec.Template, true
		}
	case *batchv1.Job:
		return o.Spec.Template, true
	}
	return corev1.PodTemplateSpec{}, false
}

// OwnerName is Kind/name of a pod's controller, a ReplicaSet named by
// its Deployment.
func OwnerName(ref *metav1.OwnerReference, owner metav1.Object) string {
	if rs, ok := owner.(*appsv1.ReplicaSet); ok {
		if d := metav1.GetControllerOfNoCopy(rs); d != nil && d.Kind == "Deployment" {
			return "Deployment/" + d.Name
		}
	}
	return ref.Kind + "/" + ref.Name
}
