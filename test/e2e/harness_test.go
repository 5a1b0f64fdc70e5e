package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestHarness checks the facts the suite relies on, without the plugin:
// the version, binding without a Node object, status writes (ready time,
// restarts, sidecar restarts), deletion cost, and that a bound pod stays
// Terminating while an unbound one vanishes.
func TestHarness(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := env.cp.admin
	v, err := c.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != "v1.37.1" {
		t.Errorf("server version %s, want v1.37.1", v.GitVersion)
	}
	ns := "e2e-harness"
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mk := func(name string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: podTemplate(nil, true).Spec}
		p, err := c.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	bound, unbound := mk("bound"), mk("unbound")
	ref := time.Now()
	st := running("node-x", 90*24*time.Hour).withRestarts(4).withSidecar(7).withCost("-007")
	if err := applyPodState(ctx, c, bound, st, ref); err != nil {
		t.Fatalf("apply state: %v", err)
	}
	if err := applyPodState(ctx, c, unbound, pending(""), ref); err != nil {
		t.Fatalf("apply state: %v", err)
	}
	got, err := c.CoreV1().Pods(ns).Get(ctx, "bound", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Spec.NodeName != "node-x" || got.Status.Phase != corev1.PodRunning || !isReady(got) {
		t.Errorf("bound pod: node %q phase %s ready %v", got.Spec.NodeName, got.Status.Phase, isReady(got))
	}
	for _, cond := range got.Status.Conditions {
		if cond.Type == corev1.PodReady {
			want := ref.Add(-st.ReadyAgo).Truncate(time.Second)
			if !cond.LastTransitionTime.Time.Equal(want) {
				t.Errorf("ready lastTransitionTime %s, want %s (whole seconds)", cond.LastTransitionTime.UTC(), want.UTC())
			}
		}
	}
	if len(got.Status.ContainerStatuses) != 1 || got.Status.ContainerStatuses[0].RestartCount != 4 {
		t.Errorf("containerStatuses %+v", got.Status.ContainerStatuses)
	}
	if len(got.Status.InitContainerStatuses) != 1 || got.Status.InitContainerStatuses[0].RestartCount != 7 {
		t.Errorf("initContainerStatuses %+v", got.Status.InitContainerStatuses)
	}
	if got.Annotations[deletionCostAnnotation] != "-007" {
		t.Errorf("cost annotation %q", got.Annotations[deletionCostAnnotation])
	}
	t.Logf("bound pod: %s", describePod(got))

	// An invalid deletion cost is rejected by the API server (gate on).
	err = annotatePod(ctx, c, ns, "unbound", map[string]string{deletionCostAnnotation: "+5"})
	if err == nil || !strings.Contains(err.Error(), "32bit integer") {
		t.Errorf("invalid cost +5: got %v, want a validation error", err)
	}

	// Deletion: the bound pod stays Terminating, the unbound one vanishes.
	for _, name := range []string{"bound", "unbound"} {
		if err := c.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2 * time.Second)
	if p, err := c.CoreV1().Pods(ns).Get(ctx, "bound", metav1.GetOptions{}); err != nil || p.DeletionTimestamp == nil {
		t.Errorf("bound pod after delete: err=%v, want it Terminating", err)
	}
	if _, err := c.CoreV1().Pods(ns).Get(ctx, "unbound", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("unbound pod after delete: err=%v, want NotFound", err)
	}
	if err := forceDelete(ctx, c, ns, "bound"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Pods(ns).Get(ctx, "bound", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("bound pod after force delete: err=%v, want NotFound", err)
	}
}
