package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/workload"
)

// TestAutoscalerScalesAsPredicted lets the real HPA controller scale a
// Deployment on an External metric served by a test metrics API (an
// APIService backed by an in-test HTTPS server, reached through an
// ExternalName Service, since there is no kube-proxy). The plugin's model
// predicts the recommendation and the victims from the autoscaler's status
// while the stabilization window still holds the scale-in back; the window
// then expires, the controller scales, and the pods it deleted must be the
// predicted ones. Set E2E_HPA=1 (it runs its own HPA-only
// kube-controller-manager and takes about two and a half minutes).
func TestAutoscalerScalesAsPredicted(t *testing.T) {
	if os.Getenv("E2E_HPA") != "1" {
		t.Skip("set E2E_HPA=1 to run the HorizontalPodAutoscaler end-to-end test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var value atomic.Int64
	srv := metricsServer(t, &value)
	defer srv.Close()
	if err := registerExternalMetrics(ctx, t, srv); err != nil {
		t.Fatalf("register the test metrics API: %v", err)
	}
	stop := startHPAController(t)
	defer stop()

	// 6 ready pods, a target of 10 for the whole metric.
	t.Run("ratio", func(t *testing.T) {
		// 5: ceil(0.5 * 6) = 3.
		hpaCase(ctx, t, &value, 5, nil, 3)
	})
	t.Run("pods-policy", func(t *testing.T) {
		// 2: ceil(0.2 * 6) = 2, but at most 2 pods per minute go: 4.
		hpaCase(ctx, t, &value, 2, []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 2, PeriodSeconds: 60}}, 4)
	})
}

