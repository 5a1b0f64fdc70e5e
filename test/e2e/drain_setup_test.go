package e2e

import (
	"context"
	"fmt"
	"sort"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// setUp creates the workloads before the nodes exist, binds every pod to
// its planned node (so the scheduler places none of them), then creates the
// nodes and waits until the controllers and budgets have settled.
func (s *drainScenario) setUp(ctx context.Context, c kubernetes.Interface) error {
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	for _, w := range s.workloads {
		if err := s.createWorkload(ctx, c, w); err != nil {
			return fmt.Errorf("create %s %s: %w", w.kind, w.name, err)
		}
	}
	if err := s.bindAll(ctx, c); err != nil {
		return err
	}
	for _, n := range s.nodes {
		if err := drainCreateNode(ctx, c, n); err != nil {
			return fmt.Errorf("create node %s: %w", n.name, err)
		}
	}
	for _, p := range s.pdbs {
		if _, err := c.PolicyV1().PodDisruptionBudgets(s.ns).Create(ctx, p.object(s.ns), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create PDB %s: %w", p.name, err)
		}
	}
	return s.waitSettled(ctx, c)
}

func (w *drainWorkload) labels() map[string]string {
	l := map[string]string{"app": w.name, "tier": w.tier}
	if w.neverReady {
		l[drainNeverReadyLabel] = "true"
	}
	return l
}

func (w *drainWorkload) template() corev1.PodTemplateSpec {
	t := podTemplate(w.labels(), false)
	t.Spec.TerminationGracePeriodSeconds = ptrTo(w.grace)
	t.Spec.Tolerations = w.tolerations
	t.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(w.milliCPU, resource.DecimalSI)}
	if w.emptyDir {
		t.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}
	return t
}

func (s *drainScenario) createWorkload(ctx context.Context, c kubernetes.Interface, w *drainWorkload) error {
	meta := metav1.ObjectMeta{Name: w.name, Namespace: s.ns}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": w.name}}
	tpl := w.template()
	var err error
	switch w.kind {
	case "Deployment":
		_, err = c.AppsV1().Deployments(s.ns).Create(ctx, &appsv1.Deployment{ObjectMeta: meta,
			Spec: appsv1.DeploymentSpec{Replicas: ptrTo(int32(w.replicas)), Selector: sel, Template: tpl}}, metav1.CreateOptions{})
	case "StatefulSet":
		policy := appsv1.OrderedReadyPodManagement
		if w.parallel {
			policy = appsv1.ParallelPodManagement
		}
		_, err = c.AppsV1().StatefulSets(s.ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: meta,
			Spec: appsv1.StatefulSetSpec{Replicas: ptrTo(int32(w.replicas)), Selector: sel, Template: tpl,
				ServiceName: w.name, PodManagementPolicy: policy}}, metav1.CreateOptions{})
	case "DaemonSet":
		_, err = c.AppsV1().DaemonSets(s.ns).Create(ctx, &appsv1.DaemonSet{ObjectMeta: meta,
			Spec: appsv1.DaemonSetSpec{Selector: sel, Template: tpl}}, metav1.CreateOptions{})
	case "Job":
		tpl.Spec.RestartPolicy = corev1.RestartPolicyNever
		_, err = c.BatchV1().Jobs(s.ns).Create(ctx, &batchv1.Job{ObjectMeta: meta,
			Spec: batchv1.JobSpec{Parallelism: ptrTo(int32(w.replicas)), BackoffLimit: ptrTo(int32(6)), Template: tpl}}, metav1.CreateOptions{})
	case "Pod":
		_, err = c.CoreV1().Pods(s.ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: w.name, Namespace: s.ns, Labels: tpl.Labels},
			Spec: tpl.Spec}, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("unknown kind")
	}
	return err
}

// bindAll binds each workload's pods, in name order, to its placement, and
// labels its never-ready pods. An OrderedReady StatefulSet creates its next
// pod only once the previous one is Ready (the fake kubelet does that), so
// this loops until every planned pod is bound.
func (s *drainScenario) bindAll(ctx context.Context, c kubernetes.Interface) error {
	want := 0
	for _, w := range s.workloads {
		want += len(w.placement)
	}
	var last string
	err := pollUntil(ctx, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		bound := 0
		for _, w := range s.workloads {
			n, err := s.bindWorkload(ctx, c, w)
			if err != nil {
				last = err.Error()
				return false, nil
			}
			bound += n
		}
		last = fmt.Sprintf("%d of %d pods bound", bound, want)
		return bound == want, nil
	})
	if err != nil {
		return fmt.Errorf("binding the scenario's pods: %s: %w", last, err)
	}
	return nil
}

