package workload

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/kubectl/pkg/util/podutils"

	"github.com/scale-preview/scale-preview/pkg/deployment"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// maxSyncs bounds the simulated deployment syncs; a rollout at fixed
// availability settles in a few.
const maxSyncs = 50

// depRS is one ReplicaSet of the Deployment during the simulation.
type depRS struct {
	rs      *appsv1.ReplicaSet
	like    rsLike
	before  int32
	after   int32 // after the scale step
	scaled  bool
	created int
	deleted int
	last    *rsRun // the latest resize, for listing survivors
}

// predictDeployment simulates the scale and the rollout syncs after it.
// When one sync shrinks several ReplicaSets, their controllers run
// concurrently and each one's ranks may or may not see the others' victims
// gone: both orders are simulated, and pods whose final fate differs are
// marked open.
func predictDeployment(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, o Options) (*prediction.Prediction, error) {
	pred, raced, err := simulateDeployment(s, ref, replicas, o, false)
	if err != nil {
		return nil, err
	}
	defer normalizeGroups(pred)
	if !raced {
		return pred, nil
	}
	alt, _, err := simulateDeployment(s, ref, replicas, o, true)
	if err != nil {
		return nil, err
	}
	type fate struct {
		f string
		p float64
	}
	altFate := map[string]fate{}
	for _, p := range alt.Pods {
		altFate[p.Name] = fate{p.Fate, p.DeleteProbability}
	}
	// Either order is taken as equally likely: a pod's chance is the mean
	// of its chances in the two orders.
	var open []string
	expected := 0.0
	for i := range pred.Pods {
		p := &pred.Pods[i]
		a, ok := altFate[p.Name]
		if !ok || (a.f == p.Fate && a.p == p.DeleteProbability) {
			continue
		}
		if a.f != prediction.FateDelete && a.f != prediction.FateKeep {
			continue
		}
		p.Certain = false
		p.DeleteProbability = (p.DeleteProbability + a.p) / 2
		p.Reason = "ranks depend on whether a sibling ReplicaSet's victims are already terminating when this ReplicaSet syncs (the controllers run concurrently)"
		open = append(open, p.Name)
		expected += p.DeleteProbability
	}
	if len(open) > 0 {
		pred.Certain = false
		g := len(pred.Contenders)
		for i := range pred.Pods {
			if slices.Contains(open, pred.Pods[i].Name) {
				pred.Pods[i].ContenderGroup = &g
			}
		}
		k := int(expected + 0.5)
		pred.Contenders = append(pred.Contenders, prediction.ContenderGroup{Pods: open, Delete: k, Rule: prediction.RuleRace,
			Reason: "two ReplicaSets shrink in the same sync and their controllers run concurrently; which one ranks first decides these pods (each order taken as equally likely)"})
		mostLikely(pred, open, k)
		pred.Message = summary(pred, false)
	}
	return pred, nil
}

