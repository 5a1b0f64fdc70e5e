package runbook

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/set"

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

// RequestError is a steering request that does not make sense for this
// scale-in: a name that is not a candidate, a pod both spared and targeted,
// a node with no candidate. It is a usage error, not an answer.
type RequestError struct{ msg string }

func (e *RequestError) Error() string { return e.msg }

func requestErr(format string, a ...any) error { return &RequestError{msg: fmt.Sprintf(format, a...)} }

const steerNote = "Set the annotations before scaling; the controller reads them from its informer cache, so allow a moment. Best effort: if pods change in between, run the preview again. The plugin itself writes nothing."

// Steer finds the smallest set of pod-deletion-cost annotations that makes
// the controller delete exactly the wanted pods, and verifies it by running
// the prediction again with those annotations. A request that does not fit
// the scale-in is a *RequestError.
func Steer(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, o workload.Options, base *prediction.Prediction, req Request) (*prediction.Steering, error) {
	st := &prediction.Steering{Annotations: []prediction.Annotation{}, Commands: []string{}, Note: steerNote}
	fail := func(format string, a ...any) (*prediction.Steering, error) {
		st.Reason = fmt.Sprintf(format, a...)
		return st, nil
	}
	if ref.Kind == snapshot.StatefulSet {
		return fail("a StatefulSet deletes by ordinal, highest first; deletion costs do not change it (scale to the ordinals you want to keep instead)")
	}
	order := candidates(base)
	if err := validate(order, req); err != nil {
		return nil, err
	}
	if !o.Rules.DeletionCost {
		return fail("rule %s (deletion cost) is off in these rules (PodDeletionCost=false), so no annotation can change the order", prediction.RuleDeletionCost)
	}
	d := len(base.Victims)
	if d == 0 {
		return fail("no pod would be deleted, so there is nothing to steer")
	}
	if len(req.Target) > d {
		return fail("%d targets but the scale-in deletes only %d pods", len(req.Target), d)
	}
	c := engine.Comparator{Rules: o.Rules, Now: base.ReferenceTime}
	wanted, why := wantedSet(c, order, req)
	st.Wanted = wanted
	if why != "" {
		return fail("%s", why)
	}
	want := set.New(wanted...)
	try := func(annot map[string]int32) (*prediction.Prediction, error) {
		return workload.Predict(annotated(s, annot), ref, replicas, o)
	}
	annot, err := search(c, order, want, try)
	if err != nil {
		return fail("re-running the prediction failed: %v", err)
	}
	if annot == nil {
		return fail("the rules before deletion cost allow these pods, but no set of deletion costs makes the prediction certain to delete exactly them")
	}
	st.Possible, st.Verified = true, true
	for _, n := range set.KeySet(annot).SortedList() {
		st.Annotations = append(st.Annotations, prediction.Annotation{Pod: n, Cost: annot[n], Was: costRaw(order, n)})
		st.Commands = append(st.Commands, fmt.Sprintf("kubectl annotate pod %s -n %s %s=%d --overwrite", n, ref.Namespace, engine.DeletionCostAnnotation, annot[n]))
	}
	if len(annot) == 0 {
		st.Reason = "the controller already deletes exactly these pods: no annotation needed"
	}
	return st, nil
}

// candidates are the pods the controllers choose among, in predicted order.
func candidates(base *prediction.Prediction) []prediction.Pod {
	var order []prediction.Pod
	for _, p := range base.Pods {
		if p.Fate == prediction.FateDelete || p.Fate == prediction.FateKeep {
			order = append(order, p)
		}
	}
	return order
}

func costRaw(order []prediction.Pod, name string) string {
	for _, p := range order {
		if p.Name == name {
			return p.DeletionCostRaw
		}
	}
	return ""
}

// validate rejects requests that name no candidate or contradict themselves.
func validate(order []prediction.Pod, req Request) error {
	names, nodes := set.New[string](), set.New[string]()
	for _, p := range order {
		names.Insert(p.Name)
		if p.Node != "" {
			nodes.Insert(p.Node)
		}
	}
	var unknown []string
	for _, n := range append(slices.Clone(req.Spare), req.Target...) {
		if !names.Has(n) && !slices.Contains(unknown, n) {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		return requestErr("%s %s: not among the candidates of this scale-in, which are %s", plural(len(unknown), "pod"), strings.Join(unknown, ", "), listSome(names.SortedList()))
	}
	if both := set.New(req.Spare...).Intersection(set.New(req.Target...)); both.Len() > 0 {
		return requestErr("--spare and --target both name %s: a pod cannot be both kept and deleted", strings.Join(both.SortedList(), ", "))
	}
	if req.TargetNode != "" && !nodes.Has(req.TargetNode) {
		return requestErr("--target-node %s: no candidate pod runs on that node; candidates run on %s", req.TargetNode, listSome(nodes.SortedList()))
	}
	return nil
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// listSome joins names, cut after a screenful.
func listSome(names []string) string {
	const most = 20
	if len(names) == 0 {
		return "none"
	}
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:most], ", ") + fmt.Sprintf(" and %d more", len(names)-most)
}