func hpaCase(ctx context.Context, t *testing.T, value *atomic.Int64, metric int64, policies []autoscalingv2.HPAScalingPolicy, want int32) {
	c := env.cp.admin
	// Ready times far apart so that no log2 bucket changes while the
	// window runs; nodes shared so that ranks matter too.
	sc := &scenario{name: "hpa-" + t.Name()[strings.LastIndex(t.Name(), "/")+1:], kind: kindDeployment, replicas: 6, states: []podState{
		running("node-a", 2*time.Hour), running("node-a", 9*time.Hour), running("node-a", 40*time.Hour),
		running("node-b", 5*time.Hour), running("node-b", 150*time.Hour), running("node-c", 20*time.Hour),
	}}
	r := newRun(sc)
	if err := r.prepare(ctx); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	value.Store(metric)

	window := int32(60)
	minR := int32(1)
	h := &autoscalingv2.HorizontalPodAutoscaler{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: r.ns},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: workloadName},
			MinReplicas:    &minR, MaxReplicas: 10,
			Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
				Metric: autoscalingv2.MetricIdentifier{Name: "queue_depth"},
				Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: resource.NewQuantity(10, resource.DecimalSI)}}}},
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: &window, Policies: policies}},
		},
	}
	if _, err := c.AutoscalingV2().HorizontalPodAutoscalers(r.ns).Create(ctx, h, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Stop further steps once this one is checked.
	defer func() {
		_ = c.AutoscalingV2().HorizontalPodAutoscalers(r.ns).Delete(context.Background(), "web", metav1.DeleteOptions{})
	}()

	// The first sync writes the status; the window holds the scale-in.
	var synced *autoscalingv2.HorizontalPodAutoscaler
	err := pollUntil(ctx, 500*time.Millisecond, func(ctx context.Context) (bool, error) {
		got, err := c.AutoscalingV2().HorizontalPodAutoscalers(r.ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil || len(got.Status.CurrentMetrics) == 0 || got.Status.CurrentMetrics[0].External == nil {
			return false, nil
		}
		synced = got
		return true, nil
	})
	if err != nil {
		t.Fatalf("the HPA controller wrote no metrics status: %v\n%s", err, tailFile(filepath.Join(env.cp.dir, "kube-controller-manager-hpa.log"), 30))
	}
	t.Logf("status after the first sync: current %d desired %d metric %s", synced.Status.CurrentReplicas, synced.Status.DesiredReplicas, synced.Status.CurrentMetrics[0].External.Current.Value)

	// Predict now, in-process, from what a user can read.
	predictedAt := time.Now()
	snap, err := readSnapshot(ctx, r.ns)
	if err != nil {
		t.Fatal(err)
	}
	p, err := workload.Predict(snap, snapshot.Ref{Kind: snapshot.HorizontalPodAutoscaler, Namespace: r.ns, Name: "web"}, workload.UseRecommendation,
		workload.Options{Rules: rules.Default(), Now: predictedAt, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	rec := p.Autoscaler.Recommendation
	t.Logf("prediction: %s; victims %v; certain %v", p.Message, p.Victims, p.Certain)
	if rec.Desired != want || !rec.Certain {
		t.Fatalf("recommendation %d..%d certain %v, want %d (%s)", rec.Desired, rec.DesiredMax, rec.Certain, want, rec.Reason)
	}
	if p.StableUntil != nil && p.StableUntil.Before(predictedAt.Add(3*time.Minute)) {
		t.Fatalf("the prediction only holds until %s: the fixture's ready times are too close to a bucket edge", p.StableUntil)
	}

	// Wait for the real scale-in and the pods it deletes (bound pods stay
	// Terminating: no kubelet).
	terminating := func(ctx context.Context) []string {
		pods, _, err := r.listPods(ctx)
		if err != nil {
			return nil
		}
		var out []string
		for _, pod := range pods {
			if pod.DeletionTimestamp != nil {
				out = append(out, pod.Name)
			}
		}
		sort.Strings(out)
		return out
	}
	var deleted []string
	err = pollUntil(ctx, 500*time.Millisecond, func(ctx context.Context) (bool, error) {
		deleted = terminating(ctx)
		return len(deleted) >= len(p.Victims), nil
	})
	if err != nil {
		t.Fatalf("the autoscaler did not scale in: %v (deleted %v)\n%s", err, deleted, tailFile(filepath.Join(env.cp.dir, "kube-controller-manager-hpa.log"), 30))
	}
	time.Sleep(2 * time.Second) // nothing more may go in this step
	deleted = terminating(ctx)
	d, _ := c.AppsV1().Deployments(r.ns).Get(ctx, workloadName, metav1.GetOptions{})
	t.Logf("the controller scaled to %d %s after the prediction; deleted %v", deref0(d.Spec.Replicas), time.Since(predictedAt).Round(time.Second), deleted)
	victims := append([]string(nil), p.Victims...)
	sort.Strings(victims)
	if deref0(d.Spec.Replicas) != rec.Desired || strings.Join(victims, ",") != strings.Join(deleted, ",") {
		t.Errorf("predicted %d replicas and victims %v; the real controllers made %d and deleted %v", rec.Desired, victims, deref0(d.Spec.Replicas), deleted)
	}
}

// metricsServer serves external.metrics.k8s.io/v1beta1 with one metric,
// queue_depth, whose value the test sets.
func metricsServer(t *testing.T, value *atomic.Int64) *httptest.Server {
	t.Helper()
	const gv = "external.metrics.k8s.io/v1beta1"
	write := func(w http.ResponseWriter, v any) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(v)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/apis/"+gv, func(w http.ResponseWriter, _ *http.Request) {
		write(w, map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
			"resources": []map[string]any{{"name": "queue_depth", "namespaced": true, "kind": "ExternalMetricValueList", "verbs": []string{"get"}}}})
	})
	mux.HandleFunc("/apis/"+gv+"/", func(w http.ResponseWriter, req *http.Request) {
		if !strings.HasSuffix(req.URL.Path, "/queue_depth") {
			http.NotFound(w, req)
			return
		}
		write(w, map[string]any{"kind": "ExternalMetricValueList", "apiVersion": gv, "metadata": map[string]any{},
			"items": []map[string]any{{"metricName": "queue_depth", "metricLabels": map[string]string{},
				"timestamp": time.Now().UTC().Format(time.RFC3339), "value": strconv.FormatInt(value.Load(), 10)}}})
	})
	mux.HandleFunc("/apis", func(w http.ResponseWriter, _ *http.Request) {
		write(w, map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": []map[string]any{{"name": "external.metrics.k8s.io",
			"versions": []map[string]string{{"groupVersion": gv, "version": "v1beta1"}}, "preferredVersion": map[string]string{"groupVersion": gv, "version": "v1beta1"}}}})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) { http.NotFound(w, req) })
	return httptest.NewTLSServer(mux)
}

