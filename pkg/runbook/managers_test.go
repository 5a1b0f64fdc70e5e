package runbook

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// Pods as `kubectl get pod -o json --show-managed-fields` prints them.
const managedPods = `[
{"metadata":{"name":"web-1","namespace":"shop","annotations":{"controller.kubernetes.io/pod-deletion-cost":"-100"},
 "managedFields":[
  {"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1","time":"2025-01-01T10:00:00Z","fieldsType":"FieldsV1",
   "fieldsV1":{"f:metadata":{"f:generateName":{},"f:labels":{".":{},"f:app":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"5f0c\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:name":{}}}}}},
  {"manager":"kubelet","operation":"Update","apiVersion":"v1","time":"2025-01-01T10:00:05Z","fieldsType":"FieldsV1","subresource":"status",
   "fieldsV1":{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:phase":{}}}},
  {"manager":"karpenter","operation":"Update","apiVersion":"v1","time":"2025-01-01T11:00:00Z","fieldsType":"FieldsV1",
   "fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:controller.kubernetes.io/pod-deletion-cost":{}}}}}]}},
{"metadata":{"name":"web-2","namespace":"shop","annotations":{"controller.kubernetes.io/pod-deletion-cost":"5"},
 "managedFields":[
  {"manager":"kubectl-annotate","operation":"Update","apiVersion":"v1","time":"2025-01-01T11:00:00Z","fieldsType":"FieldsV1",
   "fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:controller.kubernetes.io/pod-deletion-cost":{}}}}}]}},
{"metadata":{"name":"web-3","namespace":"shop","annotations":{"controller.kubernetes.io/pod-deletion-cost":"0","team":"a"},
 "managedFields":[
  {"manager":"pod-deletion-cost-controller","operation":"Apply","apiVersion":"v1","time":"2025-01-01T11:00:00Z","fieldsType":"FieldsV1",
   "fieldsV1":{"f:metadata":{"f:annotations":{"f:controller.kubernetes.io/pod-deletion-cost":{}}}}},
  {"manager":"kubectl-client-side-apply","operation":"Update","apiVersion":"v1","time":"2025-01-01T09:00:00Z","fieldsType":"FieldsV1",
   "fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:team":{}}}}}]}},
{"metadata":{"name":"web-4","namespace":"shop","annotations":{"controller.kubernetes.io/pod-deletion-cost":"7"},
 "managedFields":[
  {"manager":"karpenter","operation":"Update","apiVersion":"v1","time":"2025-01-01T11:00:00Z","fieldsType":"FieldsV1",
   "fieldsV1":{"f:metadata":{"f:annotations":{"f:controller.kubernetes.io/pod-deletion-cost":{}}}}}]}}
]`

func TestCostManagersFromManagedFields(t *testing.T) {
	var pods []*corev1.Pod
	if err := json.Unmarshal([]byte(managedPods), &pods); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"web-1": "karpenter", "web-2": "kubectl-annotate", "web-3": "pod-deletion-cost-controller", "web-4": "karpenter"}
	for _, p := range pods {
		if got := strings.Join(CostManagers(p), ","); got != want[p.Name] {
			t.Errorf("%s: managers %q, want %q", p.Name, got, want[p.Name])
		}
	}

	// web-4 is not the workload's: it is not counted.
	pred := &prediction.Prediction{Pods: []prediction.Pod{{Name: "web-1"}, {Name: "web-2"}, {Name: "web-3"}}}
	got := costManagerConflicts(&snapshot.Snapshot{Pods: pods}, pred)
	if len(got) != 2 {
		t.Fatalf("conflicts %+v, want karpenter and pod-deletion-cost-controller", got)
	}
	if got[0].Name != "karpenter" || got[0].Kind != "DeletionCost" || !strings.Contains(got[0].Message, "1 pod(s) (web-1)") || !strings.Contains(got[0].Message, "will be overwritten") {
		t.Errorf("karpenter conflict %+v", got[0])
	}
	if got[1].Name != "pod-deletion-cost-controller" || !strings.Contains(got[1].Message, "web-3") {
		t.Errorf("second conflict %+v", got[1])
	}

	// Through Analyze, as the plugin runs it.
	pred = &prediction.Prediction{Pods: []prediction.Pod{{Name: "web-1", Fate: prediction.FateDelete}}}
	Analyze(&snapshot.Snapshot{Pods: pods}, snapshot.Ref{Kind: snapshot.Deployment, Namespace: "shop", Name: "web"}, pred)
	found := false
	for _, c := range pred.Conflicts {
		found = found || c.Name == "karpenter"
	}
	if !found {
		t.Errorf("Analyze did not warn: %+v", pred.Conflicts)
	}
}

func TestNoManagedFieldsNoWarning(t *testing.T) {
	pod := &corev1.Pod{}
	pod.Name = "a"
	pod.Annotations = map[string]string{engine.DeletionCostAnnotation: "3"}
	if got := costManagerConflicts(&snapshot.Snapshot{Pods: []*corev1.Pod{pod}}, &prediction.Prediction{Pods: []prediction.Pod{{Name: "a"}}}); len(got) != 0 {
		t.Errorf("%+v", got)
	}
}
