package workload

import (
	"fmt"
	"slices"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/job"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// predictJob previews a Job's parallelism (and, for an elastic Indexed
// Job, completions) going to the values given.
func predictJob(s *snapshot.Snapshot, ref snapshot.Ref, parallelism int32, o Options) (*prediction.Prediction, error) {
	j := findNamed(s.Jobs, ref)
	if j == nil {
		return nil, &NotFoundError{Ref: ref}
	}
	sel, err := metav1.LabelSelectorAsSelector(j.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("job %s has an invalid selector: %v", ref.Name, err)
	}
	c := claim(s.Pods, j.Namespace, string(j.UID), sel)
	res, err := job.Predict(job.Input{Job: j, Pods: jobPods(s, j, sel, c), Parallelism: parallelism, Completions: o.JobCompletions, Now: o.Now, Rules: o.Rules, Seed: o.Seed})
	if err != nil {
		return nil, err
	}
	pred := newPrediction(ref, res.Parallelism, parallelism, o)
	pred.Job = jobInfo(j, res, parallelism, o)
	if res.Note != "" {
		pred.Message = res.Note
		pred.Warnings = append(pred.Warnings, res.Warnings...)
		return pred, nil
	}
	c0 := &engine.Comparator{Rules: o.Rules, Now: o.Now}
	for _, f := range res.Order {
		pp := jobPodEntry(f, res, c0, c.adopted[f.Pod.Name])
		if f.Delete {
			pred.Victims = append(pred.Victims, f.Pod.Name)
		}
		pred.Pods = append(pred.Pods, pp)
	}
	pred.Contenders = append(pred.Contenders, contenderGroups(res.Contenders)...)
	c.released = nil // a Job's answer leaves released pods out
	pred.Pods = append(pred.Pods, c.setAside(c0, "already terminating: not active, never chosen again")...)
	pred.Certain = res.Certain
	pred.Warnings = append(pred.Warnings, res.Warnings...)
	pred.Message = summary(pred, false)
	if res.Victims > 0 {
		pred.Message = fmt.Sprintf("%s (%d active, the controller wants %d)", pred.Message, res.Active, res.Want)
	}
	return pred, nil
}

// jobPods are the pods the Job controller counts: the claimed active and
// terminating ones, and the finished pods it owns (succeeded, failed).
func jobPods(s *snapshot.Snapshot, j *batchv1.Job, sel labels.Selector, c claimed) []*corev1.Pod {
	out := slices.Concat(c.active, c.terminating)
	for _, p := range s.Pods {
		if ctrl := controllerOf(p); p.Namespace == j.Namespace && ctrl != nil && string(ctrl.UID) == string(j.UID) && !isActive(p) && !isTerminating(p) && sel.Matches(labels.Set(p.Labels)) {
			out = append(out, p)
		}
	}
	return out
}

// jobInfo is the prediction's job section.
func jobInfo(j *batchv1.Job, res job.Result, parallelism int32, o Options) *prediction.JobInfo {
	info := &prediction.JobInfo{CompletionMode: string(batchv1.NonIndexedCompletion), Parallelism: prediction.Change{From: res.Parallelism, To: parallelism},
		Suspended: j.Spec.Suspend != nil && *j.Spec.Suspend, Succeeded: res.Succeeded, Active: res.Active, WantActive: res.Want,
		Forced: res.Forced, Syncs: res.Syncs, NoChange: res.Note != ""}
	if res.Indexed {
		info.CompletionMode = string(batchv1.IndexedCompletion)
	}
	if j.Spec.Completions != nil {
		to := *j.Spec.Completions
		if o.JobCompletions != nil {
			to = *o.JobCompletions
		}
		info.Completions = &prediction.Change{From: *j.Spec.Completions, To: to}
	}
	return info
}

// jobPodEntry is one of the controller's candidates in the table, with
// the reason for its fate.
func jobPodEntry(f job.Fate, res job.Result, c0 *engine.Comparator, adopted bool) prediction.Pod {
	pp := podEntry(f.Pod, c0)
	pp.Rank = 0
	pp.Position, pp.Certain, pp.DeleteProbability, pp.Fate = f.Position, f.Certain, f.Probability, prediction.FateKeep
	if f.Index >= 0 {
		ix := f.Index
		pp.CompletionIndex = &ix
	}
	if f.Delete {
		pp.Fate = prediction.FateDelete
	}
	if f.Boundary != nil && f.BoundaryPod != nil && (f.Boundary.Rule != engine.Tie || !f.Certain) && f.Cause != job.Duplicate {
		pp.VsBoundary = decision(f.Pod, f.BoundaryPod, *f.Boundary)
	}
	pp.Reason = jobReason(f, res)
	if f.Cause == job.Duplicate && f.Boundary != nil {
		pp.Reason += " (" + explain(f.Pod.Name, f.BoundaryPod.Name, *f.Boundary) + ")"
	}
	if pp.Reason == "" && pp.VsBoundary == nil && !f.Delete {
		pp.Reason = fmt.Sprintf("stays: the controller wants %d active pod(s)", res.Want)
	}
	if f.Boundary != nil && f.Boundary.Rule == engine.Tie && f.Certain && f.Cause == job.Sorted {
		pp.Reason = fmt.Sprintf("ties with %s under every rule; the controller sorts from index order, so its sort decides the same way every time", f.BoundaryPod.Name)
	}
	if f.Group >= 0 {
		g := f.Group
		pp.ContenderGroup = &g
	}
	if adopted {
		pp.Reason = "orphan matching the selector: adopted and counted in the same sync"
	}
	return pp
}

// jobReason says why a pod goes before any comparison, or why a tied
// duplicate's fate is open.
func jobReason(f job.Fate, res job.Result) string {
	switch f.Cause {
	case job.NoIndex:
		return "no valid completion index: an Indexed Job removes it first"
	case job.OutOfRange:
		return fmt.Sprintf("index %d >= completions %d: out of range, removed first", f.Index, *res.Completions)
	case job.Duplicate:
		return fmt.Sprintf("duplicate of index %d: %s stays", f.Index, f.Kept)
	case job.DupTie:
		return fmt.Sprintf("index %d has tied duplicates: one of them stays, by chance", f.Index)
	case job.Unsorted:
		return "every active pod goes: no sort"
	}
	return ""
}
