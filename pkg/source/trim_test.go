package source

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/scale-preview/scale-preview/pkg/complete"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/runbook"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
	"github.com/scale-preview/scale-preview/pkg/workload"
)

// Trimming must not change any answer: every workload of every file the
// project's tests read, and of generated rich fleets, is predicted on the
// whole pods and on the trimmed ones, at several sizes and versions, and
// the full outputs (checks, prediction, runbook answers) must be equal.
func TestTrimKeepsEveryAnswer(t *testing.T) {
	var files []string
	for _, g := range []string{"testdata/*", "../../examples/*", "../cmd/testdata/*.yaml", "../cmd/testdata/*.json"} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	compared := 0
	for _, f := range files {
		if fi, err := os.Stat(f); err != nil || fi.IsDir() {
			continue
		}
		data, _ := os.ReadFile(f)
		whole, err := readUntrimmed(data)
		if err != nil || len(whole.Pods) == 0 {
			continue
		}
		compared += compareTrimmed(t, f, whole)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 40 {
		compared += compareTrimmed(t, fmt.Sprintf("generated fleet %d", i), richFleet(rng, 5+rng.IntN(40)))
	}
	if compared < 100 {
		t.Fatalf("only %d predictions compared", compared)
	}
	t.Logf("%d predictions compared", compared)
}

// readUntrimmed is the general reader without the trimming.
func readUntrimmed(data []byte) (*snapshot.Snapshot, error) {
	return readGeneral("-", data, "default", func(*corev1.Pod) {})
}

func compareTrimmed(t *testing.T, name string, whole *snapshot.Snapshot) int {
	t.Helper()
	trimmed := *whole
	trimmed.Pods = make([]*corev1.Pod, len(whole.Pods))
	for i, p := range whole.Pods {
		trimmed.Pods[i] = p.DeepCopy()
		trimPod(trimmed.Pods[i])
	}
	var refs []snapshot.Ref
	for _, d := range whole.Deployments {
		refs = append(refs, snapshot.Ref{Kind: snapshot.Deployment, Namespace: d.Namespace, Name: d.Name})
	}
	for _, r := range whole.ReplicaSets {
		refs = append(refs, snapshot.Ref{Kind: snapshot.ReplicaSet, Namespace: r.Namespace, Name: r.Name})
	}
	for _, r := range whole.ReplicationControllers {
		refs = append(refs, snapshot.Ref{Kind: snapshot.ReplicationController, Namespace: r.Namespace, Name: r.Name})
	}
	for _, r := range whole.StatefulSets {
		refs = append(refs, snapshot.Ref{Kind: snapshot.StatefulSet, Namespace: r.Namespace, Name: r.Name})
	}
	for _, h := range whole.HPAs {
		refs = append(refs, snapshot.Ref{Kind: snapshot.HorizontalPodAutoscaler, Namespace: h.Namespace, Name: h.Name})
	}
	n := 0
	for _, ref := range refs {
		for _, minor := range []int{27, 33, rules.Newest} {
			rs, err := rules.For(minor, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, replicas := range []int32{0, 1, 2, int32(len(whole.Pods) / 2), int32(len(whole.Pods)) - 1} {
				a, b := answer(whole, ref, replicas, rs), answer(&trimmed, ref, replicas, rs)
				if a != b {
					t.Errorf("%s, %s/%s to %d at 1.%d: trimming changed the answer\nwhole:   %s\ntrimmed: %s", name, ref.Kind, ref.Name, replicas, minor, a, b)
					return n
				}
				n++
			}
		}
	}
	return n
}

// answer is what the command computes from a snapshot, as JSON (or the error).
func answer(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, rs rules.RuleSet) string {
	check, err := complete.Check(s, ref, false)
	if err != nil {
		return "check: " + err.Error()
	}
	pred, err := workload.Predict(s, ref, replicas, workload.Options{Rules: rs, Now: sourcetest.Now, Seed: 1})
	if err != nil {
		return "predict: " + err.Error()
	}
	check.Apply(pred)
	runbook.Analyze(s, ref, pred)
	pred.Normalize()
	out, err := json.Marshal(pred)
	if err != nil {
		return "marshal: " + err.Error()
	}
	return string(out)
}

// richFleet is the generator's Deployment with pods varied in every field
// trimming touches: sidecars and their restarts, several and duplicate
// Ready conditions, deletion costs (some invalid) and who manages them,
// terminating, pending and finished pods, foreign labels.
func richFleet(rng *rand.Rand, n int) *snapshot.Snapshot {
	d, rs, pods := sourcetest.Objects(n)
	always := corev1.ContainerRestartPolicyAlways
	for _, p := range pods {
		if rng.IntN(3) == 0 {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}, {Name: "proxy", Image: "envoy", RestartPolicy: &always}}
			p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init", RestartCount: int32(rng.IntN(4))}, {Name: "proxy", RestartCount: int32(rng.IntN(4)), Image: "envoy"}}
		}
		switch rng.IntN(6) {
		case 0:
			p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": fmt.Sprint(rng.IntN(5) - 2), "other": "x"}
			p.ManagedFields = append(p.ManagedFields, metav1.ManagedFieldsEntry{Manager: "cost-controller", Operation: metav1.ManagedFieldsOperationUpdate,
				FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:controller.kubernetes.io/pod-deletion-cost":{}}}}`)})
		case 1:
			p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": "07"}
		case 2:
			at := metav1.NewTime(sourcetest.Now.Add(-time.Minute))
			p.DeletionTimestamp = &at
		case 3:
			p.Status.Phase = []corev1.PodPhase{corev1.PodPending, corev1.PodSucceeded, corev1.PodFailed, corev1.PodUnknown, ""}[rng.IntN(5)]
		case 4:
			if len(p.Status.Conditions) > 0 {
				c := corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "x", Message: "y",
					LastTransitionTime: metav1.NewTime(sourcetest.Now.Add(-time.Duration(rng.IntN(5000)) * time.Second))}
				p.Status.Conditions = append([]corev1.PodCondition{c}, p.Status.Conditions...)
			}
		}
		if rng.IntN(10) == 0 {
			p.Labels = map[string]string{"app": "other"}
		}
		if p.Status.StartTime != nil && rng.IntN(3) == 0 {
			start := metav1.NewTime(sourcetest.Now.Add(-time.Duration(rng.IntN(900)) * time.Second))
			p.Status.StartTime = &start
		}
		if rng.IntN(10) == 0 {
			p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "side", RestartCount: int32(rng.IntN(9))})
		}
	}
	s := &snapshot.Snapshot{Deployments: []*appsv1.Deployment{d}, ReplicaSets: []*appsv1.ReplicaSet{rs}, Pods: pods, ClaimsKnown: true}
	if rng.IntN(2) == 0 { // a CPU autoscaler reads readiness and start times
		util, minR := int32(10+rng.IntN(80)), int32(1)
		s.HPAs = []*autoscalingv2.HorizontalPodAutoscaler{{
			ObjectMeta: metav1.ObjectMeta{Name: "web-hpa", Namespace: d.Namespace},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name},
				MinReplicas:    &minR, MaxReplicas: int32(n),
				Metrics: []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
					Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(int32(50))}}}},
			},
			Status: autoscalingv2.HorizontalPodAutoscalerStatus{CurrentReplicas: int32(n), CurrentMetrics: []autoscalingv2.MetricStatus{{Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricStatus{Name: corev1.ResourceCPU, Current: autoscalingv2.MetricValueStatus{AverageUtilization: &util}}}}},
		}}
	}
	return s
}
