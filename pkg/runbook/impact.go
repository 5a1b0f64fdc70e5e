// Package runbook adds what an operator needs beside the victims: where the
// replicas are afterwards, what will fight the change, and how to steer the
// controller to other victims with pod-deletion-cost annotations.
package runbook

import (
	"fmt"
	"math"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// ZoneLabel is the well-known topology label.
const ZoneLabel = "topology.kubernetes.io/zone"

// Analyze fills p.Impact and p.Conflicts from the snapshot.
func Analyze(s *snapshot.Snapshot, ref snapshot.Ref, p *prediction.Prediction) {
	p.Impact = impact(s, p)
	p.Conflicts = append(p.Conflicts, hpaConflicts(s, ref, p)...)
	p.Conflicts = append(p.Conflicts, pdbConflicts(s, p)...)
	p.Conflicts = append(p.Conflicts, costManagerConflicts(s, p)...)
	for _, pod := range p.Pods {
		switch {
		case pod.Fate == prediction.FateTerminating:
			p.Conflicts = append(p.Conflicts, prediction.Conflict{Kind: "Terminating", Name: pod.Name,
				Message: fmt.Sprintf("%s is already terminating: it is not counted and is never chosen again", pod.Name)})
		case pod.DeletionCostInvalid:
			p.Conflicts = append(p.Conflicts, prediction.Conflict{Kind: "DeletionCost", Name: pod.Name,
				Message: fmt.Sprintf("%s has an invalid pod-deletion-cost %q: the controller reads it as 0", pod.Name, pod.DeletionCostRaw)})
		}
	}
}

// counted: pods that are replicas now (kept or deleted by this scale-in).
func counted(pod prediction.Pod) bool {
	return pod.Fate == prediction.FateDelete || pod.Fate == prediction.FateKeep || pod.Fate == prediction.FateBlocked
}

func impact(s *snapshot.Snapshot, p *prediction.Prediction) *prediction.Impact {
	zoneOf := map[string]string{}
	for _, n := range s.Nodes {
		zoneOf[n.Name] = n.Labels[ZoneLabel]
	}
	im := &prediction.Impact{ZonesKnown: len(s.Nodes) > 0}
	nodes := map[string]*prediction.Placement{}
	zones := map[string]*prediction.Placement{}
	add := func(m map[string]*prediction.Placement, key string, gone bool) {
		pl := m[key]
		if pl == nil {
			pl = &prediction.Placement{Name: key}
			m[key] = pl
		}
		pl.Before++
		if !gone {
			pl.After++
		}
	}
	for _, pod := range p.Pods {
		if !counted(pod) {
			continue
		}
		node := pod.Node
		if node == "" {
			node = "<unassigned>"
		}
		gone := pod.Fate == prediction.FateDelete
		add(nodes, node, gone)
		if im.ZonesKnown && pod.Node != "" {
			z := zoneOf[pod.Node]
			if z == "" {
				z = "<no zone>"
			}
			add(zones, z, gone)
		}
	}
	im.Nodes = sorted(nodes)
	im.Zones = sorted(zones)
	for _, list := range [][]prediction.Placement{im.Nodes, im.Zones} {
		for i := range list {
			list[i].Emptied = list[i].Before > 0 && list[i].After == 0 && !strings.HasPrefix(list[i].Name, "<")
		}
	}
	for _, z := range im.Zones {
		if z.Emptied && z.Name != "<no zone>" {
			p.Warnings = append(p.Warnings, fmt.Sprintf("zone %s loses all %d of its replicas", z.Name, z.Before))
		}
	}
	return im
}

func sorted(m map[string]*prediction.Placement) []prediction.Placement {
	out := make([]prediction.Placement, 0, len(m))
	for _, v := range m {
		out = append(out, *v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func hpaConflicts(s *snapshot.Snapshot, ref snapshot.Ref, p *prediction.Prediction) []prediction.Conflict {
	var out []prediction.Conflict
	for _, h := range s.HPAs {
		t := h.Spec.ScaleTargetRef
		if h.Namespace != ref.Namespace || t.Kind != ref.Kind || t.Name != ref.Name {
			continue
		}
		min := int32(1)
		if h.Spec.MinReplicas != nil {
			min = *h.Spec.MinReplicas
		}
		msg := fmt.Sprintf("HorizontalPodAutoscaler %s manages %s/%s (min %d, max %d): it will override a manual scale", h.Name, t.Kind, t.Name, min, h.Spec.MaxReplicas)
		switch {
		case p.DesiredReplicas < min:
			msg = fmt.Sprintf("HorizontalPodAutoscaler %s has minReplicas %d above %d: it will scale back up to at least %d", h.Name, min, p.DesiredReplicas, min)
		case p.DesiredReplicas > h.Spec.MaxReplicas:
			msg = fmt.Sprintf("HorizontalPodAutoscaler %s has maxReplicas %d below %d: it will scale down to %d", h.Name, h.Spec.MaxReplicas, p.DesiredReplicas, h.Spec.MaxReplicas)
		}
		out = append(out, prediction.Conflict{Kind: "HorizontalPodAutoscaler", Name: h.Name, Message: msg})
	}
	return out
}

// pdbConflicts: a controller's scale-in deletes pods directly and ignores
// PodDisruptionBudgets; show which budgets end up below their minimum.
func pdbConflicts(s *snapshot.Snapshot, p *prediction.Prediction) []prediction.Conflict {
	byName := map[string]*corev1.Pod{}
	for _, pod := range s.Pods {
		byName[pod.Name] = pod
	}
	fate := map[string]string{}
	for _, pod := range p.Pods {
		fate[pod.Name] = pod.Fate
	}
	var out []prediction.Conflict
	for _, b := range s.PDBs {
		if b.Namespace != p.Target.Namespace || b.Spec.Selector == nil {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(b.Spec.Selector)
		if err != nil || sel.Empty() {
			continue
		}
		expected, healthyBefore, healthyAfter, ours := 0, 0, 0, 0
		for _, pod := range s.Pods {
			if pod.Namespace != b.Namespace || !sel.Matches(labels.Set(pod.Labels)) || pod.DeletionTimestamp != nil {
				continue
			}
			if pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
				continue
			}
			expected++
			healthy := podutils.IsPodReady(pod)
			if healthy {
				healthyBefore++
			}
			if _, ok := fate[pod.Name]; ok {
				ours++
			}
			if healthy && fate[pod.Name] != prediction.FateDelete {
				healthyAfter++
			}
		}
		if ours == 0 {
			continue
		}
		// After the scale-in the workload expects fewer pods.
		expectedAfter := expected - countFate(p, prediction.FateDelete)
		need, ok := minAvailable(b.Spec.MinAvailable, b.Spec.MaxUnavailable, expectedAfter)
		if !ok {
			continue
		}
		msg := fmt.Sprintf("PodDisruptionBudget %s: %d healthy pods after the scale-in, it asks for at least %d", b.Name, healthyAfter, need)
		if healthyAfter < need {
			msg += " — below its minimum; the controller's deletions ignore budgets (no eviction), but drains and evictions will be blocked"
			out = append(out, prediction.Conflict{Kind: "PodDisruptionBudget", Name: b.Name, Message: msg})
		} else {
			out = append(out, prediction.Conflict{Kind: "PodDisruptionBudget", Name: b.Name, Message: msg + " (satisfied; scale-in deletions ignore budgets in any case)"})
		}
	}
	return out
}

func countFate(p *prediction.Prediction, f string) int {
	n := 0
	for _, pod := range p.Pods {
		if pod.Fate == f {
			n++
		}
	}
	return n
}

// minAvailable resolves a budget like the disruption controller: percent of
// expected pods, minAvailable rounded up, maxUnavailable rounded up too.
func minAvailable(minA, maxU *intstr.IntOrString, expected int) (int, bool) {
	switch {
	case minA != nil:
		v, err := intstr.GetScaledValueFromIntOrPercent(minA, expected, true)
		return v, err == nil
	case maxU != nil:
		v, err := intstr.GetScaledValueFromIntOrPercent(maxU, expected, true)
		return int(math.Max(0, float64(expected-v))), err == nil
	}
	return 0, false
}