// normalizeGroups settles open choices over the whole Deployment sequence:
// groups that share pods are merged; a group whose members all die (a tie
// cut by the scale whose rest the rollout takes) is certain, only the step
// being open; an exact tie spread over steps gives each member the share
// of its deaths. Group indices and the overall certainty are recomputed.
func normalizeGroups(pred *prediction.Prediction) {
	if len(pred.Contenders) == 0 {
		return
	}
	var groups []prediction.ContenderGroup
	for _, g := range pred.Contenders {
		merged := false
		for i := range groups {
			if overlaps(groups[i].Pods, g.Pods) {
				for _, n := range g.Pods {
					if !slices.Contains(groups[i].Pods, n) {
						groups[i].Pods = append(groups[i].Pods, n)
					}
				}
				groups[i].Exact = groups[i].Exact && g.Exact
				if g.Rule == prediction.RuleRace || groups[i].Rule == prediction.RuleRace {
					groups[i].Rule = prediction.RuleRace
				}
				if !strings.Contains(groups[i].Reason, g.Reason) {
					groups[i].Reason += "; " + g.Reason
				}
				merged = true
				break
			}
		}
		if !merged {
			groups = append(groups, g)
		}
	}
	idx := map[string]int{}
	for i, p := range pred.Pods {
		idx[p.Name] = i
		pred.Pods[i].ContenderGroup = nil
	}
	pred.Contenders = nil
	for _, g := range groups {
		deleted := 0
		steps := map[string]bool{}
		for _, n := range g.Pods {
			if p := pred.Pods[idx[n]]; p.Fate == prediction.FateDelete {
				deleted++
				steps[p.Step] = true
			}
		}
		switch {
		case deleted == len(g.Pods):
			for _, n := range g.Pods {
				p := &pred.Pods[idx[n]]
				p.Certain, p.DeleteProbability = true, 1
				if len(steps) > 1 {
					p.Step = prediction.StepEither
				}
			}
			continue
		case deleted == 0:
			for _, n := range g.Pods {
				p := &pred.Pods[idx[n]]
				p.Certain, p.DeleteProbability = true, 0
			}
			continue
		}
		if g.Exact && g.Rule != prediction.RuleRace {
			for _, n := range g.Pods {
				pred.Pods[idx[n]].DeleteProbability = float64(deleted) / float64(len(g.Pods))
			}
		}
		g.Delete = deleted
		gi := len(pred.Contenders)
		for _, n := range g.Pods {
			p := &pred.Pods[idx[n]]
			p.Certain = false
			p.ContenderGroup = &gi
		}
		pred.Contenders = append(pred.Contenders, g)
	}
	pred.Certain = true
	for _, p := range pred.Pods {
		if !p.Certain {
			pred.Certain = false
		}
	}
	pred.Message = summary(pred, false)
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// mostLikely makes the k most probable pods of an open group the victims
// (ties keep the simulated order's choice), then rebuilds the victims list
// and positions: victims first in their order, then kept pods.
func mostLikely(pred *prediction.Prediction, open []string, k int) {
	idx := map[string]int{}
	for i, p := range pred.Pods {
		idx[p.Name] = i
	}
	ranked := slices.Clone(open)
	slices.SortStableFunc(ranked, func(a, b string) int {
		pa, pb := pred.Pods[idx[a]], pred.Pods[idx[b]]
		if pa.DeleteProbability != pb.DeleteProbability {
			if pa.DeleteProbability > pb.DeleteProbability {
				return -1
			}
			return 1
		}
		if (pa.Fate == prediction.FateDelete) != (pb.Fate == prediction.FateDelete) {
			if pa.Fate == prediction.FateDelete {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for i, n := range ranked {
		p := &pred.Pods[idx[n]]
		p.Fate = prediction.FateKeep
		if i < k {
			p.Fate = prediction.FateDelete
			if p.Step == "" {
				p.Step = prediction.StepScale
			}
		}
	}
	slices.SortStableFunc(pred.Pods, func(a, b prediction.Pod) int {
		rank := func(p prediction.Pod) int {
			switch {
			case p.Fate == prediction.FateDelete:
				return 0
			case p.Position > 0:
				return 1
			}
			return 2
		}
		return rank(a) - rank(b)
	})
	pred.Victims = pred.Victims[:0]
	pos := 0
	for i := range pred.Pods {
		p := &pred.Pods[i]
		if p.Position > 0 || p.Fate == prediction.FateDelete {
			pos++
			p.Position = pos
		}
		if p.Fate == prediction.FateDelete {
			pred.Victims = append(pred.Victims, p.Name)
		} else if p.Fate == prediction.FateKeep {
			p.Step = ""
		}
	}
}

func simulateDeployment(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, o Options, siblingsFirst bool) (*prediction.Prediction, bool, error) {
	raced := false
	var d *appsv1.Deployment
	for _, x := range s.Deployments {
		if x.Name == ref.Name && x.Namespace == ref.Namespace {
			d = x
		}
	}
	if d == nil {
		return nil, false, &NotFoundError{Ref: ref}
	}
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, false, fmt.Errorf("deployment %s has an invalid selector: %v", d.Name, err)
	}
	current := replicasOf(d.Spec.Replicas)
	pred := newPrediction(ref, current, replicas, o)

	// The Deployment's ReplicaSets: controlled by it, or orphans it adopts.
	var rss []*depRS
	for _, rs := range s.ReplicaSets {
		if rs.Namespace != d.Namespace {
			continue
		}
		c := metav1.GetControllerOf(rs)
		owned := c != nil && c.UID == d.UID
		orphan := c == nil && rs.Spec.Selector != nil && sel.Matches(labels.Set(rs.Spec.Template.Labels)) && rs.DeletionTimestamp == nil
		if !owned && !orphan {
			continue
		}
		if orphan {
			// Adoption sets this ownerRef; ranks then see the siblings.
			rs = rs.DeepCopy()
			rs.OwnerReferences = append(rs.OwnerReferences, *metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment")))
			pred.Warnings = append(pred.Warnings, fmt.Sprintf("ReplicaSet %s is an orphan matching the selector: the Deployment adopts it", rs.Name))
		}
		r := &depRS{rs: rs, like: fromRS(rs), before: replicasOf(rs.Spec.Replicas)}
		r.after = r.before
		rss = append(rss, r)
	}
	sort.Slice(rss, func(i, j int) bool { return rss[i].rs.Name < rss[j].rs.Name })
	// Work on a private copy of the snapshot: adopted ReplicaSets carry
	// their new ownerRef and pods the controllers create are added.
	work := *s
	work.ReplicaSets = nil
	for _, r := range rss {
		work.ReplicaSets = append(work.ReplicaSets, r.rs)
	}
	work.Pods = slices.Clone(s.Pods)

	gone := map[string]bool{}
	state := make([]deployment.ReplicaSet, len(rss))
	newIdx := -1
	for i, r := range rss {
		c := claim(work.Pods, d.Namespace, string(r.rs.UID), r.like.selector)
		state[i] = deployment.ReplicaSet{
			Name: r.rs.Name, UID: string(r.rs.UID), Created: r.rs.CreationTimestamp.Time,
			Replicas: r.before, Available: available(c.active, d.Spec.MinReadySeconds, o.Now, gone),
			StatusReplicas: r.rs.Status.Replicas, RunningPods: int32(len(c.active) + len(c.terminating)),
			DesiredAnnotation: r.rs.Annotations[deployment.DesiredReplicasAnnotation],
			MaxAnnotation:     r.rs.Annotations[deployment.MaxReplicasAnnotation],
			New:               equalIgnoreHash(&r.rs.Spec.Template, &d.Spec.Template),
		}
		if state[i].New && (newIdx < 0 || rss[i].rs.CreationTimestamp.Before(&rss[newIdx].rs.CreationTimestamp)) {
			newIdx = i
		}
	}
	ds := deployment.Deployment{
		Replicas: replicas, StatusReplicas: d.Status.Replicas, Strategy: string(d.Spec.Strategy.Type), Paused: d.Spec.Paused,
		NewReplicaSetName: d.Name + "-<new>", NewReplicaSetCreated: o.Now,
	}
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		ds.MaxSurge, ds.MaxUnavailable = ru.MaxSurge, ru.MaxUnavailable
	}
	if replicas == current || d.DeletionTimestamp != nil {
		pred.Message = fmt.Sprintf("no change (%d replicas): no pod would be deleted by the scale", current)
		if d.DeletionTimestamp != nil {
			pred.Message = fmt.Sprintf("Deployment %s is being deleted: its controller no longer scales; no pod would be deleted", d.Name)
		}
		listSurvivors(pred, &work, rss, map[string]bool{}, o)
		return pred, false, nil
	}

	var ordered []prediction.Pod
	certain := true
	for sync := 0; sync < maxSyncs; sync++ {
		next, changes := deployment.Sync(ds, state, deployment.Version(o.Rules.Minor))
		if len(changes) == 0 {
			break
		}
		// A new RS created by the rollout: track it with no pods yet.
		for len(next) > len(state) {
			ns := next[len(state)]
			rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: ns.Name, Namespace: d.Namespace, UID: types.UID("new-rs-" + ns.Name),
				CreationTimestamp: metav1.NewTime(o.Now), OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(d, appsv1.SchemeGroupVersion.WithKind("Deployment"))}},
				Spec: appsv1.ReplicaSetSpec{Replicas: new(int32), Selector: d.Spec.Selector, Template: d.Spec.Template}}
			r := &depRS{rs: rs, like: fromRS(rs)}
			rss = append(rss, r)
			work.ReplicaSets = append(work.ReplicaSets, rs)
			state = append(state, deployment.ReplicaSet{Name: ns.Name, New: true})
		}
		// Shrinks in one sync run concurrently in their ReplicaSet
		// controllers: each one's ranks may or may not see the others'
		// victims as gone already.
		batchGone := map[string]bool{}
		type shrink struct {
			i    int
			step string
			run  rsRun
		}
		var shrinks []shrink
		for _, ch := range changes {
			if ch.Error != "" {
				pred.Warnings = append(pred.Warnings, fmt.Sprintf("the deployment controller's update of %s fails: %s", ch.ReplicaSet, ch.Error))
				continue
			}
			i := indexOf(rss, ch.ReplicaSet)
			if i < 0 {
				continue
			}
			r := rss[i]
			if ch.Step == deployment.StepScale {
				r.scaled = true
			}
			if ch.To > ch.From {
				n := addCreatedPods(&work, r, int(ch.To-ch.From), d, o.Now)
				r.created += n
				pred.Creates += n
				continue
			}
			c := claim(work.Pods, d.Namespace, string(r.rs.UID), r.like.selector)
			run := runReplicaSet(&work, r.like, c, ch.To, o, gone)
			shrinks = append(shrinks, shrink{i, ch.Step, run})
			for _, v := range run.victims {
				batchGone[v] = true
			}
		}
		if len(shrinks) > 1 {
			raced = true
		}
		if len(shrinks) > 1 && siblingsFirst {
			for k, sh := range shrinks {
				// Re-run with the siblings' victims already gone; pods whose
				// fate differs are left to the race.
				alt := map[string]bool{}
				for n := range gone {
					alt[n] = true
				}
				for n := range batchGone {
					if !slices.Contains(sh.run.victims, n) {
						alt[n] = true
					}
				}
				r := rss[sh.i]
				c := claim(work.Pods, d.Namespace, string(r.rs.UID), r.like.selector)
				shrinks[k].run = runReplicaSet(&work, r.like, c, changeTo(changes, r.rs.Name), o, alt)
			}
		}
		for _, sh := range shrinks {
			r := rss[sh.i]
			run := sh.run
			r.last = &run
			if !run.certain {
				certain = false
			}
			pred.StableUntil = earliest(pred.StableUntil, run.stableUntil)
			for _, g := range run.contenders {
				g.ReplicaSet = r.rs.Name
				pred.Contenders = append(pred.Contenders, g)
			}
			pred.Warnings = append(pred.Warnings, run.warnings...)
			step := prediction.StepRollout
			if sh.step == deployment.StepScale {
				step = prediction.StepScale
			}
			for _, pp := range run.pods {
				if pp.Fate != prediction.FateDelete {
					continue
				}
				gone[pp.Name] = true
				r.deleted++
				if isCreated(pp.Name) {
					continue // created and deleted within the simulation: not an existing pod
				}
				pp.Step, pp.ReplicaSet = step, r.rs.Name
				ordered = append(ordered, pp)
			}
		}
		// Availability after the deletions, at fixed pod health.
		for i, r := range rss {
			c := claim(work.Pods, d.Namespace, string(r.rs.UID), r.like.selector)
			next[i].Available = available(c.active, d.Spec.MinReadySeconds, o.Now, gone)
			next[i].RunningPods = int32(countNotGone(c.active, gone) + len(c.terminating))
		}
		for i := range rss {
			if rss[i].scaled && !rss[i].hasAfter() {
				rss[i].after = next[i].Replicas
			}
		}
		state = next
	}
	// Which ReplicaSet sizes result.
	for i, r := range rss {
		if !r.scaled {
			r.after = r.before
		}
		pred.ReplicaSets = append(pred.ReplicaSets, prediction.ReplicaSetStep{
			Name: r.rs.Name, New: state[i].New, Before: r.before, AfterScale: r.after, Final: state[i].Replicas,
			Deleted: r.deleted, Created: r.created,
		})
	}
	for i := range ordered {
		ordered[i].Position = i + 1
		pred.Victims = append(pred.Victims, ordered[i].Name)
	}
	pred.Pods = ordered
	pred.Certain = certain
	listSurvivors(pred, &work, rss, gone, o)
	switch {
	case d.Spec.Paused:
		pred.Conflicts = append(pred.Conflicts, prediction.Conflict{Kind: "Rollout", Name: d.Name, Message: "the Deployment is paused: the scale still splits across its ReplicaSets, but the rollout does not continue"})
	case activeBefore(rss) > 1:
		pred.Conflicts = append(pred.Conflicts, prediction.Conflict{Kind: "Rollout", Name: d.Name, Message: fmt.Sprintf("a rollout is in progress over %d ReplicaSets: the scale is split between them, then the rollout continues at the new size", activeBefore(rss))})
	}
	pred.Message = summary(pred, false)
	return pred, raced, nil
}

func (r *depRS) hasAfter() bool { return r.after != r.before }

func changeTo(changes []deployment.Change, rs string) int32 {
	for _, c := range changes {
		if c.ReplicaSet == rs {
			return c.To
		}
	}
	return 0
}

func earliest(a, b *time.Time) *time.Time {
	if a == nil {
		return b
	}
	if b == nil || a.Before(*b) {
		return a
	}
	return b
}

func indexOf(rss []*depRS, name string) int {
	for i, r := range rss {
		if r.rs.Name == name {
			return i
		}
	}
	return -1
}

func available(pods []*corev1.Pod, minReady int32, now time.Time, gone map[string]bool) int32 {
	var n int32
	for _, p := range pods {
		if !gone[p.Name] && podutils.IsPodAvailable(p, minReady, metav1.NewTime(now)) {
			n++
		}
	}
	return n
}

func countNotGone(pods []*corev1.Pod, gone map[string]bool) int {
	n := 0
	for _, p := range pods {
		if !gone[p.Name] {
			n++
		}
	}
	return n
}

const createdPrefix = "(created)-"

func isCreated(name string) bool {
	return len(name) > len(createdPrefix) && name[:len(createdPrefix)] == createdPrefix
}

// addCreatedPods adds the pods a ReplicaSet creates: Pending, unassigned,
// not ready, so a later shrink of the same ReplicaSet takes them first.
func addCreatedPods(s *snapshot.Snapshot, r *depRS, n int, d *appsv1.Deployment, now time.Time) int {
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%s%s-%d", createdPrefix, r.rs.Name, r.created+i+1)
		lbls := map[string]string{}
		for k, v := range r.rs.Spec.Template.Labels {
			lbls[k] = v
		}
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: d.Namespace, UID: types.UID(name), Labels: lbls,
			CreationTimestamp: metav1.NewTime(now), OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(r.rs, appsv1.SchemeGroupVersion.WithKind("ReplicaSet"))}},
			Status: corev1.PodStatus{Phase: corev1.PodPending}}
		s.Pods = append(s.Pods, p)
	}
	return n
}

