package inprocess

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The fake API is as strict as the brief needs: stale updates conflict,
// the main resource never writes status, the status subresource never
// writes spec, and a bound pod only starts terminating on delete.
func TestStrictAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cs, _ := newStrictAPI(1, 0)
	rsc := cs.AppsV1().ReplicaSets(ns)
	rs, err := rsc.Create(ctx, &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: ns},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptrTo(int32(2))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rs.UID == "" || rs.ResourceVersion == "" || rs.Generation != 1 {
		t.Fatalf("created %+v", rs.ObjectMeta)
	}
	stale := rs.DeepCopy()
	rs.Spec.Replicas = ptrTo(int32(3))
	rs.Status.Replicas = 9
	rs, err = rsc.Update(ctx, rs, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rs.Generation != 2 || rs.Status.Replicas != 0 {
		t.Errorf("main update: generation %d status.replicas %d, want 2 and 0", rs.Generation, rs.Status.Replicas)
	}
	stale.Spec.Replicas = ptrTo(int32(5))
	if _, err := rsc.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("stale update: %v, want a conflict", err)
	}
	rs.Status.Replicas = 3
	rs.Spec.Replicas = ptrTo(int32(7))
	rs, err = rsc.UpdateStatus(ctx, rs, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *rs.Spec.Replicas != 3 || rs.Status.Replicas != 3 || rs.Generation != 2 {
		t.Errorf("status update: spec %d status %d generation %d, want 3, 3, 2", *rs.Spec.Replicas, rs.Status.Replicas, rs.Generation)
	}
	pods := cs.CoreV1().Pods(ns)
	for _, p := range []*corev1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "bound", Namespace: ns}, Spec: corev1.PodSpec{NodeName: "n1"}},
		{ObjectMeta: metav1.ObjectMeta{GenerateName: "free-", Namespace: ns}},
	} {
		created, err := pods.Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := pods.Delete(ctx, created.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		got, err := pods.Get(ctx, created.Name, metav1.GetOptions{})
		switch {
		case p.Spec.NodeName != "" && (err != nil || got.DeletionTimestamp == nil):
			t.Errorf("bound pod after delete: %v %v, want terminating", got, err)
		case p.Spec.NodeName == "" && !apierrors.IsNotFound(err):
			t.Errorf("unbound pod %s after delete: %v, want gone", created.Name, err)
		}
	}
}
