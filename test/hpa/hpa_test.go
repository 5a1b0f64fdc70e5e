// Package hpa checks pkg/autoscaler against the real HorizontalPodAutoscaler
// controller of Kubernetes 1.37 (k8s.io/kubernetes
// pkg/controller/podautoscaler), run in-process with a fake clientset, a
// fake scale client and a fake metrics client, over seeded random
// autoscalers, pods and per-pod metrics.
//
// The controller's first sync writes status.currentMetrics (what a user
// sees) and scales the target. The model reads that status, the spec and
// the pods, and must give the same count whenever it calls itself certain,
// and a range holding the controller's count otherwise.
//
// Both stabilization windows are 0 here: the model assumes the window has
// seen only the current recommendation, which is what a 0 window means.
package hpa

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta/testrestmapper"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	scalefake "k8s.io/client-go/scale/fake"
	core "k8s.io/client-go/testing"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	autoscalingapiv2 "k8s.io/kubernetes/pkg/apis/autoscaling/v2"
	"k8s.io/kubernetes/pkg/controller/podautoscaler"
	metricsclient "k8s.io/kubernetes/pkg/controller/podautoscaler/metrics"
	"k8s.io/utils/ptr"

	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"

	"github.com/scale-preview/scale-preview/pkg/autoscaler"
)

const (
	cpuInit      = 5 * time.Minute
	readyDelay   = 30 * time.Second
	tolerance    = 0.1
	podLabel     = "app"
	targetName   = "web"
	container    = "app"
	sideCar      = "side"
	metricWindow = 30 * time.Second
)

// scenario is one autoscaler with its namespace's pods and metrics.
type scenario struct {
	ns             string
	hpa            *autoscalingv2.HorizontalPodAutoscaler
	spec, status   int32
	pods           []*corev1.Pod
	cpu, mem       map[string]int64 // pod -> milli usage (summed over containers)
	cpuApp         map[string]int64 // the app container only
	raw            map[string]map[string]int64
	object         map[string]int64
	external       map[string][]int64
	metricTS       map[string]time.Time
	metriclessPods int // Running pods without metrics: breaks the model's stated assumption
}

// fakeMetrics answers per namespace.
type fakeMetrics struct{ byNS map[string]*scenario }

func (f *fakeMetrics) GetResourceMetric(_ context.Context, res corev1.ResourceName, ns string, _ labels.Selector, c string) (metricsclient.PodMetricsInfo, time.Time, error) {
	s := f.byNS[ns]
	src := s.mem
	if res == corev1.ResourceCPU {
		src = s.cpu
		if c == container {
			src = s.cpuApp
		}
	}
	out := metricsclient.PodMetricsInfo{}
	for p, v := range src {
		out[p] = metricsclient.PodMetric{Value: v, Timestamp: s.metricTS[p], Window: metricWindow}
	}
	return out, time.Now(), nil
}

func (f *fakeMetrics) GetRawMetric(name, ns string, _, _ labels.Selector) (metricsclient.PodMetricsInfo, time.Time, error) {
	s := f.byNS[ns]
	out := metricsclient.PodMetricsInfo{}
	for p, v := range s.raw[name] {
		out[p] = metricsclient.PodMetric{Value: v, Timestamp: s.metricTS[p], Window: metricWindow}
	}
	return out, time.Now(), nil
}

func (f *fakeMetrics) GetObjectMetric(name, ns string, _ *autoscalingv2.CrossVersionObjectReference, _ labels.Selector) (int64, time.Time, error) {
	v, ok := f.byNS[ns].object[name]
	if !ok {
		return 0, time.Time{}, fmt.Errorf("no object metric %s", name)
	}
	return v, time.Now(), nil
}

func (f *fakeMetrics) GetExternalMetric(name, ns string, _ labels.Selector) ([]int64, time.Time, error) {
	v, ok := f.byNS[ns].external[name]
	if !ok {
		return nil, time.Time{}, fmt.Errorf("no external metric %s", name)
	}
	return v, time.Now(), nil
}

