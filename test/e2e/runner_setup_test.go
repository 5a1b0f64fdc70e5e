package e2e

// Setup: the workload, its pods driven to the scenario's initial state.

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

func (r *scenarioRun) createWorkload(ctx context.Context, replicas int32) error {
	c := env.cp.admin
	lbl := r.sc.selectorLabels()
	meta := metav1.ObjectMeta{Name: workloadName, Namespace: r.ns}
	tmpl := podTemplate(lbl, r.sc.sidecar)
	var err error
	switch r.sc.kind {
	case kindDeployment:
		d := &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{
			Replicas: ptrTo(replicas), Selector: &metav1.LabelSelector{MatchLabels: lbl}, Template: tmpl,
		}}
		if r.sc.maxSurge != nil || r.sc.maxUnavailable != nil {
			d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: r.sc.maxSurge, MaxUnavailable: r.sc.maxUnavailable}}
		}
		_, err = c.AppsV1().Deployments(r.ns).Create(ctx, d, metav1.CreateOptions{})
	case kindRS:
		rs := &appsv1.ReplicaSet{ObjectMeta: meta, Spec: appsv1.ReplicaSetSpec{
			Replicas: ptrTo(replicas), Selector: &metav1.LabelSelector{MatchLabels: lbl}, Template: tmpl,
		}}
		_, err = c.AppsV1().ReplicaSets(r.ns).Create(ctx, rs, metav1.CreateOptions{})
	case kindRC:
		rc := &corev1.ReplicationController{ObjectMeta: meta, Spec: corev1.ReplicationControllerSpec{
			Replicas: ptrTo(replicas), Selector: lbl, Template: &tmpl,
		}}
		_, err = c.CoreV1().ReplicationControllers(r.ns).Create(ctx, rc, metav1.CreateOptions{})
	case kindSTS:
		s := &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{
			Replicas: ptrTo(replicas), Selector: &metav1.LabelSelector{MatchLabels: lbl}, Template: tmpl,
			ServiceName: workloadName, PodManagementPolicy: appsv1.OrderedReadyPodManagement,
		}}
		if r.sc.parallel {
			s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
		}
		if r.sc.startOrdinal != nil {
			s.Spec.Ordinals = &appsv1.StatefulSetOrdinals{Start: *r.sc.startOrdinal}
		}
		_, err = c.AppsV1().StatefulSets(r.ns).Create(ctx, s, metav1.CreateOptions{})
	default:
		err = fmt.Errorf("unknown kind %q", r.sc.kind)
	}
	return err
}

// setReplicas scales the workload as admin by patching spec.replicas.
func (r *scenarioRun) setReplicas(ctx context.Context, n int32) error {
	if r.sc.desiredApply != nil && n == r.sc.target {
		return r.sc.desiredApply(ctx, r)
	}
	c := env.cp.admin
	patch := []byte(fmt.Sprintf(`{"spec":{"replicas":%d}}`, n))
	var err error
	switch r.sc.kind {
	case kindDeployment:
		_, err = c.AppsV1().Deployments(r.ns).Patch(ctx, workloadName, types.MergePatchType, patch, metav1.PatchOptions{})
	case kindRS:
		_, err = c.AppsV1().ReplicaSets(r.ns).Patch(ctx, workloadName, types.MergePatchType, patch, metav1.PatchOptions{})
	case kindRC:
		_, err = c.CoreV1().ReplicationControllers(r.ns).Patch(ctx, workloadName, types.MergePatchType, patch, metav1.PatchOptions{})
	case kindSTS:
		_, err = c.AppsV1().StatefulSets(r.ns).Patch(ctx, workloadName, types.MergePatchType, patch, metav1.PatchOptions{})
	}
	return err
}

func (r *scenarioRun) listPods(ctx context.Context) ([]*corev1.Pod, string, error) {
	list, err := env.cp.admin.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, "", err
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		pods = append(pods, &list.Items[i])
	}
	return pods, list.ResourceVersion, nil
}

func unapplied(pods []*corev1.Pod) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if _, ok := p.Annotations[appliedAnnotation]; !ok && !isTerminating(p) {
			out = append(out, p)
		}
	}
	return out
}

