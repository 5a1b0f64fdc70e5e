package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	scaleNamespace = "e2e-scale5000"
	scaleName      = "big"
)

// measured is one timed run of a command.
type measured struct {
	wall   time.Duration
	cpu    time.Duration // user + system
	peak   int64         // bytes, -1 when unknown
	anon   int64         // peak anonymous memory (sampled), bytes, -1 when unknown
	stdout int64         // bytes
	exit   int
}

// countWriter counts the bytes written, and keeps them when keep is set.
type countWriter struct {
	n    int64
	keep *bytes.Buffer
}

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	if w.keep != nil {
		w.keep.Write(p)
	}
	return len(p), nil
}

// timeCommand runs a command, timing it and reading its peak RSS.
func timeCommand(ctx context.Context, keep *bytes.Buffer, stderr *bytes.Buffer, path string, args ...string) (measured, error) {
	cmd := exec.CommandContext(ctx, path, args...)
	out := &countWriter{keep: keep}
	cmd.Stdout = out
	cmd.Stderr = stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return measured{}, err
	}
	stop := sampleAnon(cmd.Process.Pid)
	err := cmd.Wait()
	m := measured{wall: time.Since(start), peak: peakRSS(cmd.ProcessState), anon: stop(), stdout: out.n}
	if ps := cmd.ProcessState; ps != nil {
		m.cpu = ps.UserTime() + ps.SystemTime()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		m.exit = ee.ExitCode()
		err = nil
	}
	return m, err
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// TestScale5000 (issues 8 and 18) measures the plugin on a Deployment of
// 5,000 pods against `kubectl get pods -l SELECTOR -o json` (the least any
// tool must read), both with the admin kubeconfig: median wall time and CPU
// time (user + system) of 5 runs, peak RSS and output size. Nothing is
// asserted about the figures; the plugin must succeed. Runs only with
// E2E_SCALE=1 (make e2e-scale), never with -short. E2E_SCALE_PODS is a
// comma-separated list of sizes measured one after the other in the same
// run (5000; e.g. 5000,50000), each in its own namespace; E2E_SCALE_REPLICAS
// the previewed replica counts (default 4/5 of each size); E2E_KUBECTL the
// kubectl binary (/usr/bin/kubectl).
func TestScale5000(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short")
	}
	if os.Getenv("E2E_SCALE") != "1" {
		t.Skip("set E2E_SCALE=1 (or run make e2e-scale) to measure the plugin on 5,000 pods")
	}
	needPlugin(t)
	kubectl := os.Getenv("E2E_KUBECTL")
	if kubectl == "" {
		kubectl = "/usr/bin/kubectl"
	}
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("kubectl: %v (set E2E_KUBECTL)", err)
	}
	sizes := envInts(t, "E2E_SCALE_PODS", []int{5000})
	replicas := envInts(t, "E2E_SCALE_REPLICAS", nil)
	var results []scaleResult
	for i, pods := range sizes {
		r := pods * 4 / 5
		if i < len(replicas) {
			r = replicas[i]
		}
		ok := t.Run(strconv.Itoa(pods), func(t *testing.T) {
			results = append(results, measureScale(t, kubectl, pods, r))
		})
		if !ok {
			break
		}
	}
	for _, r := range results {
		line := fmt.Sprintf("scale %d pods: plugin median wall %dms cpu %dms peak %.0f MiB (%.0f bytes/pod), anonymous %.0f MiB; kubectl get pods median wall %dms cpu %dms peak %.0f MiB, anonymous %.0f MiB; pods JSON %.1f MiB (%.0f bytes/pod); plugin/kubectl wall %.2f, plugin peak / JSON %.2f, anonymous / JSON %.2f",
			r.pods, r.plugin.wall.Milliseconds(), r.plugin.cpu.Milliseconds(), mib(r.plugin.peak), float64(r.plugin.peak)/float64(r.pods), mib(r.plugin.anon),
			r.kubectl.wall.Milliseconds(), r.kubectl.cpu.Milliseconds(), mib(r.kubectl.peak), mib(r.kubectl.anon), mib(r.json), float64(r.json)/float64(r.pods),
			float64(r.plugin.wall)/float64(r.kubectl.wall), float64(r.plugin.peak)/math.Max(1, float64(r.json)), float64(r.plugin.anon)/math.Max(1, float64(r.json)))
		t.Log(line)
		logf("%s", line)
	}
	if len(results) > 1 {
		a, b := results[0], results[len(results)-1]
		line := fmt.Sprintf("scale %d -> %d pods: plugin peak grows %.0f bytes per added pod; kubectl %.0f", a.pods, b.pods,
			float64(b.plugin.peak-a.plugin.peak)/float64(b.pods-a.pods), float64(b.kubectl.peak-a.kubectl.peak)/float64(b.pods-a.pods))
		t.Log(line)
		logf("%s", line)
	}
}

