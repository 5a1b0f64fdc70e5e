package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// updateControllers: the workload controllers, the disruption controller
// (PDB status) and the resourcequota controller (quota status; admission
// itself is kube-apiserver's ResourceQuota plugin, on by default).
const updateControllers = "deployment-controller,replicaset-controller,statefulset-controller,daemonset-controller," +
	"disruption-controller,resourcequota-controller,garbage-collector-controller"

// grantRolloutReads lets the viewer also read what a rollout preview reads
// beyond the suite's role: ControllerRevisions (StatefulSet and DaemonSet
// revisions) and ResourceQuotas. Read verbs only; the audit check holds.
func grantRolloutReads(ctx context.Context, c kubernetes.Interface) error {
	ro := []string{"get", "list", "watch"}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "scale-preview-rollout-e2e"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"apps"}, Resources: []string{"controllerrevisions"}, Verbs: ro},
		{APIGroups: []string{""}, Resources: []string{"resourcequotas"}, Verbs: ro},
	}}
	if _, err := c.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return err
	}
	_, err := c.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: role.Name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: viewerUser}},
	}, metav1.CreateOptions{})
	return err
}

// setUp creates the workload before its nodes, binds its pods where
// planned (the scheduler places only what the rollout creates), creates the
// nodes, optionally leaves an earlier release mid-rollout, then adds the
// PDB and the quota and waits until everything has settled.
func (s *updateScenario) setUp(ctx context.Context, dc *drainCluster) error {
	c := dc.cp.admin
	dc.kubelet.setRevisionReadiness(s.ns, revisionReadiness{delay: drainReadyDelay})
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: s.ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if err := s.createWorkload(ctx, c); err != nil {
		return fmt.Errorf("create %s: %w", s.kind, err)
	}
	if s.kind != "DaemonSet" {
		w := &drainWorkload{name: s.name, placement: s.placement, unready: 0}
		ds := &drainScenario{ns: s.ns, workloads: []*drainWorkload{w}}
		if err := ds.bindAll(ctx, c); err != nil {
			return err
		}
	}
	for _, n := range s.nodes {
		if err := drainCreateNode(ctx, c, n); err != nil {
			return fmt.Errorf("create node %s: %w", n.name, err)
		}
	}
	if err := s.markUnhealthy(ctx, c); err != nil {
		return err
	}
	if err := s.waitSettled(ctx, dc); err != nil {
		return err
	}
	if s.midRollout {
		dc.kubelet.setRevisionReadiness(s.ns, revisionReadiness{never: true})
		if err := s.patchImage(ctx, c, updateMidImage); err != nil {
			return err
		}
		time.Sleep(time.Second)
		if err := s.waitSettled(ctx, dc); err != nil {
			return err
		}
	}
	return s.addBudgetAndQuota(ctx, dc)
}

func (s *updateScenario) template() corev1.PodTemplateSpec {
	t := podTemplate(map[string]string{"app": s.name}, false)
	t.Spec.TerminationGracePeriodSeconds = ptrTo(s.grace)
	t.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(s.milliCPU, resource.DecimalSI)}
	return t
}

func (s *updateScenario) createWorkload(ctx context.Context, c kubernetes.Interface) error {
	meta := metav1.ObjectMeta{Name: s.name, Namespace: s.ns}
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": s.name}}
	tpl := s.template()
	var err error
	switch s.kind {
	case "Deployment":
		d := &appsv1.Deployment{ObjectMeta: meta, Spec: appsv1.DeploymentSpec{Replicas: ptrTo(int32(s.replicas)), Selector: sel,
			Template: tpl, MinReadySeconds: s.minReadySeconds}}
		if s.recreate {
			d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
		} else {
			d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: s.surge, MaxUnavailable: s.unavail}}
		}
		_, err = c.AppsV1().Deployments(s.ns).Create(ctx, d, metav1.CreateOptions{})
	case "StatefulSet":
		policy := appsv1.OrderedReadyPodManagement
		if s.parallel {
			policy = appsv1.ParallelPodManagement
		}
		_, err = c.AppsV1().StatefulSets(s.ns).Create(ctx, &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{
			Replicas: ptrTo(int32(s.replicas)), Selector: sel, Template: tpl, ServiceName: s.name, PodManagementPolicy: policy,
			UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateStatefulSetStrategy{Partition: ptrTo(s.partition), MaxUnavailable: s.stsUnavail}}}},
			metav1.CreateOptions{})
	case "DaemonSet":
		_, err = c.AppsV1().DaemonSets(s.ns).Create(ctx, &appsv1.DaemonSet{ObjectMeta: meta, Spec: appsv1.DaemonSetSpec{
			Selector: sel, Template: tpl, UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.RollingUpdateDaemonSetStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDaemonSet{MaxSurge: s.surge, MaxUnavailable: s.unavail}}}}, metav1.CreateOptions{})
	}
	return err
}

