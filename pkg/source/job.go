package source

import (
	"context"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// jobTarget reads a Job; its pods are listed by its selector.
func (l *Live) jobTarget(ctx context.Context, ref snapshot.Ref) (*target, *metav1.LabelSelector, error) {
	j, err := l.Client.BatchV1().Jobs(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, err
	}
	strip(&j.ObjectMeta)
	return &target{rv: j.ResourceVersion, put: func(s *snapshot.Snapshot) { s.Jobs = append(s.Jobs, j) }}, j.Spec.Selector, nil
}

// keepJobFields keeps what the Job controller reads of a pod: its
// completion index (Indexed Jobs) and whether it still has the tracking
// finalizer (a finished pod not yet counted in the Job's status).
func keepJobFields(p, in *corev1.Pod) {
	if v, ok := in.Annotations[batchv1.JobCompletionIndexAnnotation]; ok {
		if p.Annotations == nil {
			p.Annotations = map[string]string{}
		}
		p.Annotations[batchv1.JobCompletionIndexAnnotation] = v
	}
	if slices.Contains(in.Finalizers, batchv1.JobTrackingFinalizer) {
		p.Finalizers = []string{batchv1.JobTrackingFinalizer}
	}
}