func seed(t *testing.T) uint64 {
	s := uint64(20261123)
	if v := os.Getenv("HPA_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		s = n
	}
	t.Logf("seed %d (set HPA_SEED to vary)", s)
	return s
}

func TestRecommendationMatchesController(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 300
	}
	if v := os.Getenv("HPA_CASES"); v != "" {
		n, _ = strconv.Atoi(v)
	}
	rng := rand.New(rand.NewPCG(seed(t), 17))
	now := time.Now()
	var all []*scenario
	for i := range n {
		all = append(all, generate(rng, fmt.Sprintf("ns-%d", i), now))
	}
	got := runController(t, all)

	cfg := autoscaler.DefaultConfig()
	cfg.Tolerance = tolerance
	cfg.CPUInitializationPeriod = cpuInit
	cfg.InitialReadinessDelay = readyDelay
	var certain, certainMismatch, uncertain, outside, scaleIns, broken, brokenMismatch int
	for _, s := range all {
		h, ok := got[s.ns]
		if !ok {
			t.Fatalf("%s: the controller wrote no status", s.ns)
		}
		rec, err := autoscaler.Recommend(autoscaler.Input{HPA: h.hpa, SpecReplicas: s.spec, StatusReplicas: s.status, Pods: s.pods, Now: now, Config: cfg})
		if err != nil {
			t.Fatalf("%s: %v", s.ns, err)
		}
		want := h.desired
		if want < s.spec {
			scaleIns++
		}
		if s.metriclessPods > 0 {
			// The model says it assumes every running pod reported a metric.
			broken++
			if rec.Certain && rec.Desired != want {
				brokenMismatch++
			}
			continue
		}
		if rec.Certain {
			certain++
			if rec.Desired != want || rec.DesiredMax != want {
				certainMismatch++
				if certainMismatch <= 10 {
					t.Errorf("%s: model %d (certain, %s), controller %d\n%s", s.ns, rec.Desired, rec.Reason, want, describe(s, h.hpa, rec))
				}
			}
			continue
		}
		uncertain++
		if want < rec.Desired || want > rec.DesiredMax {
			outside++
			if outside <= 10 {
				t.Errorf("%s: model range %d..%d (uncertain: %v), controller %d\n%s", s.ns, rec.Desired, rec.DesiredMax, rec.Uncertain, want, describe(s, h.hpa, rec))
			}
		}
	}
	t.Logf("%d autoscalers (%d scale-ins by the controller): %d certain, %d mismatches; %d uncertain, %d outside the range; %d with running pods lacking metrics (outside the model's stated assumption): %d certain and wrong",
		n, scaleIns, certain, certainMismatch, uncertain, outside, broken, brokenMismatch)
}

func describe(s *scenario, h *autoscalingv2.HorizontalPodAutoscaler, rec *autoscaler.Recommendation) string {
	out := fmt.Sprintf("  spec %d status %d min %v max %d behavior %v\n", s.spec, s.status, ptr.Deref(h.Spec.MinReplicas, 1), h.Spec.MaxReplicas, h.Spec.Behavior != nil)
	for _, m := range rec.Metrics {
		out += fmt.Sprintf("  metric %s: %s / %s ratio %.3f -> %d..%d %s\n", m.Name, m.Current, m.Target, m.Ratio, m.Replicas, m.ReplicasMax, m.Note)
	}
	for _, p := range s.pods {
		c := ""
		for _, cc := range p.Status.Conditions {
			c = string(cc.Status)
		}
		out += fmt.Sprintf("  pod %s %s ready=%s deleting=%v cpu=%d\n", p.Name, p.Status.Phase, c, p.DeletionTimestamp != nil, s.cpu[p.Name])
	}
	for _, c := range h.Status.Conditions {
		out += fmt.Sprintf("  condition %s=%s %s: %s\n", c.Type, c.Status, c.Reason, c.Message)
	}
	return out
}

type outcome struct {
	hpa     *autoscalingv2.HorizontalPodAutoscaler
	desired int32
}

