package autoscaler

import (
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var now = time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)

func runningPods(n int) []*corev1.Pod {
	var out []*corev1.Pod
	for range n {
		out = append(out, &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &metav1.Time{Time: now.Add(-time.Hour)},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Time{Time: now.Add(-time.Hour)}}}}})
	}
	return out
}

func cpuHPA(current, target int32, minR, maxR int32) *autoscalingv2.HorizontalPodAutoscaler {
	return &autoscalingv2.HorizontalPodAutoscaler{
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MinReplicas: &minR, MaxReplicas: maxR,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &target}}}}},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType,
			Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: &current}}}}},
	}
}

func recommend(t *testing.T, h *autoscalingv2.HorizontalPodAutoscaler, spec, status int32, pods []*corev1.Pod) *Recommendation {
	t.Helper()
	r, err := Recommend(Input{HPA: h, SpecReplicas: spec, StatusReplicas: status, Pods: pods, Now: now, Config: DefaultConfig()})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestUtilizationRatioAndBounds(t *testing.T) {
	for _, c := range []struct {
		current, target, minR, maxR, spec int32
		want                              int32
	}{
		{25, 50, 1, 10, 8, 4},   // ceil(0.5*8)
		{47, 50, 1, 10, 8, 8},   // 0.94: within tolerance
		{10, 50, 3, 10, 8, 3},   // ceil(0.2*8)=2, raised to min
		{50, 50, 1, 5, 8, 5},    // above max: straight to max
		{150, 50, 1, 40, 8, 16}, // ceil(3*8)=24, capped at 2x current
	} {
		r := recommend(t, cpuHPA(c.current, c.target, c.minR, c.maxR), c.spec, c.spec, runningPods(int(c.spec)))
		if r.Desired != c.want || !r.Certain {
			t.Errorf("%+v: desired %d certain %v (%s)", c, r.Desired, r.Certain, r.Reason)
		}
	}
}

func TestBehaviorFromAFileGetsTheServerDefaults(t *testing.T) {
	h := cpuHPA(20, 50, 1, 20)
	// A scaleDown of 2 pods per minute, nothing else set.
	h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{
		Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 2, PeriodSeconds: 60}}}}
	r := recommend(t, h, 10, 10, runningPods(10))
	if r.Desired != 8 || !r.Certain || r.StabilizationWindowSeconds != 300 || !strings.Contains(r.Reason, "scaleDown policies") {
		t.Errorf("desired %d certain %v window %d reason %q", r.Desired, r.Certain, r.StabilizationWindowSeconds, r.Reason)
	}
	// A scale 30s ago is inside the 60s period: the controller counts it.
	h.Status.LastScaleTime = &metav1.Time{Time: now.Add(-30 * time.Second)}
	r = recommend(t, h, 10, 10, runningPods(10))
	if r.Certain || len(r.Uncertain) == 0 || !strings.Contains(r.Uncertain[0], "policy period") {
		t.Errorf("certain %v uncertain %v", r.Certain, r.Uncertain)
	}
	// Disabled: never scales down.
	off := autoscalingv2.DisabledPolicySelect
	h.Status.LastScaleTime = nil
	h.Spec.Behavior.ScaleDown.SelectPolicy = &off
	if r = recommend(t, h, 10, 10, runningPods(10)); r.Desired != 10 {
		t.Errorf("disabled: desired %d", r.Desired)
	}
}

func TestConfigurableTolerance(t *testing.T) {
	h := cpuHPA(42, 50, 1, 20) // 0.84: outside 10%, inside 20%
	h.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{Tolerance: resource.NewMilliQuantity(200, resource.DecimalSI)}}
	if r := recommend(t, h, 10, 10, runningPods(10)); r.Desired != 10 {
		t.Errorf("20%% tolerance: desired %d", r.Desired)
	}
	cfg := DefaultConfig()
	cfg.ConfigurableTolerance = false
	r, _ := Recommend(Input{HPA: h, SpecReplicas: 10, StatusReplicas: 10, Pods: runningPods(10), Now: now, Config: cfg})
	if r.Desired != 9 {
		t.Errorf("gate off: desired %d, want ceil(0.84*10)=9", r.Desired)
	}
}