// markUnhealthy labels the planned unhealthy pod (by ordinal for
// StatefulSets, else the pod bound to placement slot s.unhealthy).
func (s *updateScenario) markUnhealthy(ctx context.Context, c kubernetes.Interface) error {
	if s.unhealthy < 0 {
		return nil
	}
	var name string
	err := pollUntil(ctx, 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		pods, err := c.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
		for _, p := range pods.Items {
			if s.kind == "StatefulSet" && statefulOrdinal(p.Name) == s.unhealthy || s.kind != "StatefulSet" && len(pods.Items) > s.unhealthy && p.Name == pods.Items[s.unhealthy].Name {
				name = p.Name
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("the unhealthy pod #%d never appeared: %w", s.unhealthy, err)
	}
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"true"}}}`, drainNeverReadyLabel)
	_, err = c.CoreV1().Pods(s.ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

func (s *updateScenario) patchImage(ctx context.Context, c kubernetes.Interface, image string) error {
	patch := []byte(fmt.Sprintf(`{"spec":{"template":{"spec":{"containers":[{"name":%q,"image":%q}]}}}}`, appContainer, image))
	_, err := c.AppsV1().Deployments(s.ns).Patch(ctx, s.name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return err
}

// addBudgetAndQuota adds the PDB, and a quota whose hard limit is what the
// namespace uses now (so any surge pod is refused), then waits for both
// statuses.
func (s *updateScenario) addBudgetAndQuota(ctx context.Context, dc *drainCluster) error {
	c := dc.cp.admin
	if s.pdb != nil {
		if _, err := c.PolicyV1().PodDisruptionBudgets(s.ns).Create(ctx, s.pdb.object(s.ns), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create PDB: %w", err)
		}
	}
	if s.quota != "" {
		pods, err := c.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		n := int64(len(pods.Items))
		hard := corev1.ResourceList{corev1.ResourcePods: *resource.NewQuantity(n, resource.DecimalSI)}
		if s.quota == "cpu" {
			hard = corev1.ResourceList{corev1.ResourceRequestsCPU: *resource.NewMilliQuantity(n*s.milliCPU, resource.DecimalSI)}
		}
		q := &corev1.ResourceQuota{ObjectMeta: metav1.ObjectMeta{Name: "quota", Namespace: s.ns}, Spec: corev1.ResourceQuotaSpec{Hard: hard}}
		if _, err := c.CoreV1().ResourceQuotas(s.ns).Create(ctx, q, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create quota: %w", err)
		}
	}
	return s.waitSettled(ctx, dc)
}

// waitSettled waits until the workload's status is current, every pod
// is bound (or unschedulable), Running and as Ready as its revision says,
// nothing terminates, budgets and quotas have a current status, and
// nothing has changed for 2 s.
func (s *updateScenario) waitSettled(ctx context.Context, dc *drainCluster) error {
	var last, why string
	stableSince := time.Now()
	err := pollUntil(ctx, 250*time.Millisecond, func(ctx context.Context) (bool, error) {
		state, reason := s.settledState(ctx, dc)
		if reason != "" || state != last {
			why, last, stableSince = reason, state, time.Now()
			return false, nil
		}
		return time.Since(stableSince) >= 2*time.Second, nil
	})
	if err != nil {
		return fmt.Errorf("scenario never settled (%s): %w", why, err)
	}
	return nil
}

func (s *updateScenario) settledState(ctx context.Context, dc *drainCluster) (string, string) {
	c := dc.cp.admin
	gen, rv, reason := s.workloadGeneration(ctx, c)
	if reason != "" {
		return "", reason
	}
	fp := rv
	pods, err := c.CoreV1().Pods(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err.Error()
	}
	if len(pods.Items) == 0 && gen {
		return "", "no pods yet"
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if why := s.podUnsettled(p, dc.kubelet.readiness(p)); why != "" {
			return "", why
		}
		fp += "," + p.Name + p.ResourceVersion
	}
	pdbs, err := c.PolicyV1().PodDisruptionBudgets(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err.Error()
	}
	for _, p := range pdbs.Items {
		if p.Status.ObservedGeneration != p.Generation {
			return "", "PDB status"
		}
		fp += fmt.Sprintf(",%s:%d", p.Name, p.Status.CurrentHealthy)
	}
	quotas, err := c.CoreV1().ResourceQuotas(s.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return "", err.Error()
	}
	for _, q := range quotas.Items {
		if len(q.Status.Hard) == 0 || len(q.Status.Used) == 0 {
			return "", "quota status"
		}
		fp += "," + q.ResourceVersion
	}
	return fp, ""
}

func (s *updateScenario) podUnsettled(p *corev1.Pod, r revisionReadiness) string {
	switch {
	case p.DeletionTimestamp != nil:
		return "pod " + p.Name + " terminating"
	case p.Spec.NodeName == "":
		if drainUnschedulable(p) {
			return ""
		}
		return "pod " + p.Name + " not scheduled"
	case p.Status.Phase != corev1.PodRunning:
		return "pod " + p.Name + " not running"
	}
	never := r.never || p.Labels[drainNeverReadyLabel] == "true"
	if drainPodReady(p) == never {
		return "pod " + p.Name + " readiness"
	}
	return ""
}

// workloadGeneration says whether the controller has observed the current
// generation, with the object's resourceVersion for the fingerprint.
func (s *updateScenario) workloadGeneration(ctx context.Context, c kubernetes.Interface) (bool, string, string) {
	var gen, observed int64
	var rv string
	switch s.kind {
	case "Deployment":
		d, err := c.AppsV1().Deployments(s.ns).Get(ctx, s.name, metav1.GetOptions{})
		if err != nil {
			return false, "", err.Error()
		}
		gen, observed, rv = d.Generation, d.Status.ObservedGeneration, d.ResourceVersion
	case "StatefulSet":
		d, err := c.AppsV1().StatefulSets(s.ns).Get(ctx, s.name, metav1.GetOptions{})
		if err != nil {
			return false, "", err.Error()
		}
		gen, observed, rv = d.Generation, d.Status.ObservedGeneration, d.ResourceVersion
		if int(d.Status.Replicas) != s.replicas {
			return false, "", "statefulset pods"
		}
	case "DaemonSet":
		d, err := c.AppsV1().DaemonSets(s.ns).Get(ctx, s.name, metav1.GetOptions{})
		if err != nil {
			return false, "", err.Error()
		}
		gen, observed, rv = d.Generation, d.Status.ObservedGeneration, d.ResourceVersion
		if int(d.Status.DesiredNumberScheduled) != len(s.nodes) || d.Status.CurrentNumberScheduled != d.Status.DesiredNumberScheduled {
			return false, "", "daemon pods"
		}
	}
	if observed < gen {
		return false, "", "status generation"
	}
	return true, rv, ""
}

// act is the rollout itself, as a user starts it: kubectl v1.37.1 as admin.
func (s *updateScenario) act(ctx context.Context, kubectl, kubeconfig string) (string, error) {
	if s.change == "desired" {
		return s.applyDesired(ctx, kubectl, kubeconfig) // desired_rollout_e2e_test.go
	}
	ref := strings.ToLower(s.kind) + "/" + s.name
	args := []string{"rollout", "restart", ref}
	if s.change == "image" {
		args = []string{"set", "image", ref, appContainer + "=" + updateImage}
	}
	args = append(args, "-n", s.ns, "--kubeconfig", kubeconfig)
	out, err := exec.CommandContext(ctx, kubectl, args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// save writes the cluster as the plugin reads it, for an offline repeat.
func (s *updateScenario) save(ctx context.Context, dc *drainCluster, kubectl string) string {
	out := filepath.Join(dc.cp.dir, s.ns+".yaml")
	cmd := exec.CommandContext(ctx, kubectl, "get", "nodes,pods,pdb,deploy,rs,sts,ds,controllerrevisions,resourcequotas", "-A", "-o", "yaml",
		"--kubeconfig", dc.cp.adminKubeconfig)
	b, err := cmd.Output()
	if err == nil {
		err = os.WriteFile(out, b, 0o600)
	}
	if err != nil {
		return "(not saved: " + err.Error() + ")"
	}
	return out
}

// tearDown removes the scenario's objects and nodes.
func (s *updateScenario) tearDown(ctx context.Context, c kubernetes.Interface) error {
	bg := metav1.DeleteOptions{PropagationPolicy: ptrTo(metav1.DeletePropagationBackground)}
	all := metav1.ListOptions{}
	_ = c.AppsV1().Deployments(s.ns).DeleteCollection(ctx, bg, all)
	_ = c.AppsV1().StatefulSets(s.ns).DeleteCollection(ctx, bg, all)
	_ = c.AppsV1().DaemonSets(s.ns).DeleteCollection(ctx, bg, all)
	_ = c.PolicyV1().PodDisruptionBudgets(s.ns).DeleteCollection(ctx, bg, all)
	_ = c.CoreV1().ResourceQuotas(s.ns).DeleteCollection(ctx, bg, all)
	ds := &drainScenario{ns: s.ns, nodes: s.nodes}
	return ds.tearDown(ctx, c)
}
