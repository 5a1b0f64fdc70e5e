package runbook

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/workload"
)

// Request says which pods the operator wants to die or to keep.
type Request struct {
	Spare      []string
	Target     []string
	TargetNode string
}

// Empty reports whether nothing was asked.
func (r Request) Empty() bool { return len(r.Spare) == 0 && len(r.Target) == 0 && r.TargetNode == "" }

const steerNote = "Set the annotations before scaling; the controller reads them from its informer cache, so allow a moment. Best effort: if pods change in between, run the preview again. The plugin itself writes nothing."

// Steer finds the smallest set of pod-deletion-cost annotations that makes
// the controller delete exactly the wanted pods, and verifies it by running
// the prediction again with those annotations.
func Steer(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, o workload.Options, base *prediction.Prediction, req Request) *prediction.Steering {
	st := &prediction.Steering{Annotations: []prediction.Annotation{}, Commands: []string{}, Note: steerNote}
	fail := func(format string, a ...any) *prediction.Steering {
		st.Reason = fmt.Sprintf(format, a...)
		return st
	}
	if ref.Kind == snapshot.StatefulSet {
		return fail("a StatefulSet deletes by ordinal, highest first; deletion costs do not change it (scale to the ordinals you want to keep instead)")
	}
	if !o.Rules.DeletionCost {
		return fail("rule R4 (deletion cost) is off in these rules (PodDeletionCost=false), so no annotation can change the order")
	}
	d := len(base.Victims)
	if d == 0 {
		return fail("no pod would be deleted, so there is nothing to steer")
	}
	var order []prediction.Pod // candidates in predicted order
	for _, p := range base.Pods {
		if p.Fate == prediction.FateDelete || p.Fate == prediction.FateKeep {
			order = append(order, p)
		}
	}
	known := map[string]prediction.Pod{}
	for _, p := range order {
		known[p.Name] = p
	}
	for _, n := range append(slices.Clone(req.Spare), req.Target...) {
		if _, ok := known[n]; !ok {
			return fail("pod %s is not one of the candidates of this scale-in", n)
		}
	}
	if len(req.Target) > d {
		return fail("%d targets but the scale-in deletes only %d pods", len(req.Target), d)
	}
	wanted := wantedSet(order, d, req)
	if len(wanted) < d {
		return fail("only %d pods are not spared, but the scale-in deletes %d", len(wanted), d)
	}
	st.Wanted = wanted
	if why := impossible(order, wanted, base, o); why != "" {
		return fail("%s", why)
	}

	annot := map[string]int32{}
	try := func() (*prediction.Prediction, error) {
		return workload.Predict(annotated(s, annot), ref, replicas, o)
	}
	want := setOf(wanted)
	for round := 0; round < 2*len(order)+2; round++ {
		p, err := try()
		if err != nil {
			return fail("re-running the prediction failed: %v", err)
		}
		got := setOf(p.Victims)
		if equalSets(got, want) && p.Certain {
			st.Possible, st.Verified = true, true
			break
		}
		costs := effectiveCosts(p)
		changed := false
		for _, pod := range p.Pods {
			if pod.Fate != prediction.FateDelete && pod.Fate != prediction.FateKeep {
				continue
			}
			lo, hi := classRange(p, pod)
			switch {
			case want[pod.Name] && (pod.Fate != prediction.FateDelete || !pod.Certain):
				if c := min(0, lo) - 1; costs[pod.Name] != c || !pod.Certain {
					annot[pod.Name], changed = c, true
				}
			case !want[pod.Name] && (pod.Fate == prediction.FateDelete || !pod.Certain):
				if c := max(0, hi) + 1; costs[pod.Name] != c || !pod.Certain {
					annot[pod.Name], changed = c, true
				}
			}
		}
		if !changed {
			break
		}
	}
	if !st.Possible {
		return fail("no set of deletion costs makes the prediction certain to delete exactly these pods")
	}
	prune(annot, want, try)
	names := make([]string, 0, len(annot))
	for n := range annot {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		st.Annotations = append(st.Annotations, prediction.Annotation{Pod: n, Cost: annot[n], Was: known[n].DeletionCostRaw})
		st.Commands = append(st.Commands, fmt.Sprintf("kubectl annotate pod %s -n %s %s=%d --overwrite", n, ref.Namespace, engine.DeletionCostAnnotation, annot[n]))
	}
	if len(names) == 0 {
		st.Reason = "the controller already deletes exactly these pods: no annotation needed"
	}
	return st
}

