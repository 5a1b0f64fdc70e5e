package e2e

// Comparing: the prediction against the observed deletions, and the
// helpers scenarios use for their own expectations.

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func sortedByName(pods []*corev1.Pod) []*corev1.Pod {
	out := slices.Clone(pods)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// compare checks the plugin's prediction against what the controllers did.
func (r *scenarioRun) compare(t *testing.T) {
	p := r.pred
	// currentReplicas is the workload's spec.replicas before the scale.
	if err := p.validate(r.sc.kind, r.ns, workloadName, r.sc.replicas, r.sc.target); err != nil {
		t.Errorf("plugin JSON breaks the contract: %v", err)
	}
	deleted := map[string]bool{}
	for _, n := range r.deleted {
		deleted[n] = true
	}
	checked, disagree := 0, 0
	var msgs []string
	for _, pp := range p.Pods {
		if !pp.Certain {
			continue
		}
		before := r.beforeByN[pp.Name]
		var bad string
		switch pp.Fate {
		case "delete":
			if !deleted[pp.Name] {
				bad = "predicted delete (certain), but the controllers kept it"
			}
		case "keep", "blocked", "ignored":
			if deleted[pp.Name] {
				bad = fmt.Sprintf("predicted %s (certain), but the controllers deleted it", pp.Fate)
			}
		case "recreate":
			if !deleted[pp.Name] {
				bad = "predicted recreate (certain), but the controllers kept it"
			}
		case "terminating":
			if before == nil || !isTerminating(before) {
				bad = "predicted terminating, but it was not terminating before the scale"
			}
		default:
			// Not a contract fate (validate reports it); anything but
			// "delete" must at least mean "not deleted".
			if deleted[pp.Name] {
				bad = fmt.Sprintf("predicted %q (certain), but the controllers deleted it", pp.Fate)
			}
		}
		if before == nil && pp.Fate != "terminating" {
			bad = "plugin listed a pod that did not exist before the scale"
		}
		checked++
		if bad != "" {
			disagree++
			msgs = append(msgs, fmt.Sprintf("%s: %s (step %q, p=%v)", pp.Name, bad, pp.Step, deref(pp.DeleteProbability)))
		}
	}
	listed := map[string]bool{}
	for _, pp := range p.Pods {
		listed[pp.Name] = true
	}
	for _, n := range r.deleted {
		if !listed[n] {
			msgs = append(msgs, fmt.Sprintf("%s: deleted by the controllers but absent from the plugin's pods", n))
			disagree++
		}
	}
	allCertain := p.allCertain()
	if allCertain {
		got := slices.Clone(r.deleted)
		want := slices.Clone(p.Victims)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			disagree++
			msgs = append(msgs, fmt.Sprintf("all pods certain: victims %v, but the controllers deleted %v", p.Victims, r.deleted))
		} else if r.orderedReady() && !slices.Equal(r.deleted, p.Victims) {
			disagree++
			msgs = append(msgs, fmt.Sprintf("StatefulSet deletion order: predicted %v, observed %v", p.Victims, r.deleted))
		}
	}
	env.stats.add(r.sc.name, checked, disagree)
	if r.sc.kind == kindDeployment {
		r.checkRollout(t)
	}
	if disagree > 0 {
		t.Errorf("plugin disagrees with the real controllers (%d of %d certain pods, all-certain=%v):\n  %s",
			disagree, checked, allCertain, strings.Join(msgs, "\n  "))
		return
	}
	t.Logf("  AGREEMENT: %d/%d certain pods matched (all certain: %v; victims %v; observed %v)",
		checked, checked, allCertain, p.Victims, r.deleted)
}

// ---------------------------------------------------------------- helpers for expectations

// deletedIdx returns the state indexes of the deleted initial pods.
func (r *scenarioRun) deletedIdx() []int {
	var out []int
	for _, n := range r.deleted {
		if i := slices.Index(r.initial, n); i >= 0 {
			out = append(out, i)
		}
	}
	sort.Ints(out)
	return out
}

func expectDeletedIdx(want ...int) func(r *scenarioRun) error {
	return func(r *scenarioRun) error {
		got := r.deletedIdx()
		if !slices.Equal(got, want) || len(r.deleted) != len(want) {
			return fmt.Errorf("deleted pod indexes %v (%v), want %v", got, r.deleted, want)
		}
		return nil
	}
}

func expectDeletedOrder(names ...string) func(r *scenarioRun) error {
	return func(r *scenarioRun) error {
		if !slices.Equal(r.deleted, names) {
			return fmt.Errorf("deletion order %v, want %v", r.deleted, names)
		}
		return nil
	}
}

func expectDeletedSet(names ...string) func(r *scenarioRun) error {
	return func(r *scenarioRun) error {
		got := slices.Clone(r.deleted)
		slices.Sort(got)
		want := slices.Clone(names)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			return fmt.Errorf("deleted %v, want the set %v", r.deleted, want)
		}
		return nil
	}
}

// selectorMatches and mustJSON are harness helpers for scenario files.
//
//nolint:unused // kept for scenario files
//lint:ignore U1000 kept for scenario files
func selectorMatches(sel map[string]string, p *corev1.Pod) bool {
	return labels.SelectorFromSet(sel).Matches(labels.Set(p.Labels))
}

//nolint:unused // kept for scenario files
//lint:ignore U1000 kept for scenario files
func mustJSON(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