// equalIgnoreHash is deploymentutil.EqualIgnoreHash: templates equal but
// for the pod-template-hash label.
func equalIgnoreHash(a, b *corev1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	delete(a.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	delete(b.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
	return apiequality.Semantic.DeepEqual(a, b)
}

// listSurvivors appends every pod not deleted: each ReplicaSet's kept pods
// in its last predicted order, then terminating and ignored ones.
func listSurvivors(pred *prediction.Prediction, s *snapshot.Snapshot, rss []*depRS, gone map[string]bool, o Options) {
	var uncounted []prediction.Pod
	for _, r := range rss {
		run := r.last
		if run == nil {
			c := claim(s.Pods, r.rs.Namespace, string(r.rs.UID), r.like.selector)
			x := runReplicaSet(s, r.like, c, int32(len(c.active)), o, gone)
			run = &x
		}
		for _, pp := range run.pods {
			switch {
			case gone[pp.Name] || isCreated(pp.Name) || pp.Fate == prediction.FateDelete:
			case pp.Fate == prediction.FateKeep:
				pp.ReplicaSet = r.rs.Name
				pp.Position = positioned(pred.Pods) + 1
				pred.Pods = append(pred.Pods, pp)
			default:
				uncounted = append(uncounted, pp)
			}
		}
	}
	// Terminating and ignored pods have no place in the order: list them last.
	pred.Pods = append(pred.Pods, uncounted...)
}

// activeBefore counts ReplicaSets that had replicas before the scale.
func activeBefore(rss []*depRS) int {
	n := 0
	for _, r := range rss {
		if r.before > 0 {
			n++
		}
	}
	return n
}

// positioned counts pods with a place in the deletion order.
func positioned(pods []prediction.Pod) int {
	n := 0
	for _, p := range pods {
		if p.Position > 0 {
			n++
		}
	}
	return n
}