// prune drops annotations one at a time while the result still verifies,
// so the set is minimal (no single annotation can be removed).
func prune(annot map[string]int32, want map[string]bool, try func() (*prediction.Prediction, error)) {
	names := make([]string, 0, len(annot))
	for n := range annot {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := annot[n]
		delete(annot, n)
		p, err := try()
		if err != nil || !p.Certain || !equalSets(setOf(p.Victims), want) {
			annot[n] = c
		}
	}
}

func wantedSet(order []prediction.Pod, d int, req Request) []string {
	spare := setOf(req.Spare)
	var out []string
	seen := map[string]bool{}
	push := func(n string) {
		if len(out) < d && !seen[n] && !spare[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, n := range req.Target {
		push(n)
	}
	if req.TargetNode != "" {
		for _, p := range order {
			if p.Node == req.TargetNode {
				push(p.Name)
			}
		}
	}
	for _, p := range order {
		push(p.Name)
	}
	return out
}

// impossible names the rule that decides before deletion cost for a pod
// that must stay against one that must go, or the per-ReplicaSet counts a
// Deployment's split fixes.
func impossible(order []prediction.Pod, wanted []string, base *prediction.Prediction, o workload.Options) string {
	want := setOf(wanted)
	perRS := map[string]int{}
	for _, p := range order {
		if want[p.Name] {
			perRS[p.ReplicaSet]++
		}
		if p.Fate == prediction.FateDelete {
			perRS[p.ReplicaSet]--
		}
	}
	for rs, n := range perRS {
		if n != 0 && rs != "" {
			return fmt.Sprintf("the Deployment's split fixes how many pods each ReplicaSet loses; the wanted pods would change that for %s", rs)
		}
	}
	c := engine.Comparator{Rules: o.Rules, Now: base.ReferenceTime}
	for _, keep := range order {
		if want[keep.Name] {
			continue
		}
		for _, gone := range order {
			if !want[gone.Name] || gone.ReplicaSet != keep.ReplicaSet {
				continue
			}
			a, b := asEnginePod(keep), asEnginePod(gone)
			dec := c.Compare(&a, &b)
			if dec.AFirst && dec.Rule.BeforeCost() {
				return fmt.Sprintf("%s must stay but it goes before %s by %s %s (%s vs %s), a rule applied before deletion cost", keep.Name, gone.Name, dec.Rule.ID(), dec.Rule.Name(), dec.A, dec.B)
			}
		}
	}
	return ""
}

func asEnginePod(p prediction.Pod) engine.Pod {
	return engine.Pod{Name: p.Name, UID: p.UID, Node: p.Node, Phase: corev1.PodPhase(p.Phase), Ready: p.Ready, Created: p.Created}
}

func effectiveCosts(p *prediction.Prediction) map[string]int32 {
	out := map[string]int32{}
	for _, pod := range p.Pods {
		out[pod.Name] = pod.DeletionCost
	}
	return out
}

// classRange: the lowest and highest cost among pods that rules 1-3 cannot
// separate from pod, in the same ReplicaSet.
func classRange(p *prediction.Prediction, pod prediction.Pod) (lo, hi int32) {
	c := engine.Comparator{Now: p.ReferenceTime}
	ep := asEnginePod(pod)
	lo, hi = pod.DeletionCost, pod.DeletionCost
	for _, q := range p.Pods {
		if (q.Fate != prediction.FateDelete && q.Fate != prediction.FateKeep) || q.ReplicaSet != pod.ReplicaSet {
			continue
		}
		eq := asEnginePod(q)
		if !c.Compare(&eq, &ep).Rule.BeforeCost() {
			lo, hi = min(lo, q.DeletionCost), max(hi, q.DeletionCost)
		}
	}
	return lo, hi
}

// annotated copies the snapshot with deletion costs set on some pods.
func annotated(s *snapshot.Snapshot, annot map[string]int32) *snapshot.Snapshot {
	c := *s
	c.Pods = make([]*corev1.Pod, len(s.Pods))
	for i, p := range s.Pods {
		if cost, ok := annot[p.Name]; ok {
			p = p.DeepCopy()
			if p.Annotations == nil {
				p.Annotations = map[string]string{}
			}
			p.Annotations[engine.DeletionCostAnnotation] = strconv.Itoa(int(cost))
		}
		c.Pods[i] = p
	}
	return &c
}

func setOf(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