// registerExternalMetrics points an APIService at srv through an
// ExternalName Service (the aggregator resolves it to the name and the
// APIService's port) and waits until the API server reports it Available.
func registerExternalMetrics(ctx context.Context, t *testing.T, srv *httptest.Server) error {
	t.Helper()
	c := env.cp.admin
	u, err := url.Parse(srv.URL)
	if err != nil {
		return err
	}
	port, _ := strconv.Atoi(u.Port())
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "test-metrics", Namespace: "default"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"}}
	if _, err := c.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("service: %w", err)
	}
	body := fmt.Sprintf(`{"apiVersion":"apiregistration.k8s.io/v1","kind":"APIService","metadata":{"name":"v1beta1.external.metrics.k8s.io"},
"spec":{"group":"external.metrics.k8s.io","version":"v1beta1","insecureSkipTLSVerify":true,"groupPriorityMinimum":100,"versionPriority":100,
"service":{"namespace":"default","name":"test-metrics","port":%d}}}`, port)
	rc := c.Discovery().RESTClient()
	if err := rc.Post().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices").Body([]byte(body)).SetHeader("Content-Type", "application/json").Do(ctx).Error(); err != nil {
		return fmt.Errorf("apiservice: %w", err)
	}
	t.Cleanup(func() {
		_ = rc.Delete().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.external.metrics.k8s.io").Do(context.Background()).Error()
		_ = c.CoreV1().Services("default").Delete(context.Background(), "test-metrics", metav1.DeleteOptions{})
	})
	var last string
	err = pollUntil(ctx, 500*time.Millisecond, func(ctx context.Context) (bool, error) {
		raw, err := rc.Get().AbsPath("/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.external.metrics.k8s.io").DoRaw(ctx)
		if err != nil {
			return false, nil
		}
		var as struct {
			Status struct {
				Conditions []struct{ Type, Status, Reason, Message string } `json:"conditions"`
			} `json:"status"`
		}
		_ = json.Unmarshal(raw, &as)
		for _, cond := range as.Status.Conditions {
			if cond.Type == "Available" {
				last = cond.Reason + ": " + cond.Message
				return cond.Status == "True", nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("the APIService never became Available (%s): %w", last, err)
	}
	return nil
}

// startHPAController runs a second kube-controller-manager with only the
// HPA controller (the suite's own runs without it), syncing every 2 s.
func startHPAController(t *testing.T) func() {
	return startControlPlaneExtra(t, "kube-controller-manager-hpa", "kube-controller-manager",
		"--kubeconfig", env.cp.adminKubeconfig, "--controllers", "horizontal-pod-autoscaler-controller",
		"--leader-elect=false", "--secure-port", "0", "--horizontal-pod-autoscaler-sync-period", "2s", "--v", "2")
}

// startControlPlaneExtra runs one more control-plane binary beside the
// shared control plane, logging to NAME.log in its directory, until the
// returned stop; a failed test gets the log's tail.
func startControlPlaneExtra(t *testing.T, name, binary string, args ...string) (stop func()) {
	t.Helper()
	logPath := filepath.Join(env.cp.dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(env.cp.binDir, binary), args...)
	cmd.Stdout, cmd.Stderr, cmd.Dir = f, f, env.cp.dir
	cmd.SysProcAttr = childSysProcAttr()
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		f.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				lines := strings.Split(string(b), "\n")
				t.Logf("%s log tail:\n%s", name, strings.Join(lines[max(0, len(lines)-30):], "\n"))
			}
		}
	}
}

// readSnapshot lists what the plugin's live source reads for hpa/NAME (the
// test module does not build the source package's kubectl dependencies).
func readSnapshot(ctx context.Context, ns string) (*snapshot.Snapshot, error) {
	c := env.cp.admin
	s := &snapshot.Snapshot{}
	ds, err := c.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range ds.Items {
		s.Deployments = append(s.Deployments, &ds.Items[i])
	}
	rss, err := c.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range rss.Items {
		s.ReplicaSets = append(s.ReplicaSets, &rss.Items[i])
	}
	pods, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range pods.Items {
		s.Pods = append(s.Pods, &pods.Items[i])
	}
	hpas, err := c.AutoscalingV2().HorizontalPodAutoscalers(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	for i := range hpas.Items {
		s.HPAs = append(s.HPAs, &hpas.Items[i])
	}
	return s, nil
}