func (s *drainScenario) bindWorkload(ctx context.Context, c kubernetes.Interface, w *drainWorkload) (int, error) {
	if len(w.placement) == 0 {
		return 0, nil
	}
	pods, err := c.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + w.name})
	if err != nil {
		return 0, err
	}
	// A controller creates its pods in batches: each pod keeps the slot it
	// got when it first appeared.
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	if w.slot == nil {
		w.slot = map[string]int{}
	}
	bound := 0
	for i := range pods.Items {
		p := &pods.Items[i]
		slot, ok := w.slot[p.Name]
		if !ok {
			if len(w.slot) >= len(w.placement) {
				continue
			}
			slot = len(w.slot)
			w.slot[p.Name] = slot
		}
		if p.Spec.NodeName == "" {
			if err := bindPod(ctx, c, s.ns, p.Name, w.placement[slot]); err != nil {
				return bound, err
			}
		}
		if slot < w.unready && p.Labels[drainNeverReadyLabel] != "true" {
			patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, drainNeverReadyLabel)
			if _, err := c.CoreV1().Pods(s.ns).Patch(ctx, p.Name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
				return bound, err
			}
		}
		bound++
	}
	return bound, nil
}

func drainCreateNode(ctx context.Context, c kubernetes.Interface, n drainNodeSpec) error {
	res := corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(n.milliCPU, resource.DecimalSI),
		corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	now := metav1.Now()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.name, Labels: map[string]string{corev1.LabelHostname: n.name}},
		Status: corev1.NodeStatus{Capacity: res, Allocatable: res,
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
				LastHeartbeatTime: now, LastTransitionTime: now}}},
	}
	_, err := c.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	return err
}

func (p drainPDB) object(ns string) *policyv1.PodDisruptionBudget {
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: p.name, Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: p.selector},
			MinAvailable: p.minAvailable, MaxUnavailable: p.maxUnavailable},
	}
	if p.policy != "" {
		pdb.Spec.UnhealthyPodEvictionPolicy = ptrTo(policyv1.UnhealthyPodEvictionPolicyType(p.policy))
	}
	return pdb
}

// waitSettled waits until every pod is bound, Running and as Ready as
// planned, every DaemonSet pod exists, every budget's status is current,
// and nothing has changed for a second.
func (s *drainScenario) waitSettled(ctx context.Context, c kubernetes.Interface) error {
	var last, why string
	stableSince := time.Now()
	err := pollUntil(ctx, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		state, reason := s.settledState(ctx, c)
		if reason != "" || state != last {
			why, last, stableSince = reason, state, time.Now()
			return false, nil
		}
		return time.Since(stableSince) >= time.Second, nil
	})
	if err != nil {
		return fmt.Errorf("scenario never settled (%s): %w", why, err)
	}
	return nil
}

// settledState is a fingerprint of what must be stable, or why not yet.
func (s *drainScenario) settledState(ctx context.Context, c kubernetes.Interface) (string, string) {
	pods, err := c.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err.Error()
	}
	want := 0
	for _, w := range s.workloads {
		want += len(w.placement)
		if w.kind == "DaemonSet" {
			want += len(s.nodes)
		}
	}
	if len(pods.Items) != want {
		return "", fmt.Sprintf("%d of %d pods", len(pods.Items), want)
	}
	fp := ""
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodRunning {
			return "", "pod " + p.Name + " not running"
		}
		if drainPodReady(&p) == (p.Labels[drainNeverReadyLabel] == "true") {
			return "", "pod " + p.Name + " readiness"
		}
		fp += p.Name + p.ResourceVersion + ","
	}
	pdbs, err := c.PolicyV1().PodDisruptionBudgets(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err.Error()
	}
	for _, p := range pdbs.Items {
		if p.Status.ObservedGeneration != p.Generation {
			return "", "PDB " + p.Name + " status"
		}
		fp += fmt.Sprintf("%s:%d/%d,", p.Name, p.Status.CurrentHealthy, p.Status.DisruptionsAllowed)
	}
	return fp, ""
}

// tearDown removes the scenario's objects and nodes so that the next
// scenario starts from an empty cluster (no namespace controller runs).
func (s *drainScenario) tearDown(ctx context.Context, c kubernetes.Interface) error {
	bg := metav1.DeleteOptions{PropagationPolicy: ptrTo(metav1.DeletePropagationBackground)}
	all := metav1.ListOptions{}
	_ = c.AppsV1().Deployments(s.ns).DeleteCollection(ctx, bg, all)
	_ = c.AppsV1().StatefulSets(s.ns).DeleteCollection(ctx, bg, all)
	_ = c.AppsV1().DaemonSets(s.ns).DeleteCollection(ctx, bg, all)
	_ = c.BatchV1().Jobs(s.ns).DeleteCollection(ctx, bg, all)
	_ = c.PolicyV1().PodDisruptionBudgets(s.ns).DeleteCollection(ctx, bg, all)
	err := pollUntil(ctx, 300*time.Millisecond, func(ctx context.Context) (bool, error) {
		_ = c.AppsV1().ReplicaSets(s.ns).DeleteCollection(ctx, bg, all)
		_ = c.CoreV1().Pods(s.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptrTo(int64(0))}, all)
		pods, err := c.CoreV1().Pods(s.ns).List(ctx, all)
		return err == nil && len(pods.Items) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("tear down %s: pods remain: %w", s.ns, err)
	}
	for _, n := range s.nodes {
		if err := c.CoreV1().Nodes().Delete(ctx, n.name, metav1.DeleteOptions{}); err != nil {
			return err
		}
	}
	return nil
}