// envInts reads a comma-separated list of integers.
func envInts(t *testing.T, name string, def []int) []int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			t.Fatalf("%s=%q: want positive integers separated by commas", name, v)
		}
		out = append(out, n)
	}
	return out
}

// scaleResult is one size's medians (peaks are the maxima).
type scaleResult struct {
	pods            int
	plugin, kubectl measured
	json            int64 // bytes of kubectl's output
}

// measureScale prepares a Deployment of pods pods in a namespace of its
// own and measures the plugin (scale-in to replicas) and kubectl on it.
func measureScale(t *testing.T, kubectl string, pods, replicas int) scaleResult {
	ns := fmt.Sprintf("%s-%d", scaleNamespace, pods)
	// Creating and patching 50,000 pods on 2 cores takes a while.
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute+time.Duration(pods/50000)*60*time.Minute)
	defer cancel()

	// A client of its own: the shared admin client is limited to 200 QPS.
	cfg := rest.CopyConfig(env.cp.adminConfig)
	cfg.QPS, cfg.Burst = 2000, 4000
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	prepStart := time.Now()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": scaleName}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: scaleName, Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: ptrTo(int32(pods)), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: podTemplate(labels, false),
	}}
	if _, err := c.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer cleanupScale(t, c, ns, pods)

	// The ReplicaSet controller creates the pods, 500 at a time in
	// parallel (its burst), with no kubelet: they stay Pending until the
	// workers below bind them and write their status.
	lastLog := time.Now()
	if err := pollUntil(ctx, 2*time.Second, func(ctx context.Context) (bool, error) {
		rss, err := c.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		n := int32(0)
		for _, rs := range rss.Items {
			n += rs.Status.Replicas
		}
		if time.Since(lastLog) > 30*time.Second {
			t.Logf("  %d/%d pods created (%s)", n, pods, time.Since(prepStart).Round(time.Second))
			lastLog = time.Now()
		}
		return int(n) >= pods, nil
	}); err != nil {
		t.Fatalf("waiting for %d pods: %v", pods, err)
	}
	created := time.Since(prepStart)

	// Play scheduler and kubelet for every pod, a bounded pool of workers.
	var all []corev1.Pod
	opts := metav1.ListOptions{Limit: 1000}
	for {
		list, err := c.CoreV1().Pods(ns).List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, list.Items...)
		if list.Continue == "" {
			break
		}
		opts.Continue = list.Continue
	}
	stateStart := time.Now()
	const workers = 32
	var next atomic.Int64
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var errs []error
	var bound, ready atomic.Int64
	now := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(all) || ctx.Err() != nil {
					return
				}
				b, r, err := applyScaleState(ctx, c, &all[i], i, now)
				if err != nil {
					errMu.Lock()
					errs = append(errs, err)
					errMu.Unlock()
					continue
				}
				if b {
					bound.Add(1)
				}
				if r {
					ready.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("%d pod state errors, first: %v", len(errs), errs[0])
	}
	t.Logf("prepared %d pods: created by the controller in %s, %d bound and %d ready by %d workers in %s",
		len(all), created.Round(time.Second), bound.Load(), ready.Load(), workers, time.Since(stateStart).Round(time.Second))
	n := len(all)
	all = nil // not held while measuring

	// The measurement: a warm-up run of each (discovery caches), then 5
	// timed runs, alternating so that background load hits both alike.
	pluginArgs := []string{"deploy/" + scaleName, "--replicas=" + strconv.Itoa(replicas), "-n", ns,
		"--kubeconfig", env.cp.adminKubeconfig, "-o", "json"}
	kubectlArgs := []string{"get", "pods", "-l", "app=" + scaleName, "-n", ns, "-o", "json",
		"--kubeconfig", env.cp.adminKubeconfig}
	var pluginOut, kubectlOut, stderr bytes.Buffer
	pw, err := timeCommand(ctx, &pluginOut, &stderr, env.pluginPath, pluginArgs...)
	if err != nil || pw.exit != 0 {
		t.Fatalf("plugin: exit %d, %v: %s", pw.exit, err, firstLines(stderr.String(), 20))
	}
	var p struct {
		prediction
		Message string `json:"message"`
		Pods    []struct {
			Round int `json:"round"`
		} `json:"pods"`
	}
	if err := json.Unmarshal(pluginOut.Bytes(), &p); err != nil {
		t.Fatalf("plugin output is not JSON: %v", err)
	}
	rounds := 0
	for _, pp := range p.Pods {
		rounds = max(rounds, pp.Round)
	}
	certain := p.Certain != nil && *p.Certain
	t.Logf("plugin: %s; %d victims, %d pods listed, certain=%v, rounds=%d, rules %s (%s); JSON %.1f MiB",
		truncate(p.Message, 120), len(p.Victims), len(p.Pods), certain, rounds, p.Rules.KubernetesVersion, p.Rules.VersionSource, mib(pw.stdout))
	if want := pods - replicas; len(p.Victims) != want {
		t.Errorf("plugin predicts %d victims, want %d (%d -> %d)", len(p.Victims), want, pods, replicas)
	}
	pluginOut = bytes.Buffer{}
	stderr.Reset()
	kw, err := timeCommand(ctx, &kubectlOut, &stderr, kubectl, kubectlArgs...)
	if err != nil || kw.exit != 0 {
		t.Fatalf("kubectl: exit %d, %v: %s", kw.exit, err, firstLines(stderr.String(), 20))
	}
	var list struct {
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(kubectlOut.Bytes(), &list); err != nil || len(list.Items) != n {
		t.Fatalf("kubectl get pods: %d items, err %v; want %d", len(list.Items), err, n)
	}
	list.Items, kubectlOut = nil, bytes.Buffer{}
	var pw5, kw5 []measured
	for i := 0; i < 5; i++ {
		stderr.Reset()
		m, err := timeCommand(ctx, nil, &stderr, env.pluginPath, pluginArgs...)
		if err != nil || m.exit != 0 {
			t.Fatalf("plugin run %d: exit %d, %v: %s", i+1, m.exit, err, firstLines(stderr.String(), 20))
		}
		stderr.Reset()
		k, err := timeCommand(ctx, nil, &stderr, kubectl, kubectlArgs...)
		if err != nil || k.exit != 0 {
			t.Fatalf("kubectl run %d: exit %d, %v: %s", i+1, k.exit, err, firstLines(stderr.String(), 20))
		}
		pw5, kw5 = append(pw5, m), append(kw5, k)
		t.Logf("  run %d: plugin %s wall, %s CPU, %.0f MiB (anonymous %.0f); kubectl %s wall, %s CPU, %.0f MiB (anonymous %.0f)", i+1,
			m.wall.Round(time.Millisecond), m.cpu.Round(time.Millisecond), mib(m.peak), mib(m.anon),
			k.wall.Round(time.Millisecond), k.cpu.Round(time.Millisecond), mib(k.peak), mib(k.anon))
	}
	r := scaleResult{pods: n, plugin: medians(pw5), kubectl: medians(kw5), json: kw5[len(kw5)-1].stdout}
	logf("scale %d: %d pods (%d bound, %d ready) -> %d replicas; plugin JSON %.1f MiB; kubectl %s",
		pods, n, bound.Load(), ready.Load(), replicas, mib(pw.stdout), kubectl)
	return r
}

