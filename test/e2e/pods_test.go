package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

const (
	deletionCostAnnotation = "controller.kubernetes.io/pod-deletion-cost"
	// appliedAnnotation marks pods whose hand-written state was applied.
	appliedAnnotation = "e2e.scale-preview.io/state"
	appContainer      = "app"
	sidecarContainer  = "sidecar"
)

// podTemplate is a minimal pod template. Images are never pulled: there is
// no kubelet.
func podTemplate(labels map[string]string, sidecar bool) corev1.PodTemplateSpec {
	spec := corev1.PodSpec{
		Containers: []corev1.Container{{Name: appContainer, Image: "registry.invalid/app:1"}},
	}
	if sidecar {
		spec.InitContainers = []corev1.Container{{
			Name: sidecarContainer, Image: "registry.invalid/sidecar:1",
			RestartPolicy: ptrTo(corev1.ContainerRestartPolicyAlways),
		}}
	}
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}
}

// podState is what the suite writes onto a pod in place of a kubelet.
type podState struct {
	Node     string          // "" leaves the pod unbound
	Phase    corev1.PodPhase // Pending or Running
	Ready    bool
	ReadyAgo time.Duration // lastTransitionTime of the Ready condition = now - ReadyAgo
	Restarts int32         // restartCount of the app container
	Sidecar  int32         // restartCount of the sidecar (when the pod has one)
	Cost     string        // deletion-cost annotation; "" = none
}

func (s podState) String() string {
	var b strings.Builder
	node := s.Node
	if node == "" {
		node = "<unbound>"
	}
	fmt.Fprintf(&b, "%s %s", node, s.Phase)
	if s.Ready {
		fmt.Fprintf(&b, " ready %s ago", fmtAge(s.ReadyAgo))
	} else {
		b.WriteString(" not-ready")
	}
	if s.Restarts > 0 {
		fmt.Fprintf(&b, " restarts=%d", s.Restarts)
	}
	if s.Sidecar > 0 {
		fmt.Fprintf(&b, " sidecar-restarts=%d", s.Sidecar)
	}
	if s.Cost != "" {
		fmt.Fprintf(&b, " cost=%s", s.Cost)
	}
	return b.String()
}

func fmtAge(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%.1fd", d.Hours()/24)
	case d >= time.Hour:
		return fmt.Sprintf("%.1fh", d.Hours())
	default:
		return d.Round(time.Second).String()
	}
}

func running(node string, readyAgo time.Duration) podState {
	return podState{Node: node, Phase: corev1.PodRunning, Ready: true, ReadyAgo: readyAgo}
}

func notReady(node string) podState {
	return podState{Node: node, Phase: corev1.PodRunning, Ready: false, ReadyAgo: time.Minute}
}

func pending(node string) podState {
	return podState{Node: node, Phase: corev1.PodPending}
}

func (s podState) withRestarts(n int32) podState { s.Restarts = n; return s }
func (s podState) withSidecar(n int32) podState  { s.Sidecar = n; return s }
func (s podState) withCost(c string) podState    { s.Cost = c; return s }

// bindPod assigns a pod to a node through the pods/binding subresource,
// like the scheduler does. No Node object is needed.
func bindPod(ctx context.Context, c kubernetes.Interface, ns, name, node string) error {
	b := &corev1.Binding{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Target:     corev1.ObjectReference{Kind: "Node", Name: node},
	}
	return c.CoreV1().Pods(ns).Bind(ctx, b, metav1.CreateOptions{})
}

