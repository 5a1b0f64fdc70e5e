package source

import (
	"testing"

	"github.com/scale-preview/scale-preview/pkg/runbook"
)

// `kubectl get deploy,hpa,pods -o yaml --show-managed-fields`: the
// autoscaler (v2, with its status) and the pods' managedFields survive.
const hpaFile = `apiVersion: v1
kind: List
items:
- apiVersion: autoscaling/v2
  kind: HorizontalPodAutoscaler
  metadata: {name: web, namespace: shop}
  spec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    minReplicas: 2
    maxReplicas: 10
    metrics:
    - type: Resource
      resource: {name: cpu, target: {type: Utilization, averageUtilization: 60}}
  status:
    currentReplicas: 4
    desiredReplicas: 4
    currentMetrics:
    - type: Resource
      resource: {name: cpu, current: {averageUtilization: 21, averageValue: 105m}}
- apiVersion: autoscaling/v1
  kind: HorizontalPodAutoscaler
  metadata: {name: old, namespace: shop}
  spec:
    scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    maxReplicas: 3
- apiVersion: v1
  kind: Pod
  metadata:
    name: web-1
    namespace: shop
    annotations: {controller.kubernetes.io/pod-deletion-cost: "-5"}
    managedFields:
    - manager: karpenter
      operation: Update
      apiVersion: v1
      fieldsType: FieldsV1
      fieldsV1: {"f:metadata": {"f:annotations": {".": {}, "f:controller.kubernetes.io/pod-deletion-cost": {}}}}
`

func TestReadFileAutoscalerAndManagedFields(t *testing.T) {
	s := readOK(t, "-", []byte(hpaFile), "default")
	if len(s.HPAs) != 1 || s.HPAs[0].Name != "web" || len(s.HPAs[0].Status.CurrentMetrics) != 1 {
		t.Fatalf("hpas %+v (only the autoscaling/v2 one carries metrics)", s.HPAs)
	}
	if u := s.HPAs[0].Status.CurrentMetrics[0].Resource.Current.AverageUtilization; u == nil || *u != 21 {
		t.Errorf("current utilization %v", u)
	}
	if len(s.Pods) != 1 {
		t.Fatalf("pods %d", len(s.Pods))
	}
	if m := runbook.CostManagers(s.Pods[0]); len(m) != 1 || m[0] != "karpenter" {
		t.Errorf("cost managers %v", m)
	}
}
