package runbook

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// costManagerConflicts warns when something other than a person's kubectl
// owns the pod-deletion-cost annotation of the workload's pods (Karpenter's
// PodDeletionCostManagement, community deletion-cost controllers): it
// rewrites the annotation, so steering annotations would not last.
func costManagerConflicts(s *snapshot.Snapshot, p *prediction.Prediction) []prediction.Conflict {
	byName := map[string]*corev1.Pod{}
	for _, pod := range s.Pods {
		byName[pod.Name] = pod
	}
	pods := map[string][]string{} // manager -> pods
	for _, pp := range p.Pods {
		pod := byName[pp.Name]
		if pod == nil {
			continue
		}
		for _, m := range CostManagers(pod) {
			if !isPerson(m) {
				pods[m] = append(pods[m], pod.Name)
			}
		}
	}
	managers := make([]string, 0, len(pods))
	for m := range pods {
		managers = append(managers, m)
	}
	sort.Strings(managers)
	var out []prediction.Conflict
	for _, m := range managers {
		names := pods[m]
		shown := names
		if len(shown) > 3 {
			shown = append(shown[:3:3], "...")
		}
		out = append(out, prediction.Conflict{Kind: "DeletionCost", Name: m, Message: fmt.Sprintf(
			"%s manages %s on %d pod(s) (%s): it rewrites the annotation, so steering annotations set by hand will be overwritten and the prediction can change when it does",
			m, engine.DeletionCostAnnotation, len(names), strings.Join(shown, ", "))})
	}
	return out
}

// CostManagers are the field managers that own the pod's pod-deletion-cost
// annotation, from its metadata.managedFields.
func CostManagers(pod *corev1.Pod) []string {
	var out []string
	for _, e := range pod.ManagedFields {
		if e.FieldsV1 == nil || len(e.FieldsV1.GetRawBytes()) == 0 {
			continue
		}
		var f struct {
			Metadata struct {
				Annotations map[string]json.RawMessage `json:"f:annotations"`
			} `json:"f:metadata"`
		}
		if json.Unmarshal(e.FieldsV1.GetRawBytes(), &f) != nil {
			continue
		}
		if _, ok := f.Metadata.Annotations["f:"+engine.DeletionCostAnnotation]; ok {
			out = append(out, e.Manager)
		}
	}
	return out
}

// isPerson: kubectl's own field managers (kubectl, kubectl-annotate,
// kubectl-edit, kubectl-client-side-apply, ...) stand for a person.
func isPerson(manager string) bool {
	return manager == "kubectl" || strings.HasPrefix(manager, "kubectl-")
}
