package e2e

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// drainControllers is what a drain needs on a kubelet-less control plane:
// the disruption controller writes PDB status (the Eviction API refuses a
// budget whose observedGeneration lags), the workload controllers create
// the replacements, the garbage collector removes what a cleanup deletes.
const drainControllers = "disruption-controller,deployment-controller,replicaset-controller,statefulset-controller," +
	"daemonset-controller,job-controller,garbage-collector-controller"

// drainNeverReadyLabel marks a pod (or a template) whose pods the fake
// kubelet runs but never makes Ready.
const drainNeverReadyLabel = "drain-e2e/never-ready"

// drainReadyDelay is how long a started pod waits before it turns Ready.
const drainReadyDelay = time.Second

// drainCluster is the drain test's own control plane (the suite's shared
// one runs no scheduler, no disruption controller and keeps deleted pods
// Terminating), with a real kube-scheduler and a fake kubelet.
type drainCluster struct {
	cp      *controlPlane
	kubelet *fakeKubelet
}

// startDrainCluster starts etcd, kube-apiserver, kube-controller-manager
// with drainControllers, the fake kubelet and a default kube-scheduler.
// Everything stops at the end of the test; the viewer's audit trail is
// checked then (the plugin must have used only read verbs).
func startDrainCluster(t *testing.T) *drainCluster {
	t.Helper()
	return startKubeletCluster(t, drainControllers)
}

// startKubeletCluster is startDrainCluster with another controller list
// (the rollout proof adds the resourcequota controller).
func startKubeletCluster(t *testing.T, controllers string) *drainCluster {
	t.Helper()
	cp, err := startControlPlaneWith(env.cp.binDir, controllers)
	if err != nil {
		t.Fatalf("drain control plane: %v", err)
	}
	dc := &drainCluster{cp: cp}
	t.Cleanup(func() { dc.stop(t) })
	// The probe ReplicaSet's pod would otherwise be scheduled onto a scenario's node.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := drainDeleteProbe(ctx, cp.admin); err != nil {
		t.Fatalf("drain control plane: removing the probe: %v", err)
	}
	dc.kubelet = startFakeKubelet(cp.admin)
	dc.startScheduler(t)
	return dc
}

func drainDeleteProbe(ctx context.Context, c kubernetes.Interface) error {
	if err := c.AppsV1().ReplicaSets(probeNamespace).Delete(ctx, probeRSName, metav1.DeleteOptions{}); err != nil {
		return err
	}
	return pollUntil(ctx, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		pods, err := c.CoreV1().Pods(probeNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, p := range pods.Items {
			_ = c.CoreV1().Pods(probeNamespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptrTo(int64(0))})
		}
		return len(pods.Items) == 0, nil
	})
}

// startScheduler runs the default kube-scheduler (profile default-scheduler,
// which every scenario pod names) for the rest of the test.
func (dc *drainCluster) startScheduler(t *testing.T) {
	cfg := filepath.Join(dc.cp.dir, "drain-scheduler.yaml")
	body := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" +
		"clientConnection:\n  kubeconfig: " + dc.cp.adminKubeconfig + "\nleaderElection:\n  leaderElect: false\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := dc.cp.startProcess("kube-scheduler", "--config", cfg, "--secure-port", "0", "--v", "2"); err != nil {
		t.Fatal(err)
	}
}

func (dc *drainCluster) stop(t *testing.T) {
	if dc.kubelet != nil {
		dc.kubelet.stop()
	}
	if bad, _, err := viewerAuditViolations(dc.cp.auditLog); err != nil {
		t.Errorf("drain control plane audit log: %v", err)
	} else if len(bad) > 0 {
		t.Errorf("user %q issued non-read requests on the drain control plane: %v", viewerUser, bad)
	}
	if err := dc.cp.crashed(); err != nil {
		t.Errorf("drain control plane crashed: %v", err)
	}
	if t.Failed() {
		t.Log(dc.cp.logTails(30))
	}
	dc.cp.stop()
	if t.Failed() || os.Getenv("E2E_KEEP") == "1" {
		t.Logf("kept the drain control plane's dir %s", dc.cp.dir)
	} else {
		os.RemoveAll(dc.cp.dir)
	}
}

// fakeKubelet stands in for every node's kubelet: it keeps Nodes Ready
// and untainted, runs bound pods (Running, then Ready after a delay: its
// revision's, else drainReadyDelay; never when labelled never-ready or
// when its revision never turns Ready), and keeps a terminating pod
// (Ready=False) until its grace period has passed, then removes it: until
// then it holds the scheduler's resources and the quota, and kubectl
// drain, StatefulSets and Recreate wait for it. It never binds a pod.
type fakeKubelet struct {
	c      kubernetes.Interface
	cancel context.CancelFunc
	done   sync.WaitGroup
	// nodes, when set, replaces syncNodes; down says which nodes' kubelets
	// are dead (their pods are left alone). See outage_kubelet_test.go.
	nodes func(ctx context.Context)
	down  func(node string) bool

	mu        sync.Mutex
	fallback  map[string]revisionReadiness            // namespace -> readiness of a revision first seen now
	revisions map[string]map[string]revisionReadiness // namespace -> revision -> readiness fixed at first sight
}

// revisionReadiness is how the pods of one revision (`pod-template-hash`
// or `controller-revision-hash`) turn Ready.
type revisionReadiness struct {
	delay time.Duration
	never bool
}

func startFakeKubelet(c kubernetes.Interface) *fakeKubelet {
	return startFakeKubeletWith(&fakeKubelet{c: c})
}