// prepare builds the scenario up to the moment before the prediction.
func (r *scenarioRun) prepare(ctx context.Context) (err error) {
	start := time.Now()
	defer func() {
		r.prepTime = time.Since(start)
		if err != nil {
			r.prepErr = err
		}
	}()
	c := env.cp.admin
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: r.ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if r.sc.orphan != nil {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "orphan", Namespace: r.ns, Labels: r.sc.selectorLabels()},
			Spec: podTemplate(nil, r.sc.sidecar).Spec}
		created, err := c.CoreV1().Pods(r.ns).Create(ctx, pod, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		if err := applyPodState(ctx, c, created, *r.sc.orphan, time.Now()); err != nil {
			return err
		}
		r.orphan = created.Name
		r.states[created.Name] = *r.sc.orphan
	}
	initial := r.sc.replicas
	if r.sc.growFrom > 0 {
		initial = r.sc.growFrom
	}
	if err := r.createWorkload(ctx, initial); err != nil {
		return fmt.Errorf("create %s: %w", r.sc.kind, err)
	}
	if r.sc.growFrom > 0 {
		if err := r.waitPodCount(ctx, int(initial), r.orderedReady()); err != nil {
			return err
		}
		time.Sleep(r.sc.growDelay)
		if err := r.setReplicas(ctx, r.sc.replicas); err != nil {
			return err
		}
	}
	if err := r.waitPodCount(ctx, int(r.sc.replicas), r.orderedReady()); err != nil {
		return err
	}

	// Apply the states of the initial pods, in index order.
	pods, _, err := r.listPods(ctx)
	if err != nil {
		return err
	}
	var owned []*corev1.Pod
	for _, p := range pods {
		if p.Name != r.orphan {
			owned = append(owned, p)
		}
	}
	sortPodsForStates(owned, r.stateful())
	now := time.Now()
	for i, p := range owned {
		st := running("node-a", time.Hour)
		if i < len(r.sc.states) {
			st = r.sc.states[i]
		}
		if err := applyPodState(ctx, c, p, st, now); err != nil {
			return err
		}
		r.states[p.Name] = st
		r.initial = append(r.initial, p.Name)
	}
	if err := r.settle(ctx, 800*time.Millisecond, 60*time.Second, false); err != nil {
		return fmt.Errorf("initial settle: %w", err)
	}

	extra := 0
	applyNew := func() error {
		// Pods created since (rollout, replacements) get the extra states.
		for round := 0; round < 6; round++ {
			if err := r.settle(ctx, 800*time.Millisecond, 60*time.Second, false); err != nil {
				return err
			}
			pods, _, err := r.listPods(ctx)
			if err != nil {
				return err
			}
			todo := unapplied(pods)
			if len(todo) == 0 {
				return nil
			}
			sortPodsForStates(todo, r.stateful())
			now := time.Now()
			for _, p := range todo {
				st := podState{Phase: corev1.PodPending}
				if extra < len(r.sc.extraStates) {
					st = r.sc.extraStates[extra]
				}
				extra++
				if err := applyPodState(ctx, c, p, st, now); err != nil {
					return err
				}
				r.states[p.Name] = st
				r.notef("later pod %s got state: %s", p.Name, st)
			}
		}
		return nil
	}

	rollouts := 0
	if r.sc.rollout {
		rollouts = 1
		if r.sc.secondRollout {
			rollouts = 2
		}
	}
	for k := 1; k <= rollouts; k++ {
		patch := fmt.Appendf(nil, `{"spec":{"template":{"metadata":{"annotations":{"e2e.scale-preview.io/revision":"%d"}}}}}`, k+1)
		if _, err := c.AppsV1().Deployments(r.ns).Patch(ctx, workloadName, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("start rollout %d: %w", k, err)
		}
		r.notef("changed the pod template: rollout %d started", k)
		if err := applyNew(); err != nil {
			return err
		}
	}
	if r.sc.paused {
		if _, err := c.AppsV1().Deployments(r.ns).Patch(ctx, workloadName, types.MergePatchType, []byte(`{"spec":{"paused":true}}`), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("pause: %w", err)
		}
		r.notef("paused the Deployment")
	}
	for _, i := range r.sc.terminate {
		name := r.initial[i]
		if err := c.CoreV1().Pods(r.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("delete %s: %w", name, err)
		}
		r.notef("deleted pod %s before the scale (bound: stays Terminating)", name)
	}
	if len(r.sc.terminate) > 0 {
		if err := applyNew(); err != nil {
			return err
		}
	}
	return r.settle(ctx, time.Second, 60*time.Second, false)
}

// waitPodCount waits until n pods exist. For OrderedReady StatefulSets the
// controller creates one pod at a time and waits for it to be Running and
// Ready, so each new pod is made ready at once (bound to the node its final
// state names).
func (r *scenarioRun) waitPodCount(ctx context.Context, n int, driveReady bool) error {
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	err := pollUntil(ctx, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		pods, _, err := r.listPods(ctx)
		if err != nil {
			return false, nil
		}
		count := 0
		for _, p := range pods {
			if isTerminating(p) {
				continue
			}
			count++
			if driveReady && !isReady(p) {
				ord := statefulOrdinal(p.Name) - int(deref0(r.sc.startOrdinal))
				node := "node-a"
				if ord >= 0 && ord < len(r.sc.states) {
					node = r.sc.states[ord].Node
				}
				if err := applyPodState(ctx, env.cp.admin, p, running(node, time.Hour), time.Now()); err != nil && !apierrors.IsConflict(err) {
					return false, err
				}
			}
		}
		return count >= n, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d pods in %s: %w", n, r.ns, err)
	}
	return nil
}

func deref0(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