func TestYoungPodsAndMetriclessPodsOpenARange(t *testing.T) {
	pods := runningPods(8)
	pods[0].Status.StartTime = &metav1.Time{Time: now.Add(-time.Minute)} // ready, inside the CPU initialization period
	// ceil(0.5*7) and ceil(0.5*8) agree: certain either way.
	r := recommend(t, cpuHPA(25, 50, 1, 10), 8, 8, pods)
	if !r.Certain || r.Desired != 4 || r.DesiredMax != 4 {
		t.Errorf("desired %d..%d certain %v", r.Desired, r.DesiredMax, r.Certain)
	}
	r = recommend(t, cpuHPA(20, 50, 1, 10), 8, 8, pods)
	if r.Certain || r.Desired != 3 || r.DesiredMax != 4 {
		t.Errorf("young pod: desired %d..%d certain %v", r.Desired, r.DesiredMax, r.Certain)
	}
	pods = runningPods(8)
	pods[0].Status.Phase = corev1.PodSucceeded
	r = recommend(t, cpuHPA(25, 50, 1, 10), 8, 8, pods)
	if r.Certain || r.DesiredMax != 8 {
		t.Errorf("metric-less pod: desired %d..%d certain %v", r.Desired, r.DesiredMax, r.Certain)
	}
}

func TestObjectAverageValueRoundsInTheStatus(t *testing.T) {
	h := &autoscalingv2.HorizontalPodAutoscaler{Spec: autoscalingv2.HorizontalPodAutoscalerSpec{MaxReplicas: 50,
		Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
			Metric: autoscalingv2.MetricIdentifier{Name: "lag"},
			Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewMilliQuantity(10_000, resource.DecimalSI)}}}}},
		Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ExternalMetricSourceType,
			External: &autoscalingv2.ExternalMetricStatus{Metric: autoscalingv2.MetricIdentifier{Name: "lag"},
				Current: autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(5_000, resource.DecimalSI)}}}}}}
	// 10 replicas at 5 per replica (rounded up): the total is 49.991..50, so 5 replicas either way.
	if r := recommend(t, h, 10, 10, runningPods(10)); r.Desired != 5 || !r.Certain {
		t.Errorf("desired %d..%d certain %v", r.Desired, r.DesiredMax, r.Certain)
	}
	// 10 replicas at 1m (rounded up) against 7m each: the total is 1m..10m,
	// so ceil(total/7m) is 1 or 2.
	h.Spec.Metrics[0].External.Target.AverageValue = resource.NewMilliQuantity(7, resource.DecimalSI)
	h.Status.CurrentMetrics[0].External.Current.AverageValue = resource.NewMilliQuantity(1, resource.DecimalSI)
	if r := recommend(t, h, 10, 10, runningPods(10)); r.Certain || r.Desired != 1 || r.DesiredMax != 2 {
		t.Errorf("desired %d..%d certain %v", r.Desired, r.DesiredMax, r.Certain)
	}
}

func TestInvalidMetricBlocksScaleDown(t *testing.T) {
	h := cpuHPA(10, 50, 1, 10)
	h.Spec.Metrics = append(h.Spec.Metrics, autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: "rps"}, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewQuantity(1, resource.DecimalSI)}}})
	h.Status.CurrentMetrics = append(h.Status.CurrentMetrics, autoscalingv2.MetricStatus{}) // failed to compute
	r := recommend(t, h, 8, 8, runningPods(8))
	if r.Desired != 8 || !strings.Contains(r.Reason, "does not scale down while a metric is invalid") {
		t.Errorf("desired %d reason %q", r.Desired, r.Reason)
	}
}