// runController runs one HorizontalController over every scenario (one
// namespace each) until each autoscaler's status has been written once.
func runController(t *testing.T, all []*scenario) map[string]outcome {
	t.Helper()
	byNS := map[string]*scenario{}
	var objs []runtime.Object
	for _, s := range all {
		byNS[s.ns] = s
		objs = append(objs, s.hpa)
		for _, p := range s.pods {
			objs = append(objs, p)
		}
	}
	client := fake.NewClientset(objs...)
	events := fake.NewClientset()
	var mu sync.Mutex
	scaled := map[string]int32{}
	out := map[string]outcome{}
	done := make(chan struct{})
	client.PrependReactor("update", "horizontalpodautoscalers", func(a core.Action) (bool, runtime.Object, error) {
		u := a.(core.UpdateAction)
		if u.GetSubresource() != "status" {
			return false, nil, nil
		}
		h := u.GetObject().(*autoscalingv2.HorizontalPodAutoscaler).DeepCopy()
		mu.Lock()
		defer mu.Unlock()
		if _, seen := out[h.Namespace]; !seen {
			desired, ok := scaled[h.Namespace]
			if !ok {
				desired = byNS[h.Namespace].spec
			}
			out[h.Namespace] = outcome{hpa: h, desired: desired}
			if len(out) == len(all) {
				close(done)
			}
		}
		return true, h, nil
	})
	scales := &scalefake.FakeScaleClient{}
	scales.AddReactor("get", "deployments", func(a core.Action) (bool, runtime.Object, error) {
		s := byNS[a.GetNamespace()]
		return true, &autoscalingv1.Scale{
			ObjectMeta: metav1.ObjectMeta{Name: targetName, Namespace: s.ns},
			Spec:       autoscalingv1.ScaleSpec{Replicas: s.spec},
			Status:     autoscalingv1.ScaleStatus{Replicas: s.status, Selector: podLabel + "=" + targetName},
		}, nil
	})
	scales.AddReactor("update", "deployments", func(a core.Action) (bool, runtime.Object, error) {
		obj := a.(core.UpdateAction).GetObject().(*autoscalingv1.Scale)
		mu.Lock()
		scaled[a.GetNamespace()] = obj.Spec.Replicas
		mu.Unlock()
		return true, obj, nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory := informers.NewSharedInformerFactory(client, 0)
	c := podautoscaler.NewHorizontalController(ctx, events.CoreV1(), scales, client.AutoscalingV2(),
		testrestmapper.TestOnlyStaticRESTMapper(legacyscheme.Scheme), &fakeMetrics{byNS: byNS},
		factory.Autoscaling().V2().HorizontalPodAutoscalers(), factory.Core().V1().Pods(),
		time.Hour, 0, tolerance, cpuInit, readyDelay)
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	go c.Run(ctx, 2)
	select {
	case <-done:
	case <-time.After(3 * time.Minute):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the controller synced %d of %d autoscalers", len(out), len(all))
	}
	mu.Lock()
	defer mu.Unlock()
	res := map[string]outcome{}
	for k, v := range out {
		res[k] = v
	}
	return res
}

func generate(rng *rand.Rand, ns string, now time.Time) *scenario {
	s := &scenario{ns: ns, cpu: map[string]int64{}, mem: map[string]int64{}, cpuApp: map[string]int64{},
		raw: map[string]map[string]int64{}, object: map[string]int64{}, external: map[string][]int64{}, metricTS: map[string]time.Time{}}
	s.spec = int32(1 + rng.IntN(15))
	s.status = s.spec
	if rng.IntN(5) == 0 {
		s.status = max(1, s.spec+int32(rng.IntN(5))-2)
	}
	minR := int32(1 + rng.IntN(int(s.spec)+1))
	maxR := minR + int32(rng.IntN(15))
	if rng.IntN(10) == 0 {
		maxR = max(minR, s.spec-int32(1+rng.IntN(3)))
	}
	h := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "hpa", Namespace: ns, UID: types.UID("uid-" + ns)},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: targetName},
			MinReplicas:    ptr.To(minR),
			MaxReplicas:    maxR,
		},
	}
	s.hpa = h

	// Pods.
	nPods := int(s.status)
	if rng.IntN(6) == 0 {
		nPods = max(0, nPods+rng.IntN(5)-2)
	}
	cpuReq, memReq := int64(100*(1+rng.IntN(5))), int64(64<<20)
	sideReq := int64(50)
	for i := range nPods {
		name := fmt.Sprintf("web-%d", i)
		started := now.Add(-time.Hour)
		young := rng.IntN(6) == 0
		if young {
			started = now.Add(-2 * time.Minute)
		}
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{podLabel: targetName}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{
				{Name: container, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: *resource.NewMilliQuantity(cpuReq, resource.DecimalSI), corev1.ResourceMemory: *resource.NewQuantity(memReq, resource.BinarySI)}}},
				{Name: sideCar, Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceCPU: *resource.NewMilliQuantity(sideReq, resource.DecimalSI), corev1.ResourceMemory: *resource.NewQuantity(memReq/4, resource.BinarySI)}}},
			}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &metav1.Time{Time: started}},
		}
		switch rng.IntN(30) {
		case 0:
			p.Status.Phase = corev1.PodPending
		case 1:
			p.Status.Phase = corev1.PodFailed
		case 2:
			p.DeletionTimestamp = &metav1.Time{Time: now}
		case 3:
			p.Status.Phase = corev1.PodSucceeded
		}
		ready, transition := corev1.ConditionTrue, started.Add(20*time.Second)
		switch r := rng.IntN(10); {
		case r == 0:
			ready = corev1.ConditionFalse
		case r == 1:
			ready, transition = corev1.ConditionFalse, started.Add(10*time.Second) // never been ready
		case r == 2 && !young:
			transition = now.Add(-time.Minute)
		}
		if rng.IntN(25) > 0 {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: ready, LastTransitionTime: metav1.Time{Time: transition}}}
		}
		s.pods = append(s.pods, p)
		// The metric's timestamp decides young pods' readiness for CPU.
		s.metricTS[name] = now.Add(-time.Duration(rng.IntN(90)) * time.Second)
	}

	// Metrics: 1 to 3.
	load := 0.2 + rng.Float64()*1.8
	nMetrics := 1 + rng.IntN(3)
	hasMetric := map[string]bool{}
	for _, p := range s.pods {
		has := p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil
		if has && rng.IntN(40) == 0 {
			has = false
			s.metriclessPods++
		}
		hasMetric[p.Name] = has
	}
	jitter := func(base float64) int64 { return int64(base * (0.7 + 0.6*rng.Float64())) }
	for k := range nMetrics {
		var spec autoscalingv2.MetricSpec
		switch rng.IntN(8) {
		case 0, 1: // CPU utilization or average value
			t := int32(30 + rng.IntN(70))
			target := autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &t}
			if rng.IntN(4) == 0 {
				target = autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewMilliQuantity(int64(float64(cpuReq)*float64(t)/100), resource.DecimalSI)}
			}
			spec = autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU, Target: target}}
			for _, p := range s.pods {
				if hasMetric[p.Name] {
					app := jitter(float64(cpuReq) * float64(t) / 100 * load)
					s.cpuApp[p.Name] = app
					s.cpu[p.Name] = app + jitter(float64(sideReq)*float64(t)/100*load)
				}
			}
		case 2: // memory utilization
			t := int32(40 + rng.IntN(50))
			spec = autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceMemory,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &t}}}
			for _, p := range s.pods {
				if hasMetric[p.Name] {
					s.mem[p.Name] = jitter(float64(memReq+memReq/4) * 1000 * float64(t) / 100 * load)
				}
			}
		case 3: // container CPU utilization
			t := int32(30 + rng.IntN(70))
			spec = autoscalingv2.MetricSpec{Type: autoscalingv2.ContainerResourceMetricSourceType, ContainerResource: &autoscalingv2.ContainerResourceMetricSource{Name: corev1.ResourceCPU, Container: container,
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: &t}}}
			for _, p := range s.pods {
				if hasMetric[p.Name] {
					app := jitter(float64(cpuReq) * float64(t) / 100 * load)
					s.cpuApp[p.Name] = app
					s.cpu[p.Name] = app + 10
				}
			}
		case 4: // pods metric
			name := fmt.Sprintf("rps%d", k)
			target := int64(1000 * (1 + rng.IntN(50)))
			spec = autoscalingv2.MetricSpec{Type: autoscalingv2.PodsMetricSourceType, Pods: &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: name},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewMilliQuantity(target, resource.DecimalSI)}}}
			s.raw[name] = map[string]int64{}
			for _, p := range s.pods {
				if hasMetric[p.Name] {
					s.raw[name][p.Name] = jitter(float64(target) * load)
				}
			}
		case 5: // object value / average value
			name := fmt.Sprintf("queue%d", k)
			target := int64(1000 * (1 + rng.IntN(30)))
			tgt := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: resource.NewMilliQuantity(target, resource.DecimalSI)}
			if rng.IntN(2) == 0 {
				tgt = autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewMilliQuantity(target, resource.DecimalSI)}
				s.object[name] = jitter(float64(target) * float64(s.status) * load)
			} else {
				s.object[name] = jitter(float64(target) * load)
			}
			spec = autoscalingv2.MetricSpec{Type: autoscalingv2.ObjectMetricSourceType, Object: &autoscalingv2.ObjectMetricSource{
				DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "Service", Name: "front"},
				Metric:          autoscalingv2.MetricIdentifier{Name: name}, Target: tgt}}
		default: // external value / average value
			name := fmt.Sprintf("lag%d", k)
			target := int64(1000 * (1 + rng.IntN(30)))
			tgt := autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: resource.NewMilliQuantity(target, resource.DecimalSI)}
			parts := 1 + rng.IntN(3)
			total := float64(target) * load
			if rng.IntN(2) == 0 {
				tgt = autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: resource.NewMilliQuantity(target, resource.DecimalSI)}
				total *= float64(s.status)
			}
			for range parts {
				s.external[name] = append(s.external[name], jitter(total/float64(parts)))
			}
			spec = autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: name}, Target: tgt}}
		}
		h.Spec.Metrics = append(h.Spec.Metrics, spec)
	}

	if rng.IntN(2) == 0 {
		h.Spec.Behavior = randomBehavior(rng)
	}
	// What the API server stores.
	autoscalingapiv2.SetDefaults_HorizontalPodAutoscaler(h)
	if h.Spec.Behavior != nil {
		// Windows of 0: see the package comment.
		h.Spec.Behavior.ScaleDown.StabilizationWindowSeconds = ptr.To[int32](0)
		h.Spec.Behavior.ScaleUp.StabilizationWindowSeconds = ptr.To[int32](0)
	}
	return s
}

