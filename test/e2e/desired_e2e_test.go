package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// desiredList is the part of `--desired -o json` (ScalePreviewList) the
// tests read.
type desiredList struct {
	Kind      string `json:"kind"`
	Certain   bool   `json:"certain"`
	Deleted   int    `json:"deleted"`
	Workloads []struct {
		Target struct {
			Kind, Name string
		} `json:"target"`
		Change          string `json:"change"`
		TemplateChanged bool   `json:"templateChanged"`
		Deleted         int    `json:"deleted"`
		Item            *int   `json:"item"`
	} `json:"workloads"`
	Items []prediction `json:"items"`
}

// desiredCase is a scenario whose scale-in is a `kubectl apply` of the
// workload's manifest with fewer replicas (and maybe a new image).
type desiredCase struct {
	sc       *scenario
	newImage string // "" keeps the template
	short    bool
}

func desiredCases() []desiredCase {
	return []desiredCase{
		{
			// One ReplicaSet: R5 (node-a crowded) then R6.
			sc: &scenario{name: "desired-deploy-replicas", kind: kindDeployment, replicas: 6, target: 3,
				states: []podState{
					running("node-a", 40*day), running("node-a", 20*day), running("node-a", 10*day),
					running("node-b", 5*day), running("node-c", 150*day), running("node-c", 120*day),
				}},
			short: true,
		},
		{
			sc: &scenario{name: "desired-rs-replicas", kind: kindRS, replicas: 5, target: 2,
				states: []podState{
					notReady("node-a"), running("node-a", 30*day), running("node-b", 20*day), running("node-b", day), running("node-a", time.Hour),
				}},
		},
		{
			// A new image with the scale-in: the scale, then the rollout's
			// first step (maxUnavailable 1) before any new pod is ready.
			sc: &scenario{name: "desired-deploy-template", kind: kindDeployment, replicas: 6, target: 3,
				maxSurge: ptrTo(intstr.FromInt32(1)), maxUnavailable: ptrTo(intstr.FromInt32(1)),
				states: []podState{
					running("node-a", 40*day), running("node-a", 20*day), running("node-b", 10*day),
					running("node-b", 5*day), running("node-c", 150*day), running("node-c", 2*time.Hour),
				}},
			newImage: "registry.invalid/app:2",
		},
	}
}

// TestDesiredApply predicts with `--desired -f FILE` as the read-only
// viewer, then `kubectl apply -f` the same file as admin and compares the
// controllers' deletions with the prediction's certain fates (the usual
// scenario comparison).
func TestDesiredApply(t *testing.T) {
	needPlugin(t)
	kubectl := desiredKubectl(t)
	for _, c := range desiredCases() {
		t.Run(c.sc.name, func(t *testing.T) {
			if testing.Short() && !c.short {
				t.Skip("not in the -short set")
			}
			r := newRun(c.sc)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			if err := r.prepare(ctx); err != nil {
				r.dumpNamespace(t)
				t.Fatalf("prepare: %v", err)
			}
			file, err := desiredWriteManifest(ctx, t.TempDir(), r, c.sc.target, c.newImage)
			if err != nil {
				t.Fatal(err)
			}
			run, err := runPlugin(ctx, env.pluginPath, "--desired", "-f", file, "-n", r.ns, "--kubeconfig", env.cp.viewerKubeconfig, "-o", "json")
			if err != nil || run.exitCode != 0 {
				t.Fatalf("plugin: %v %s", err, run)
			}
			var l desiredList
			if err := json.Unmarshal([]byte(run.stdout), &l); err != nil {
				t.Fatalf("not a ScalePreviewList: %v\n%s", err, run.stdout)
			}
			if l.Kind != "ScalePreviewList" || len(l.Workloads) != 1 || len(l.Items) != 1 || l.Workloads[0].Change != "scale-in" {
				t.Fatalf("want one workload (the ConfigMap ignored) with one scale-in item:\n%s", firstLines(run.stdout, 40))
			}
			if got := l.Workloads[0].TemplateChanged; got != (c.newImage != "") {
				t.Errorf("templateChanged %v, want %v", got, c.newImage != "")
			}
			r.pred, r.predRun = &l.Items[0], run
			t.Logf("plugin --desired (%s): victims %v certain %v", run.duration.Round(time.Millisecond), r.pred.Victims, deref(r.pred.Certain))
			c.sc.desiredApply = func(ctx context.Context, r *scenarioRun) error {
				out, err := exec.CommandContext(ctx, kubectl, "--kubeconfig", env.cp.adminKubeconfig, "apply", "-f", file).CombinedOutput()
				if err != nil {
					return fmt.Errorf("kubectl apply: %v: %s", err, out)
				}
				t.Logf("kubectl apply: %s", strings.TrimSpace(string(out)))
				return nil
			}
			if err := r.scaleAndObserve(ctx); err != nil {
				r.dumpNamespace(t)
				t.Fatalf("apply/observe: %v", err)
			}
			t.Logf("controllers deleted (in order): %v; created: %v", r.deleted, r.created)
			if c.newImage == "" {
				// The oracle knows the scale alone, not the rollout a new
				// template starts.
				r.checkOracle(t)
			}
			r.compare(t)
			r.dumpOnFailure(t)
		})
	}
}

