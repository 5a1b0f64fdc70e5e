package outage

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/scale-preview/scale-preview/pkg/disruption"
)

// availability: pods on a failed node are unavailable from T=0, whatever
// their fate; a replacement counts from when it is placed (startup is not
// modelled). Taint eviction is a plain DELETE: budgets do not hold it back.
func (s *sim) availability(states []budgetState) {
	restored := s.restoreTimes()
	budgets, owners := s.budgets(states, restored)
	s.workloads(budgets, owners)
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

// budgetState is one budget that selects pods on the failed nodes: its
// status before the failure and right after it (pkg/disruption), the
// pods it loses and their owners (namespace/Kind/name).
type budgetState struct {
	b        *disruption.Budget
	st0, st1 disruption.Status
	lost     []string
	owners   map[string]bool
}

// budgetStates computes the budgets' states in a goroutine of their own,
// beside the replacements' placement: they read only the input and the
// pods' owners, copied here, which nothing changes.
func (s *sim) budgetStates() <-chan []budgetState {
	owners := make(map[*corev1.Pod]string, len(s.podObjs))
	for i, p := range s.podObjs {
		owners[p] = s.res.Pods[i].Owner
	}
	out := make(chan []budgetState, 1)
	go func() { out <- s.computeBudgetStates(owners) }()
	return out
}

// computeBudgetStates: owners are the owners of the pods on failed nodes.
func (s *sim) computeBudgetStates(owners map[*corev1.Pod]string) []budgetState {
	var out []budgetState
	parsed := disruption.Parse(s.in.PDBs)
	selected := s.selectedBy(parsed)
	for bi, b := range parsed {
		if b.Selector == nil {
			continue
		}
		var before, after []*corev1.Pod
		bs := budgetState{b: b, owners: map[string]bool{}}
		for _, p := range selected[bi] {
			before = append(before, p)
			if s.failed[p.Spec.NodeName] {
				bs.lost = append(bs.lost, p.Namespace+"/"+p.Name)
				if owner, ok := owners[p]; ok {
					bs.owners[p.Namespace+"/"+owner] = true
				}
				p = notReady(p)
			}
			after = append(after, p)
		}
		if len(bs.lost) == 0 {
			continue
		}
		bs.st0 = disruption.ComputeSelected(b, before, s.owners, s.in.Now)
		bs.st1 = disruption.ComputeSelected(b, after, s.owners, s.in.Now)
		out = append(out, bs)
	}
	return out
}

// budgets is each touched budget and when it is met again; owners are,
// per budget, the owners of the pods on failed nodes it selects.
func (s *sim) budgets(states []budgetState, restored map[string]float64) (map[string]*Budget, map[string]map[string]bool) {
	out, owners := map[string]*Budget{}, map[string]map[string]bool{}
	for _, bs := range states {
		bu := &Budget{Name: bs.b.Name(), DesiredHealthy: bs.st0.DesiredHealthy, HealthyMin: bs.st1.CurrentHealthy}
		if bs.st1.CurrentHealthy < bs.st0.DesiredHealthy {
			bu.Broken, bu.BrokenFrom = true, ptr(0.0)
			bu.BrokenUntil = until(bs.lost, restored, int(bs.st0.DesiredHealthy-bs.st1.CurrentHealthy))
		}
		if bs.st0.Unknown != "" {
			s.res.Warnings = append(s.res.Warnings, bs.st0.Unknown)
		}
		out[bu.Name], owners[bu.Name] = bu, bs.owners
		s.res.Budgets = append(s.res.Budgets, *bu)
	}
	return out, owners
}

// selectedBy is, per budget, the pods it selects (EvictionSelects), in
// input order. Each budget's selector is matched once per namespace and
// label map: pods of one workload share one map once read (pkg/source), so
// 150,000 pods take a few hundred matches per budget, not one per pod.
func (s *sim) selectedBy(budgets []*disruption.Budget) [][]*corev1.Pod {
	out := make([][]*corev1.Pod, len(budgets))
	byNs := map[string][]int{}
	for i, b := range budgets {
		if b.Selector != nil {
			byNs[b.PDB.Namespace] = append(byNs[b.PDB.Namespace], i)
		}
	}
	type labelsOf struct {
		ns  string
		ptr uintptr // the map's identity; 0 for nil (no labels)
	}
	memo := map[labelsOf][]int{}
	for _, p := range s.in.Pods {
		in := byNs[p.Namespace]
		if len(in) == 0 {
			continue
		}
		k := labelsOf{p.Namespace, reflect.ValueOf(p.Labels).Pointer()}
		hits, ok := memo[k]
		if !ok {
			for _, i := range in {
				if budgets[i].EvictionSelects(p) {
					hits = append(hits, i)
				}
			}
			memo[k] = hits
		}
		for _, i := range hits {
			out[i] = append(out[i], p)
		}
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
// controller marks it so; it serves nothing from T=0). A shallow copy with
// its own conditions: nothing else of p changes (a zone's 50,000 pods).
func notReady(p *corev1.Pod) *corev1.Pod {
	cp := *p
	cp.Status.Conditions = slices.Clone(p.Status.Conditions)
	for i, c := range cp.Status.Conditions {
		if c.Type == corev1.PodReady {
			cp.Status.Conditions[i].Status = corev1.ConditionFalse
		}
	}
	return &cp
}

// workloads: each owner with pods on a failed node, its ready pods
// elsewhere (the least it has), and the budgets over its pods.
func (s *sim) workloads(budgets map[string]*Budget, owners map[string]map[string]bool) {
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
		s.budgetsOf(&a.w, a.ns, budgets, owners)
		if a.w.ReachesZero {
			s.res.Warnings = append(s.res.Warnings, fmt.Sprintf("%s %s has no available pod from T=0", a.w.Kind, a.w.Name))
		}
		s.res.Workloads = append(s.res.Workloads, a.w)
	}
}

// budgetsOf names the budgets over w's pods on failed nodes and when the
// broken ones are met again (nil: never, by what the model sees).
func (s *sim) budgetsOf(w *Workload, ns string, budgets map[string]*Budget, owners map[string]map[string]bool) {
	owner := ns + "/" + w.Kind + "/" + strings.TrimPrefix(w.Name, ns+"/")
	broken := 0
	for _, b := range disruption.Parse(s.in.PDBs) {
		bu := budgets[b.Name()]
		if bu == nil || !owners[b.Name()][owner] {
			continue
		}
		w.Budgets = append(w.Budgets, bu.Name)
		if bu.Broken {
			broken++
			w.BudgetBroken, w.BrokenFrom = true, ptr(0.0)
			w.BrokenUntil = later(w.BrokenUntil, bu.BrokenUntil, broken == 1)
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