// annotatePod merges annotations into a pod.
func annotatePod(ctx context.Context, c kubernetes.Interface, ns, name string, ann map[string]string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	if err != nil {
		return err
	}
	_, err = c.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// applyPodState annotates, binds and writes the status of one pod, playing
// scheduler and kubelet. ref is the "now" that ReadyAgo is relative to.
func applyPodState(ctx context.Context, c kubernetes.Interface, pod *corev1.Pod, st podState, ref time.Time) error {
	ann := map[string]string{appliedAnnotation: st.String()}
	if st.Cost != "" {
		ann[deletionCostAnnotation] = st.Cost
	}
	if err := annotatePod(ctx, c, pod.Namespace, pod.Name, ann); err != nil {
		return fmt.Errorf("annotate %s: %w", pod.Name, err)
	}
	if st.Node != "" && pod.Spec.NodeName == "" {
		if err := bindPod(ctx, c, pod.Namespace, pod.Name, st.Node); err != nil {
			return fmt.Errorf("bind %s to %s: %w", pod.Name, st.Node, err)
		}
	}
	return setPodStatus(ctx, c, pod.Namespace, pod.Name, st, ref)
}

// setPodStatus writes phase, Ready/ContainersReady conditions and container
// statuses through the pods/status subresource.
func setPodStatus(ctx context.Context, c kubernetes.Interface, ns, name string, st podState, ref time.Time) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := c.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		phase := st.Phase
		if phase == "" {
			phase = corev1.PodPending
		}
		pod.Status.Phase = phase
		readyStatus := corev1.ConditionFalse
		if st.Ready {
			readyStatus = corev1.ConditionTrue
		}
		transition := metav1.NewTime(ref.Add(-st.ReadyAgo))
		var conds []corev1.PodCondition
		for _, cond := range pod.Status.Conditions {
			if cond.Type != corev1.PodReady && cond.Type != corev1.ContainersReady {
				conds = append(conds, cond)
			}
		}
		if pod.Spec.NodeName != "" || phase == corev1.PodRunning {
			conds = append(conds,
				corev1.PodCondition{Type: corev1.ContainersReady, Status: readyStatus, LastTransitionTime: transition},
				corev1.PodCondition{Type: corev1.PodReady, Status: readyStatus, LastTransitionTime: transition},
			)
		}
		pod.Status.Conditions = conds
		started := metav1.NewTime(ref.Add(-st.ReadyAgo - time.Second))
		state := func() corev1.ContainerState {
			if phase == corev1.PodRunning {
				return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}
			}
			return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ContainerCreating"}}
		}
		pod.Status.ContainerStatuses = nil
		for _, ctr := range pod.Spec.Containers {
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: ctr.Name, Image: ctr.Image, ImageID: "", Ready: st.Ready,
				RestartCount: st.Restarts, State: state(), Started: ptrTo(phase == corev1.PodRunning),
			})
		}
		pod.Status.InitContainerStatuses = nil
		for _, ctr := range pod.Spec.InitContainers {
			pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, corev1.ContainerStatus{
				Name: ctr.Name, Image: ctr.Image, Ready: phase == corev1.PodRunning,
				RestartCount: st.Sidecar, State: state(), Started: ptrTo(phase == corev1.PodRunning),
			})
		}
		if pod.Spec.NodeName != "" {
			pod.Status.HostIP = "127.0.0.1"
		}
		_, err = c.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	})
}

// forceDelete removes a pod at once, as a kubelet would after termination.
func forceDelete(ctx context.Context, c kubernetes.Interface, ns, name string) error {
	return c.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: ptrTo(int64(0))})
}

func isTerminating(p *corev1.Pod) bool { return p.DeletionTimestamp != nil }

func isActive(p *corev1.Pod) bool {
	return p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed && p.DeletionTimestamp == nil
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func controllerUID(p metav1.Object) types.UID {
	if ref := metav1.GetControllerOf(p); ref != nil {
		return ref.UID
	}
	return ""
}

// statefulOrdinal parses the trailing ordinal of a StatefulSet pod name.
func statefulOrdinal(name string) int {
	i := strings.LastIndex(name, "-")
	if i < 0 {
		return -1
	}
	n, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil {
		return -1
	}
	return int(n)
}

// sortPodsForStates orders pods so that scenario states can be given by
// index: StatefulSet pods by ordinal, other pods by name (their names are
// random, so which pod gets which state is random too).
func sortPodsForStates(pods []*corev1.Pod, stateful bool) {
	sort.Slice(pods, func(i, j int) bool {
		if stateful {
			return statefulOrdinal(pods[i].Name) < statefulOrdinal(pods[j].Name)
		}
		return pods[i].Name < pods[j].Name
	})
}

// describePod is a one-line summary used in the scenario log.
func describePod(p *corev1.Pod) string {
	var b strings.Builder
	node := p.Spec.NodeName
	if node == "" {
		node = "<unbound>"
	}
	fmt.Fprintf(&b, "%-28s uid=%.8s node=%-9s phase=%-7s ready=%-5v", p.Name, p.UID, node, p.Status.Phase, isReady(p))
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			fmt.Fprintf(&b, " readySince=%s", c.LastTransitionTime.UTC().Format(time.RFC3339))
		}
	}
	var restarts int32
	for _, cs := range p.Status.ContainerStatuses {
		restarts = max(restarts, cs.RestartCount)
	}
	if restarts > 0 {
		fmt.Fprintf(&b, " restarts=%d", restarts)
	}
	for _, cs := range p.Status.InitContainerStatuses {
		if cs.RestartCount > 0 {
			fmt.Fprintf(&b, " sidecarRestarts=%d", cs.RestartCount)
		}
	}
	if v, ok := p.Annotations[deletionCostAnnotation]; ok {
		fmt.Fprintf(&b, " cost=%s", v)
	}
	fmt.Fprintf(&b, " created=%s", p.CreationTimestamp.UTC().Format("15:04:05"))
	if p.DeletionTimestamp != nil {
		b.WriteString(" TERMINATING")
	}
	if metav1.GetControllerOf(p) == nil {
		b.WriteString(" ORPHAN")
	}
	return b.String()
}