func desiredKubectl(t *testing.T) string {
	t.Helper()
	kubectl := os.Getenv("E2E_KUBECTL")
	if kubectl == "" {
		kubectl = filepath.Join(env.build.binDir, "kubectl") // built with the control plane
	}
	if _, err := os.Stat(kubectl); err != nil {
		t.Fatalf("kubectl: %v (set E2E_KUBECTL)", err)
	}
	return kubectl
}

// desiredWriteManifest writes the workload as a GitOps repository would
// hold it (no status, no server fields; the live template, with newImage
// if set), with the new replica count, plus a ConfigMap.
func desiredWriteManifest(ctx context.Context, dir string, r *scenarioRun, replicas int32, newImage string) (string, error) {
	c := env.cp.admin
	var kind string
	var sel *metav1.LabelSelector
	var tmpl corev1.PodTemplateSpec
	var strategy *appsv1.DeploymentStrategy
	switch r.sc.kind {
	case kindDeployment:
		d, err := c.AppsV1().Deployments(r.ns).Get(ctx, workloadName, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		kind, sel, tmpl, strategy = "Deployment", d.Spec.Selector, d.Spec.Template, &d.Spec.Strategy
	case kindRS:
		rs, err := c.AppsV1().ReplicaSets(r.ns).Get(ctx, workloadName, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		kind, sel, tmpl = "ReplicaSet", rs.Spec.Selector, rs.Spec.Template
	default:
		return "", fmt.Errorf("no manifest for %s", r.sc.kind)
	}
	if newImage != "" {
		tmpl.Spec.Containers[0].Image = newImage
	}
	spec := map[string]any{"replicas": replicas, "selector": sel, "template": tmpl}
	if strategy != nil {
		spec["strategy"] = strategy
	}
	workload := map[string]any{"apiVersion": "apps/v1", "kind": kind,
		"metadata": map[string]any{"name": workloadName, "namespace": r.ns}, "spec": spec}
	cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "web-config", "namespace": r.ns}, "data": map[string]string{"k": "v"}}
	var docs []string
	for _, o := range []any{workload, cm} {
		b, err := yaml.Marshal(o)
		if err != nil {
			return "", err
		}
		docs = append(docs, string(b))
	}
	path := filepath.Join(dir, "manifest.yaml")
	return path, os.WriteFile(path, []byte(strings.Join(docs, "---\n")), 0o644)
}

// desiredWatcher is `--watch -o json` running as a process: the documents
// it printed, and its stderr lines.
type desiredWatcher struct {
	cmd  *exec.Cmd
	mu   sync.Mutex
	docs []prediction
	errs strings.Builder
	done chan struct{}
}

func desiredStartWatch(ctx context.Context, args ...string) (*desiredWatcher, error) {
	w := &desiredWatcher{cmd: exec.CommandContext(ctx, env.pluginPath, args...), done: make(chan struct{})}
	out, err := w.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	w.cmd.Stderr = writerTo(func(p []byte) {
		w.mu.Lock()
		w.errs.Write(p)
		w.mu.Unlock()
	})
	if err := w.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		defer close(w.done)
		dec := json.NewDecoder(bufio.NewReader(out))
		for {
			var p prediction
			if err := dec.Decode(&p); err != nil {
				return
			}
			w.mu.Lock()
			w.docs = append(w.docs, p)
			w.mu.Unlock()
		}
	}()
	return w, nil
}

type writerTo func([]byte)

func (f writerTo) Write(p []byte) (int, error) { f(p); return len(p), nil }

func (w *desiredWatcher) last() (prediction, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.docs) == 0 {
		return prediction{}, 0
	}
	return w.docs[len(w.docs)-1], len(w.docs)
}