func randomBehavior(rng *rand.Rand) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	rules := func() *autoscalingv2.HPAScalingRules {
		if rng.IntN(3) == 0 {
			return nil
		}
		r := &autoscalingv2.HPAScalingRules{}
		switch rng.IntN(6) {
		case 0:
			r.SelectPolicy = ptr.To(autoscalingv2.MinChangePolicySelect)
		case 1:
			r.SelectPolicy = ptr.To(autoscalingv2.DisabledPolicySelect)
		case 2:
			r.SelectPolicy = ptr.To(autoscalingv2.MaxChangePolicySelect)
		}
		for range rng.IntN(3) {
			p := autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PodsScalingPolicy, Value: int32(1 + rng.IntN(5)), PeriodSeconds: int32(15 + rng.IntN(300))}
			if rng.IntN(2) == 0 {
				p = autoscalingv2.HPAScalingPolicy{Type: autoscalingv2.PercentScalingPolicy, Value: int32(5 + rng.IntN(100)), PeriodSeconds: int32(15 + rng.IntN(300))}
			}
			r.Policies = append(r.Policies, p)
		}
		if rng.IntN(3) == 0 {
			r.Tolerance = resource.NewMilliQuantity(int64(rng.IntN(300)), resource.DecimalSI)
		}
		return r
	}
	return &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: rules(), ScaleDown: rules()}
}