// search raises or lowers deletion costs until the re-run prediction is
// certain to delete exactly want, then drops every annotation it can. It
// returns nil when no round converges.
func search(c engine.Comparator, order []prediction.Pod, want set.Set[string], try func(map[string]int32) (*prediction.Prediction, error)) (map[string]int32, error) {
	annot := map[string]int32{}
	for round := 0; round < 2*len(order)+2; round++ {
		p, err := try(annot)
		if err != nil {
			return nil, err
		}
		if deletesExactly(p, want) {
			return prune(annot, want, try), nil
		}
		if !adjust(c, p, want, annot) {
			return nil, nil
		}
	}
	return nil, nil
}

// deletesExactly: the prediction is certain and deletes exactly want.
func deletesExactly(p *prediction.Prediction, want set.Set[string]) bool {
	return p.Certain && set.New(p.Victims...).Equal(want)
}

// adjust moves every misplaced pod beyond the costs of its rules 1-3 class
// and reports whether anything changed.
func adjust(c engine.Comparator, p *prediction.Prediction, want set.Set[string], annot map[string]int32) bool {
	changed := false
	for _, pod := range p.Pods {
		if pod.Fate != prediction.FateDelete && pod.Fate != prediction.FateKeep {
			continue
		}
		lo, hi := classRange(c, p, pod)
		switch {
		case want.Has(pod.Name) && (pod.Fate != prediction.FateDelete || !pod.Certain):
			if cost := min(0, lo) - 1; pod.DeletionCost != cost || !pod.Certain {
				annot[pod.Name], changed = cost, true
			}
		case !want.Has(pod.Name) && (pod.Fate == prediction.FateDelete || !pod.Certain):
			if cost := max(0, hi) + 1; pod.DeletionCost != cost || !pod.Certain {
				annot[pod.Name], changed = cost, true
			}
		}
	}
	return changed
}

// prune drops annotations one at a time, in name order, while the result
// still verifies, so the set is minimal (no single annotation can go).
func prune(annot map[string]int32, want set.Set[string], try func(map[string]int32) (*prediction.Prediction, error)) map[string]int32 {
	for _, n := range set.KeySet(annot).SortedList() {
		cost := annot[n]
		delete(annot, n)
		if p, err := try(annot); err != nil || !deletesExactly(p, want) {
			annot[n] = cost
		}
	}
	return annot
}

// wantedSet chooses, within each ReplicaSet's share of the victims (a
// Deployment's split fixes how many pods each one loses), the pods the
// request asks for. Rules 1-3 decide before deletion cost, so a share is
// every pod of the classes that go before its cut class, plus a choice
// inside the cut class: there the targets, then pods on the target node,
// then the predicted order. It returns why no such set exists, if none does.
func wantedSet(c engine.Comparator, order []prediction.Pod, req Request) ([]string, string) {
	var wanted []string
	for _, group := range byReplicaSet(order) {
		got, why := shareOf(c, group, req)
		if why != "" {
			return nil, why
		}
		wanted = append(wanted, got...)
	}
	return wanted, ""
}

// byReplicaSet groups the candidates by ReplicaSet, in order of first
// appearance, keeping the predicted order inside each group.
func byReplicaSet(order []prediction.Pod) [][]prediction.Pod {
	var groups [][]prediction.Pod
	index := map[string]int{}
	for _, p := range order {
		i, ok := index[p.ReplicaSet]
		if !ok {
			i = len(groups)
			index[p.ReplicaSet] = i
			groups = append(groups, nil)
		}
		groups[i] = append(groups[i], p)
	}
	return groups
}