func (w *desiredWatcher) stderr() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.errs.String()
}

// waitDoc waits for a printed prediction that satisfies cond.
func (w *desiredWatcher) waitDoc(ctx context.Context, what string, cond func(prediction) bool) (prediction, error) {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if p, n := w.last(); n > 0 && cond(p) {
			return p, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	p, n := w.last()
	return p, fmt.Errorf("no prediction with %s after %d printed (last victims %v); stderr:\n%s", what, n, p.Victims, w.stderr())
}

// TestDesiredWatch runs `--watch` on a ReplicaSet while its pods change: a
// kept pod turns unready, a pod is replaced by a new one that then comes
// up. The watch must print again with the new victims each time; then the
// scale is made for real and compared with the last prediction printed.
func TestDesiredWatch(t *testing.T) {
	needPlugin(t)
	sc := &scenario{name: "desired-watch-rs", kind: kindRS, replicas: 5, target: 3,
		states: []podState{
			running("node-a", 100*day), running("node-b", 60*day), running("node-a", 20*day),
			running("node-b", 5*time.Hour), running("node-a", 10*time.Minute),
		}}
	r := newRun(sc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := r.prepare(ctx); err != nil {
		r.dumpNamespace(t)
		t.Fatalf("prepare: %v", err)
	}
	w, err := desiredStartWatch(ctx, "rs/"+workloadName, "--replicas=3", "-n", r.ns, "--kubeconfig", env.cp.viewerKubeconfig, "--watch", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if w.cmd.ProcessState == nil {
			_ = w.cmd.Process.Kill()
			<-w.done
			_ = w.cmd.Wait()
		}
	}()
	c := env.cp.admin
	// R6: the two most recently ready go.
	first, err := w.waitDoc(ctx, "the first prediction", func(p prediction) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{r.initial[4], r.initial[3]}; !sameSet(first.Victims, want) {
		t.Errorf("first victims %v, want %v", first.Victims, want)
	}
	// 1. The longest-ready pod turns unready: R3 takes it first.
	if err := setPodStatus(ctx, c, r.ns, r.initial[0], notReady("node-a"), time.Now()); err != nil {
		t.Fatal(err)
	}
	r.states[r.initial[0]] = notReady("node-a")
	p, err := w.waitDoc(ctx, r.initial[0]+" as a victim", func(p prediction) bool { return slices.Contains(p.Victims, r.initial[0]) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after %s turned unready: victims %v", r.initial[0], p.Victims)
	if want := []string{r.initial[0], r.initial[4]}; !sameSet(p.Victims, want) {
		t.Errorf("victims %v, want %v", p.Victims, want)
	}
	// 2. A pod is replaced: the new one is unbound (R1 first), then comes
	// up ready on node-b (the most recently ready: R6 next after the
	// unready one).
	if err := forceDelete(ctx, c, r.ns, r.initial[1]); err != nil {
		t.Fatal(err)
	}
	var fresh string
	p, err = w.waitDoc(ctx, "the replacement as a victim", func(p prediction) bool {
		for _, v := range p.Victims {
			if !slices.Contains(r.initial, v) {
				fresh = v
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("after %s was replaced by %s: victims %v", r.initial[1], fresh, p.Victims)
	pod, err := c.CoreV1().Pods(r.ns).Get(ctx, fresh, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	up := running("node-b", 2*time.Second)
	if err := applyPodState(ctx, c, pod, up, time.Now()); err != nil {
		t.Fatal(err)
	}
	r.states[fresh] = up
	// Its fate may not move (it stays a victim): then nothing is printed
	// and the last prediction still holds. Give the watch its quiet period
	// and a prediction.
	time.Sleep(3 * time.Second)
	last, n := w.last()
	t.Logf("last of %d predictions: victims %v certain %v; stderr:\n%s", n, last.Victims, deref(last.Certain), w.stderr())
	if want := []string{r.initial[0], fresh}; !sameSet(last.Victims, want) {
		t.Errorf("last victims %v, want %v (the unready pod, then the most recently ready)", last.Victims, want)
	}
	if !strings.Contains(w.stderr(), "now deleted: "+r.initial[0]) {
		t.Errorf("no line says %s is now deleted:\n%s", r.initial[0], w.stderr())
	}
	// Ctrl-C: a clean stop.
	_ = w.cmd.Process.Signal(syscall.SIGINT)
	<-w.done
	if err := w.cmd.Wait(); err != nil {
		t.Errorf("the watch did not exit 0 on Ctrl-C: %v", err)
	}
	// The last prediction against the real scale.
	r.pred = &last
	if err := r.scaleAndObserve(ctx); err != nil {
		r.dumpNamespace(t)
		t.Fatalf("scale/observe: %v", err)
	}
	t.Logf("controllers deleted (in order): %v", r.deleted)
	r.compare(t)
	r.dumpOnFailure(t)
}

// TestDesiredWatchLong keeps `--watch` running while pods churn (one is
// replaced and comes up ready, over and over) and samples the plugin's
// resident memory: the largest sample of the last quarter of the run must
// stay within 16 MiB of the largest of the first quarter. Not with -short;
// E2E_WATCH_DURATION sets the length (default 2m; hours for a soak).
func TestDesiredWatchLong(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short")
	}
	needPlugin(t)
	dur := envDuration("E2E_WATCH_DURATION", 2*time.Minute)
	sc := &scenario{name: "desired-watch-long", kind: kindRS, replicas: 8, target: 5,
		states: []podState{
			running("node-a", 100*day), running("node-b", 60*day), running("node-a", 20*day), running("node-b", 5*day),
			running("node-a", 5*time.Hour), running("node-b", time.Hour), running("node-a", 30*time.Minute), running("node-b", 10*time.Minute),
		}}
	r := newRun(sc)
	ctx, cancel := context.WithTimeout(context.Background(), dur+5*time.Minute)
	defer cancel()
	if err := r.prepare(ctx); err != nil {
		r.dumpNamespace(t)
		t.Fatalf("prepare: %v", err)
	}
	w, err := desiredStartWatch(ctx, "rs/"+workloadName, "--replicas=5", "-n", r.ns, "--kubeconfig", env.cp.viewerKubeconfig, "--watch", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = w.cmd.Process.Kill()
		<-w.done
		_ = w.cmd.Wait()
	}()
	if _, err := w.waitDoc(ctx, "the first prediction", func(prediction) bool { return true }); err != nil {
		t.Fatal(err)
	}
	c := env.cp.admin
	var samples []int64
	start, churns := time.Now(), 0
	lastLog := start
	nodes := []string{"node-a", "node-b"}
	for time.Since(start) < dur {
		pods, _, err := r.listPods(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// Replace the oldest pod; bring up the ones not yet up.
		var oldest *corev1.Pod
		for _, p := range pods {
			if p.DeletionTimestamp != nil {
				continue
			}
			if p.Spec.NodeName == "" {
				if err := applyPodState(ctx, c, p, running(nodes[churns%2], time.Second), time.Now()); err != nil {
					t.Logf("bring up %s: %v", p.Name, err)
				}
				continue
			}
			if oldest == nil || p.CreationTimestamp.Before(&oldest.CreationTimestamp) {
				oldest = p
			}
		}
		if oldest != nil {
			if err := forceDelete(ctx, c, r.ns, oldest.Name); err != nil {
				t.Logf("delete %s: %v", oldest.Name, err)
			}
			churns++
		}
		if rss, err := desiredRSS(w.cmd.Process.Pid); err == nil {
			samples = append(samples, rss)
			if time.Since(lastLog) >= 10*time.Minute {
				_, printed := w.last()
				t.Logf("after %s: RSS %d KiB, %d pods replaced, %d predictions printed", time.Since(start).Round(time.Minute), rss/1024, churns, printed)
				lastLog = time.Now()
			}
		}
		time.Sleep(time.Second)
	}
	_, n := w.last()
	if len(samples) < 8 {
		t.Fatalf("%d memory samples", len(samples))
	}
	q := len(samples) / 4
	firstMax, lastMax := slices.Max(samples[:q]), slices.Max(samples[len(samples)-q:])
	t.Logf("watch over %s: %d pods replaced, %d predictions printed; RSS max first quarter %d KiB, last quarter %d KiB", dur, churns, n, firstMax/1024, lastMax/1024)
	if lastMax > firstMax+16<<20 {
		t.Errorf("RSS grew from %d KiB to %d KiB: not flat", firstMax/1024, lastMax/1024)
	}
	if n < 3 {
		t.Errorf("only %d predictions printed while pods churned", n)
	}
	if s := w.stderr(); strings.Contains(s, "the watch goes on") {
		t.Logf("stderr:\n%s", s)
	}
}

// desiredRSS is a process's resident memory (VmRSS) in bytes.
func desiredRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err != nil {
				return 0, err
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS")
}
