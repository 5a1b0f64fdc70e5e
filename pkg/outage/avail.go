package outage

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/disruption"
)

// availability: pods on a failed node are unavailable from T=0, whatever
// their fate; a replacement counts from when it is placed (startup is not
// modelled). Taint eviction is a plain DELETE: budgets do not hold it back.
func (s *sim) availability() {
	restored := s.restoreTimes()
	budgets := s.budgets(restored)
	s.workloads(budgets)
}

// restoreTimes are, per replaced pod, when its placed replacement counts
// (the end of its window).
func (s *sim) restoreTimes() map[string]float64 {
	out := map[string]float64{}
	for _, r := range s.res.Replacements {
		if r.Node != "" {
			out[r.For] = r.At.Max
		}
	}
	return out
}

// budgets computes each touched budget's status before the failure and
// right after it (pkg/disruption), and when it is met again.
func (s *sim) budgets(restored map[string]float64) map[string]*Budget {
	out := map[string]*Budget{}
	for _, b := range disruption.Parse(s.in.PDBs) {
		if b.Selector == nil {
			continue
		}
		var before, after []*corev1.Pod
		var lost []string
		for _, p := range s.in.Pods {
			if !b.EvictionSelects(p) {
				continue
			}
			before = append(before, p)
			if s.failed[p.Spec.NodeName] {
				lost = append(lost, p.Namespace+"/"+p.Name)
				p = notReady(p)
			}
			after = append(after, p)
		}
		if len(lost) == 0 {
			continue
		}
		st0 := disruption.ComputeSelected(b, before, s.owners, s.in.Now)
		st1 := disruption.ComputeSelected(b, after, s.owners, s.in.Now)
		bu := &Budget{Name: b.Name(), DesiredHealthy: st0.DesiredHealthy, HealthyMin: st1.CurrentHealthy}
		if st1.CurrentHealthy < st0.DesiredHealthy {
			bu.Broken, bu.BrokenFrom = true, ptr(0.0)
			bu.BrokenUntil = until(lost, restored, int(st0.DesiredHealthy-st1.CurrentHealthy))
		}
		if st0.Unknown != "" {
			s.res.Warnings = append(s.res.Warnings, st0.Unknown)
		}
		out[bu.Name] = bu
		s.res.Budgets = append(s.res.Budgets, *bu)
	}
	return out
}

// until is when need of the lost pods' replacements count again; nil
// when too few are ever placed.
func until(lost []string, restored map[string]float64, need int) *float64 {
	var times []float64
	for _, p := range lost {
		if t, ok := restored[p]; ok {
			times = append(times, t)
		}
	}
	if len(times) < need {
		return nil
	}
	slices.Sort(times)
	return ptr(times[need-1])
}

func ptr[T any](v T) *T { return &v }

// notReady is p as the failure leaves it: Ready=False (the node lifecycle
// controller marks it so; it serves nothing from T=0).
func notReady(p *corev1.Pod) *corev1.Pod {
	cp := p.DeepCopy()
	for i, c := range cp.Status.Conditions {
		if c.Type == corev1.PodReady {
			cp.Status.Conditions[i].Status = corev1.ConditionFalse
		}
	}
	return cp
}

// workloads: each owner with pods on a failed node, its ready pods
// elsewhere (the least it has), and the budgets over its pods.
func (s *sim) workloads(budgets map[string]*Budget) {
	type acc struct {
		w     Workload
		ns    string
		touch bool
	}
	byName := map[string]*acc{}
	var order []string
	for _, p := range s.in.Pods {
		ref := metav1.GetControllerOfNoCopy(p)
		if ref == nil || p.DeletionTimestamp != nil || disruption.Finished(p) {
			continue
		}
		owner := disruption.OwnerName(ref, s.owners.Get(p.Namespace, ref))
		key := p.Namespace + "/" + owner
		a := byName[key]
		if a == nil {
			kind, name, _ := strings.Cut(owner, "/")
			a = &acc{w: Workload{Kind: kind, Name: p.Namespace + "/" + name}, ns: p.Namespace}
			byName[key] = a
			order = append(order, key)
		}
		a.w.Replicas++
		if s.failed[p.Spec.NodeName] {
			a.touch = true
		} else if disruption.IsReady(p) {
			a.w.AvailableMin++
		}
	}
	for _, key := range order {
		a := byName[key]
		if !a.touch {
			continue
		}
		a.w.ReachesZero = a.w.AvailableMin == 0
		s.budgetsOf(&a.w, a.ns, budgets)
		if a.w.ReachesZero {
			s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("%s %s has no available pod from T=0", a.w.Kind, a.w.Name))
		}
		s.res.Workloads = append(s.res.Workloads, a.w)
	}
}

// budgetsOf names the budgets over w's pods on failed nodes and when the
// broken ones are met again (nil: never, by what the model sees).
func (s *sim) budgetsOf(w *Workload, ns string, budgets map[string]*Budget) {
	owner := w.Kind + "/" + strings.TrimPrefix(w.Name, ns+"/")
	broken := 0
	for _, b := range disruption.Parse(s.in.PDBs) {
		bu := budgets[b.Name()]
		if bu == nil {
			continue
		}
		for i, p := range s.podObjs {
			if s.res.Pods[i].Owner != owner || p.Namespace != ns || !b.EvictionSelects(p) {
				continue
			}
			w.Budgets = append(w.Budgets, bu.Name)
			if bu.Broken {
				broken++
				w.BudgetBroken, w.BrokenFrom = true, ptr(0.0)
				w.BrokenUntil = later(w.BrokenUntil, bu.BrokenUntil, broken == 1)
			}
			break
		}
	}
}

// later is the later of two ends, nil (never) winning; first: a is unset.
func later(a, b *float64, first bool) *float64 {
	if first {
		return b
	}
	if a == nil || b == nil {
		return nil
	}
	return ptr(max(*a, *b))
}