// medians: median wall and CPU time, the largest peak.
func medians(ms []measured) measured {
	var walls, cpus []time.Duration
	var out measured
	for _, m := range ms {
		walls, cpus = append(walls, m.wall), append(cpus, m.cpu)
		out.peak, out.anon, out.stdout = max(out.peak, m.peak), max(out.anon, m.anon), m.stdout
	}
	out.wall, out.cpu = median(walls), median(cpus)
	return out
}

// applyScaleState gives pod i a state: 3% stay unbound and Pending, the
// rest are bound to one of 50 nodes; of those, 3% stay Pending, 6% run not
// ready and the rest are ready since a log-uniform 1 minute to 200 days; 5%
// get a deletion cost. Deterministic per index.
func applyScaleState(ctx context.Context, c kubernetes.Interface, p *corev1.Pod, i int, now time.Time) (bound, ready bool, err error) {
	rng := rand.New(rand.NewPCG(uint64(i), 0x5000))
	if rng.IntN(100) < 5 {
		ann := map[string]string{deletionCostAnnotation: strconv.Itoa(rng.IntN(11) - 5)}
		if err := annotatePod(ctx, c, p.Namespace, p.Name, ann); err != nil {
			return false, false, err
		}
	}
	if rng.IntN(100) < 3 {
		return false, false, nil
	}
	if err := bindPod(ctx, c, p.Namespace, p.Name, fmt.Sprintf("node-%02d", rng.IntN(50))); err != nil {
		return false, false, fmt.Errorf("bind %s: %w", p.Name, err)
	}
	phase, isReady := corev1.PodRunning, true
	switch x := rng.IntN(100); {
	case x < 3:
		phase, isReady = corev1.PodPending, false
	case x < 9:
		isReady = false
	}
	ago := time.Duration(math.Exp(math.Log(60)+rng.Float64()*(math.Log(200*24*3600)-math.Log(60))) * float64(time.Second))
	ts := metav1.NewTime(now.Add(-ago))
	status := corev1.ConditionFalse
	if isReady {
		status = corev1.ConditionTrue
	}
	cs := corev1.ContainerStatus{Name: appContainer, Image: "registry.invalid/app:1", Ready: isReady, RestartCount: int32(rng.IntN(3)),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: ts}}}
	if phase == corev1.PodPending {
		cs.State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
	}
	patch, err := json.Marshal(map[string]any{"status": map[string]any{
		"phase":  phase,
		"hostIP": "127.0.0.1",
		"conditions": []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: ts},
			{Type: corev1.ContainersReady, Status: status, LastTransitionTime: ts},
			{Type: corev1.PodReady, Status: status, LastTransitionTime: ts},
		},
		"containerStatuses": []corev1.ContainerStatus{cs},
	}})
	if err != nil {
		return true, false, err
	}
	if _, err := c.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return true, false, fmt.Errorf("status of %s: %w", p.Name, err)
	}
	return true, isReady, nil
}

// cleanupScale removes the pods at once so that the rest of the suite
// does not pay for them: the Deployment and its ReplicaSet first (so
// nothing recreates the pods), then every pod with grace period 0 (bound
// pods would otherwise stay Terminating: there is no kubelet).
func cleanupScale(t *testing.T, c kubernetes.Interface, scaleNamespace string, pods int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute+time.Duration(pods/1000)*time.Minute)
	defer cancel()
	bg := metav1.DeletePropagationBackground
	if err := c.AppsV1().Deployments(scaleNamespace).Delete(ctx, scaleName, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Logf("cleanup: delete Deployment: %v", err)
	}
	if err := c.AppsV1().ReplicaSets(scaleNamespace).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: &bg}, metav1.ListOptions{}); err != nil {
		t.Logf("cleanup: delete ReplicaSets: %v", err)
	}
	if err := c.CoreV1().Pods(scaleNamespace).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptrTo(int64(0))}, metav1.ListOptions{}); err != nil {
		t.Logf("cleanup: delete pods: %v", err)
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("... (%d bytes)", len(s))
}