func startFakeKubeletWith(k *fakeKubelet) *fakeKubelet {
	ctx, cancel := context.WithCancel(context.Background())
	k.cancel = cancel
	if k.fallback == nil {
		k.fallback = map[string]revisionReadiness{}
	}
	if k.revisions == nil {
		k.revisions = map[string]map[string]revisionReadiness{}
	}
	k.done.Add(1)
	go func() {
		defer k.done.Done()
		for ctx.Err() == nil {
			if k.nodes != nil {
				k.nodes(ctx)
			} else {
				k.syncNodes(ctx)
			}
			k.syncPods(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(150 * time.Millisecond):
			}
		}
	}()
	return k
}

func (k *fakeKubelet) stop() {
	k.cancel()
	k.done.Wait()
}

// syncNodes removes the not-ready taint that admission adds on create and
// renews the Ready heartbeat every 10 s.
func (k *fakeKubelet) syncNodes(ctx context.Context) {
	nodes, err := k.c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		if kept := drainUntainted(n.Spec.Taints); len(kept) != len(n.Spec.Taints) {
			n.Spec.Taints = kept
			if upd, err := k.c.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{}); err == nil {
				n = upd
			} else {
				continue
			}
		}
		if drainNodeHeartbeatFresh(n) {
			continue
		}
		now := metav1.Now()
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: now, LastTransitionTime: now}}
		_, _ = k.c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
	}
}

func drainUntainted(taints []corev1.Taint) []corev1.Taint {
	var kept []corev1.Taint
	for _, t := range taints {
		if t.Key != corev1.TaintNodeNotReady {
			kept = append(kept, t)
		}
	}
	return kept
}

func drainNodeHeartbeatFresh(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue && time.Since(c.LastHeartbeatTime.Time) < 10*time.Second
		}
	}
	return false
}

func (k *fakeKubelet) syncPods(ctx context.Context) {
	pods, err := k.c.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		r := k.readiness(p)
		if p.Spec.NodeName == "" || (k.down != nil && k.down(p.Spec.NodeName)) {
			continue
		}
		if p.DeletionTimestamp != nil {
			k.finishTermination(ctx, p)
			continue
		}
		k.runPod(ctx, p, r)
	}
}

// setRevisionReadiness says how the pods of the namespace's revisions not
// seen before turn Ready; a revision keeps what held when its first pod
// appeared (so a bad release stays bad when the next one is rolled out).
func (k *fakeKubelet) setRevisionReadiness(ns string, r revisionReadiness) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.fallback[ns] = r
}

func podRevision(p *corev1.Pod) string {
	if h := p.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; h != "" {
		return h
	}
	return p.Labels[appsv1.ControllerRevisionHashLabelKey]
}

// readiness is the pod's revision's readiness (drainReadyDelay for
// namespaces without a setting), fixed when the revision is first seen.
func (k *fakeKubelet) readiness(p *corev1.Pod) revisionReadiness {
	k.mu.Lock()
	defer k.mu.Unlock()
	fb, ok := k.fallback[p.Namespace]
	rev := podRevision(p)
	if !ok || rev == "" {
		return revisionReadiness{delay: drainReadyDelay}
	}
	revs := k.revisions[p.Namespace]
	if revs == nil {
		revs = map[string]revisionReadiness{}
		k.revisions[p.Namespace] = revs
	}
	r, seen := revs[rev]
	if !seen {
		r = fb
		revs[rev] = r
	}
	return r
}

// finishTermination turns a terminating pod unready at once, and deletes
// it for good once its deletionTimestamp (deletion time + grace period)
// has passed.
func (k *fakeKubelet) finishTermination(ctx context.Context, p *corev1.Pod) {
	if time.Now().Before(p.DeletionTimestamp.Time) {
		if drainPodReady(p) {
			drainSetReady(p, false)
			_, _ = k.c.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		}
		return
	}
	err := k.c.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
		GracePeriodSeconds: ptrTo(int64(0)), Preconditions: &metav1.Preconditions{UID: &p.UID}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		logf("fake kubelet: deleting %s/%s: %v", p.Namespace, p.Name, err)
	}
}

// runPod moves a bound pod through Running to Ready (or keeps it unready).
func (k *fakeKubelet) runPod(ctx context.Context, p *corev1.Pod, r revisionReadiness) {
	neverReady := p.Labels[drainNeverReadyLabel] == "true" || r.never
	ready := drainPodReady(p)
	switch {
	case p.Status.Phase != corev1.PodRunning:
		drainSetRunning(p)
	case neverReady && ready:
		drainSetReady(p, false)
	case !neverReady && !ready && p.Status.StartTime != nil && time.Since(p.Status.StartTime.Time) >= r.delay:
		drainSetReady(p, true)
	default:
		return
	}
	_, _ = k.c.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
}

func drainPodReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func drainSetRunning(p *corev1.Pod) {
	now := metav1.Now()
	p.Status.Phase = corev1.PodRunning
	p.Status.StartTime = &now
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, ImageID: c.Image, Started: ptrTo(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	drainSetReady(p, false)
}

func drainSetReady(p *corev1.Pod, ready bool) {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	now := metav1.Now()
	var conds []corev1.PodCondition
	for _, c := range p.Status.Conditions {
		if c.Type != corev1.PodReady && c.Type != corev1.ContainersReady {
			conds = append(conds, c)
		}
	}
	conds = append(conds,
		corev1.PodCondition{Type: corev1.ContainersReady, Status: st, LastTransitionTime: now},
		corev1.PodCondition{Type: corev1.PodReady, Status: st, LastTransitionTime: now})
	p.Status.Conditions = conds
	for i := range p.Status.ContainerStatuses {
		p.Status.ContainerStatuses[i].Ready = ready
	}
}