// shareOf picks the wanted pods of one ReplicaSet's candidates.
func shareOf(c engine.Comparator, group []prediction.Pod, req Request) ([]string, string) {
	n := 0
	for _, p := range group {
		if p.Fate == prediction.FateDelete {
			n++
		}
	}
	owner := ""
	if group[0].ReplicaSet != "" {
		owner = " of " + group[0].ReplicaSet
	}
	if n == 0 {
		for _, p := range group {
			if slices.Contains(req.Target, p.Name) {
				return nil, fmt.Sprintf("%s is a target, but the scale-in deletes no pod%s", p.Name, owner)
			}
		}
		return nil, ""
	}
	// Sort by rules 1-3 only: the classes deletion cost cannot cross.
	pods := make([]engine.Pod, len(group))
	for i, p := range group {
		pods[i] = asEnginePod(p)
	}
	classCmp := func(a, b *engine.Pod) int {
		switch d := c.Compare(a, b); {
		case !d.Rule.BeforeCost():
			return 0
		case d.AFirst:
			return -1
		}
		return 1
	}
	slices.SortStableFunc(pods, func(a, b engine.Pod) int { return classCmp(&a, &b) })
	lo, hi := n-1, n // the cut class is pods[lo:hi]
	for lo > 0 && classCmp(&pods[lo-1], &pods[n-1]) == 0 {
		lo--
	}
	for hi < len(pods) && classCmp(&pods[hi], &pods[n-1]) == 0 {
		hi++
	}
	return fillShare(c, pods, lo, hi, n, owner, req)
}

// fillShare: pods[:lo] must go, pods[hi:] must stay, n-lo of the cut class
// pods[lo:hi] go, chosen as the request prefers.
func fillShare(c engine.Comparator, pods []engine.Pod, lo, hi, n int, owner string, req Request) ([]string, string) {
	spare, target := set.New(req.Spare...), set.New(req.Target...)
	var out []string
	for i := range pods[:lo] {
		if spare.Has(pods[i].Name) {
			return nil, fmt.Sprintf("%s must stay but it goes before %s %s", pods[i].Name, pods[n-1].Name, byRule(c, &pods[i], &pods[n-1]))
		}
		out = append(out, pods[i].Name)
	}
	for i := hi; i < len(pods); i++ {
		if target.Has(pods[i].Name) {
			return nil, fmt.Sprintf("%s is a target but the scale-in deletes only %d %s%s and %s goes before it %s", pods[i].Name, n, plural(n, "pod"), owner, pods[n-1].Name, byRule(c, &pods[n-1], &pods[i]))
		}
	}
	class := pods[lo:hi]
	slots := n - lo
	pick := func(ok func(p *engine.Pod) bool) {
		for i := range class {
			if p := &class[i]; len(out) < n && ok(p) && !spare.Has(p.Name) && !slices.Contains(out, p.Name) {
				out = append(out, p.Name)
			}
		}
	}
	pick(func(p *engine.Pod) bool { return target.Has(p.Name) })
	if inClass := len(out) - lo; inClass < target.Intersection(nameSet(class)).Len() {
		return nil, fmt.Sprintf("the scale-in deletes %d %s%s from the class the cut falls in, fewer than the targets there", slots, plural(slots, "pod"), owner)
	}
	pick(func(p *engine.Pod) bool { return req.TargetNode != "" && p.Node == req.TargetNode })
	pick(func(*engine.Pod) bool { return true })
	if len(out) < n {
		return nil, tooFewLeft(c, pods, hi, n, len(out), owner, spare)
	}
	return out, ""
}

// tooFewLeft explains a cut class the spares leave short: a spared pod goes
// before the next class by a rule deletion cost cannot overturn.
func tooFewLeft(c engine.Comparator, pods []engine.Pod, hi, n, left int, owner string, spare set.Set[string]) string {
	if hi < len(pods) {
		for i := range pods[:hi] {
			if spare.Has(pods[i].Name) {
				return fmt.Sprintf("%s must stay but it goes before %s %s", pods[i].Name, pods[hi].Name, byRule(c, &pods[i], &pods[hi]))
			}
		}
	}
	return fmt.Sprintf("the scale-in deletes %d %s%s, but the spared pods leave only %d that may go", n, plural(n, "pod"), owner, left)
}

func nameSet(pods []engine.Pod) set.Set[string] {
	out := set.New[string]()
	for _, p := range pods {
		out.Insert(p.Name)
	}
	return out
}

// byRule explains why first goes before second whatever the costs.
func byRule(c engine.Comparator, first, second *engine.Pod) string {
	dec := c.Compare(first, second)
	return fmt.Sprintf("by %s %s (%s vs %s), a rule applied before deletion cost", dec.Rule.ID(), dec.Rule.Name(), dec.A, dec.B)
}

func asEnginePod(p prediction.Pod) engine.Pod {
	return engine.Pod{Name: p.Name, UID: p.UID, Node: p.Node, Phase: corev1.PodPhase(p.Phase), Ready: p.Ready, Created: p.Created}
}

// classRange: the lowest and highest cost among pods that rules 1-3 cannot
// separate from pod, in the same ReplicaSet.
func classRange(c engine.Comparator, p *prediction.Prediction, pod prediction.Pod) (lo, hi int32) {
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
