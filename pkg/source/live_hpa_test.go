package source

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// hpa/NAME reads the autoscaler, then its target as if it had been named,
// and keeps only the managedFields entries that own pod-deletion-cost.
func TestLiveLoadAutoscalerReadsItsTarget(t *testing.T) {
	sel := map[string]string{"app": "web"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop"},
		Spec: appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}}}
	h := &autoscalingv2.HorizontalPodAutoscaler{ObjectMeta: metav1.ObjectMeta{Name: "web-hpa", Namespace: "shop"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, MaxReplicas: 5}}
	p := livePod("web-1", "shop", sel)
	p.ManagedFields = append(p.ManagedFields, metav1.ManagedFieldsEntry{Manager: "karpenter", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:controller.kubernetes.io/pod-deletion-cost":{}}}}`)})
	l := &Live{Client: fake.NewClientset(d, h, p, livePod("other", "shop", map[string]string{"app": "db"}))}
	s, err := l.Load(context.Background(), snapshot.Ref{Kind: snapshot.HorizontalPodAutoscaler, Namespace: "shop", Name: "web-hpa"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Deployments) != 1 || len(s.HPAs) != 1 || s.HPAs[0].Name != "web-hpa" {
		t.Fatalf("deployments %d hpas %v", len(s.Deployments), s.HPAs)
	}
	if got := podNamesOf(s); len(got) != 1 || got[0] != "web-1" {
		t.Fatalf("pods %v", got)
	}
	if mf := s.Pods[0].ManagedFields; len(mf) != 1 || mf[0].Manager != "karpenter" {
		t.Errorf("managedFields kept %v, want only karpenter's", mf)
	}

	// An unsupported target: the autoscaler alone, for the model to refuse.
	h2 := h.DeepCopy()
	h2.Name, h2.Spec.ScaleTargetRef = "ro", autoscalingv2.CrossVersionObjectReference{APIVersion: "argoproj.io/v1alpha1", Kind: "Rollout", Name: "web"}
	l = &Live{Client: fake.NewClientset(h2)}
	s, err = l.Load(context.Background(), snapshot.Ref{Kind: snapshot.HorizontalPodAutoscaler, Namespace: "shop", Name: "ro"})
	if err != nil || len(s.HPAs) != 1 || len(s.Pods) != 0 {
		t.Errorf("unsupported target: %v %+v", err, s)
	}
}
