package workload

import (
	"fmt"
	"strings"

	"k8s.io/utils/ptr"

	"github.com/scale-preview/scale-preview/pkg/engine"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/statefulset"
)

func predictStatefulSet(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, o Options) (*prediction.Prediction, error) {
	set := findNamed(s.StatefulSets, ref)
	if set == nil {
		return nil, &NotFoundError{Ref: ref}
	}
	res, err := statefulset.Predict(statefulset.Input{
		Set: set, Pods: s.Pods, Claims: s.Claims, ClaimsKnown: s.ClaimsKnown,
		Replicas: replicas, Now: o.Now, Minor: o.Rules.Minor, Gates: o.Rules.Gates,
	})
	if err != nil {
		return nil, err
	}
	current := int32(0)
	c0 := &engine.Comparator{Rules: o.Rules, Now: o.Now}
	pred := newPrediction(ref, 0, replicas, o)
	pred.StatefulSet = &prediction.StatefulSetInfo{
		PodManagementPolicy: res.Policy, Start: res.Start, End: res.End,
		Stalled: res.Stalled, StallPod: res.StallPod, StallReason: res.StallReason,
		DeletedBeforeStall: res.DeletedBeforeStall, ClaimPolicy: res.ClaimPolicy,
	}
	pos := 0
	for _, f := range res.Pods {
		if f.Fate == statefulset.FateCreate {
			pred.Creates++
			continue
		}
		pp, counted := setPodEntry(f, c0, &pos)
		if counted {
			current++
		}
		if pp.Fate == prediction.FateDelete {
			pred.Victims = append(pred.Victims, pp.Name)
		}
		pred.Pods = append(pred.Pods, pp)
	}
	pred.CurrentReplicas = current
	for _, c := range res.Claims {
		cl := prediction.Claim{Name: c.Name, Pod: c.Pod, Fate: c.Fate, Ordinal: c.Ordinal}
		if s.ClaimsKnown {
			cl.Exists = ptr.To(c.Checked)
		}
		pred.StatefulSet.Claims = append(pred.StatefulSet.Claims, cl)
	}
	pred.Warnings = append(pred.Warnings, res.Notes...)
	pred.Message = summary(pred, set.DeletionTimestamp != nil)
	if res.Stalled {
		pred.Message += fmt.Sprintf("; the scale-down STALLS at %s: %s", res.StallPod, res.StallReason)
		if len(res.DeletedBeforeStall) == 0 {
			pred.Message = strings.Replace(pred.Message, "no pod would be deleted", "no pod would be deleted now", 1)
		}
	}
	return pred, nil
}

// setPodEntry is one of the set's pods in the table; counted: it counts
// as a current replica. pos numbers the deletions.
func setPodEntry(f statefulset.PodFate, c0 *engine.Comparator, pos *int) (prediction.Pod, bool) {
	var pp prediction.Pod
	if f.Pod != nil {
		pp = podEntry(ptr.To(engine.FromPod(f.Pod)), c0)
		pp.Owner = ownerText(f.Pod)
	} else {
		pp.Name = f.Name
	}
	if f.Ordinal >= 0 {
		ord := f.Ordinal
		pp.Ordinal = &ord
	}
	pp.Certain, pp.Reason = true, f.Reason
	switch f.Fate {
	case statefulset.FateDelete:
		*pos++
		pp.Position, pp.DeleteProbability = *pos, 1
		pp.Fate = prediction.FateDelete
		if !f.BeforeStall {
			pp.Fate, pp.DeleteProbability = prediction.FateBlocked, 0
		}
		pp.DecidedBy = &prediction.Decision{Rule: prediction.RuleOrdinal, Name: "reverse-ordinal", This: fmt.Sprint(f.Ordinal), Text: f.Reason}
		return pp, true
	case statefulset.FateKeep:
		pp.Fate = prediction.FateKeep
		return pp, true
	case statefulset.FateTerminating:
		pp.Fate = prediction.FateTerminating
	case statefulset.FateRecreate:
		pp.Fate = prediction.FateRecreate
		return pp, true
	default:
		pp.Fate = prediction.FateIgnored
	}
	return pp, false
}
