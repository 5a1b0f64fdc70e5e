package workload

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// hpaFixture: Deployment web at 6 replicas, one ReplicaSet of 6 ready pods,
// and autoscaler web-hpa on a pods metric at current/target milli-units.
func hpaFixture(current, target int64, minR int32) *snapshot.Snapshot {
	d := mkDeploy(6, 6, "25%", "25%")
	rs := mkDepRS(d, "abc", "web:2", 6, 24*time.Hour, 0, 0)
	h := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web-hpa", Namespace: testNS},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    &minR, MaxReplicas: 10,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "rps"},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewMilliQuantity(target, resource.DecimalSI)}}}},
		},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: 6, CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricStatus{
			Metric: autoscalingv2.MetricIdentifier{Name: "rps"}, Current: autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(current, resource.DecimalSI)}}}}},
	}
	return &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{rs}, Pods: readyPods(rs, 6, "node-"), HPAs: []*autoscalingv2.HorizontalPodAutoscaler{h}}
}

func TestAutoscalerPreviewsItsRecommendationWithTheTargetsModel(t *testing.T) {
	s := hpaFixture(50_000, 100_000, 1) // half the target: 6 -> 3
	p := predictOK(t, s, snapshot.HorizontalPodAutoscaler, "web-hpa", UseRecommendation, rules37(t))
	direct := predictOK(t, s, snapshot.Deployment, "web", 3, rules37(t))
	if p.Autoscaler == nil || p.Autoscaler.Recommendation.Desired != 3 || !p.Autoscaler.Recommendation.Certain || p.Autoscaler.Previewed != 3 {
		t.Fatalf("autoscaler %+v", p.Autoscaler)
	}
	if !slices.Equal(p.Victims, direct.Victims) || len(p.Victims) != 3 {
		t.Errorf("victims %v, the Deployment's own scale to 3 deletes %v", p.Victims, direct.Victims)
	}
	if !strings.Contains(p.Message, "recommends 3 replicas (now 6)") {
		t.Errorf("message %q", p.Message)
	}
	if !hasWarning(p, "stabilization window (300s)") {
		t.Errorf("no stabilization note in %v", p.Warnings)
	}
	if _, ok := p.Rules.FeatureGates["HPAConfigurableTolerance"]; !ok {
		t.Errorf("the autoscaler's gate is not listed: %v", p.Rules.FeatureGates)
	}
}

func TestAutoscalerNoScaleInDeletesNothing(t *testing.T) {
	p := predictOK(t, hpaFixture(120_000, 100_000, 1), snapshot.HorizontalPodAutoscaler, "web-hpa", UseRecommendation, rules37(t))
	if len(p.Victims) != 0 || !strings.Contains(p.Message, "no pod would be deleted") || !strings.Contains(p.Message, "recommends 8") {
		t.Errorf("victims %v message %q", p.Victims, p.Message)
	}
	p = predictOK(t, hpaFixture(95_000, 100_000, 1), snapshot.HorizontalPodAutoscaler, "web-hpa", UseRecommendation, rules37(t))
	if len(p.Victims) != 0 || !strings.Contains(p.Message, "recommends 6 replicas (now 6)") {
		t.Errorf("within tolerance: victims %v message %q", p.Victims, p.Message)
	}
}

func TestAutoscalerManualReplicasOutsideBoundsWarns(t *testing.T) {
	p := predictOK(t, hpaFixture(50_000, 100_000, 4), snapshot.HorizontalPodAutoscaler, "web-hpa", 2, rules37(t))
	if len(p.Victims) != 4 || p.Autoscaler.Previewed != 2 || !hasWarning(p, "below the autoscaler's minReplicas 4") {
		t.Errorf("victims %v previewed %d warnings %v", p.Victims, p.Autoscaler.Previewed, p.Warnings)
	}
	if p.Autoscaler.Recommendation.Desired != 4 {
		t.Errorf("recommendation %d, want minReplicas 4", p.Autoscaler.Recommendation.Desired)
	}
}

func TestAutoscalerUnsupportedTargetAndNotFound(t *testing.T) {
	s := hpaFixture(50_000, 100_000, 1)
	s.HPAs[0].Spec.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "argoproj.io/v1alpha1", Kind: "Rollout", Name: "web"}
	_, err := Predict(s, snapshot.Ref{Kind: snapshot.HorizontalPodAutoscaler, Namespace: testNS, Name: "web-hpa"}, UseRecommendation, Options{Rules: rules37(t), Now: testNow})
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "Rollout") {
		t.Errorf("err %v", err)
	}
	_, err = Predict(s, snapshot.Ref{Kind: snapshot.HorizontalPodAutoscaler, Namespace: testNS, Name: "nope"}, UseRecommendation, Options{Rules: rules37(t), Now: testNow})
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Errorf("err %v", err)
	}
}
