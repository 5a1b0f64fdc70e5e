package workload

import (
	"fmt"
	"maps"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/scale-preview/scale-preview/pkg/autoscaler"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/rules"
	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// UseRecommendation, passed as the replica count for a
// HorizontalPodAutoscaler, previews the autoscaler's own next step.
const UseRecommendation int32 = -1

// predictAutoscaler computes the autoscaler's next step and predicts its
// victims with the target's own model. replicas >= 0 previews that count
// instead (--replicas).
func predictAutoscaler(s *snapshot.Snapshot, ref snapshot.Ref, replicas int32, o Options) (*prediction.Prediction, error) {
	h, ok := named(s.HPAs, ref)
	if !ok {
		return nil, &NotFoundError{Ref: ref}
	}
	target, ok := snapshot.AutoscalerTarget(h)
	if !ok {
		t := h.Spec.ScaleTargetRef
		return nil, fmt.Errorf("%w: HorizontalPodAutoscaler %s scales %s %s (%s), which scale-preview does not model", ErrUnsupported, h.Name, t.Kind, t.Name, t.APIVersion)
	}
	spec, status, sel, err := scaleOf(s, target)
	if err != nil {
		return nil, err
	}
	var pods []*corev1.Pod
	for _, p := range s.Pods {
		if p.Namespace == h.Namespace && sel.Matches(labels.Set(p.Labels)) {
			pods = append(pods, p)
		}
	}
	cfg := autoscaler.DefaultConfig()
	cfg.ConfigurableTolerance = o.Rules.Autoscaler.ConfigurableTolerance
	rec, err := autoscaler.Recommend(autoscaler.Input{HPA: h, SpecReplicas: spec, StatusReplicas: status, Pods: pods, Now: o.Now, Config: cfg})
	if err != nil {
		return nil, err
	}
	minR := int32(1)
	if h.Spec.MinReplicas != nil {
		minR = *h.Spec.MinReplicas
	}
	info := &prediction.Autoscaler{Name: h.Name, MinReplicas: minR, MaxReplicas: h.Spec.MaxReplicas, Recommendation: rec}
	manual := replicas >= 0
	if !manual {
		replicas = rec.Desired
	}
	info.Previewed = replicas

	p, err := Predict(s, target, replicas, o)
	if err != nil {
		return nil, err
	}
	p.Autoscaler = info
	// The autoscaler's gates matter here: list them with the target's.
	maps.Copy(p.Rules.FeatureGates, o.Rules.GatesOf(rules.KindAutoscaler))
	var warnings []string
	if manual {
		switch {
		case replicas < minR:
			warnings = append(warnings, fmt.Sprintf("%d is below the autoscaler's minReplicas %d: it scales back up to %d at its next sync", replicas, minR, minR))
		case replicas > h.Spec.MaxReplicas:
			warnings = append(warnings, fmt.Sprintf("%d is above the autoscaler's maxReplicas %d: it scales down to %d at its next sync", replicas, h.Spec.MaxReplicas, h.Spec.MaxReplicas))
		}
		p.Message = fmt.Sprintf("previewing %d replicas (the autoscaler %s recommends %s): %s", replicas, h.Name, recText(rec), p.Message)
	} else {
		p.Message = fmt.Sprintf("the autoscaler %s recommends %s (%s): %s", h.Name, recText(rec), rec.Reason, p.Message)
		if !rec.Certain {
			p.Certain = false
			if rec.DesiredMax > rec.Desired && rec.Desired < spec {
				markOpen(s, target, rec, p, o)
			}
		}
	}
	for _, u := range rec.Uncertain {
		warnings = append(warnings, "recommendation uncertain: "+u)
	}
	for _, n := range rec.Notes {
		warnings = append(warnings, "autoscaler: "+n)
	}
	p.Warnings = append(p.Warnings, warnings...)
	return p, nil
}

// markOpen: the recommendation is a range; pods deleted at its low end but
// kept at its high end are open.
func markOpen(s *snapshot.Snapshot, target snapshot.Ref, rec *autoscaler.Recommendation, p *prediction.Prediction, o Options) {
	hi, err := Predict(s, target, min(rec.DesiredMax, rec.Current), o)
	if err != nil {
		return
	}
	sure := map[string]bool{}
	for _, v := range hi.Victims {
		sure[v] = true
	}
	for i := range p.Pods {
		pod := &p.Pods[i]
		if pod.Fate == prediction.FateDelete && !sure[pod.Name] {
			pod.Certain = false
			pod.Reason = strings.TrimPrefix(pod.Reason+"; ", "; ") + fmt.Sprintf("deleted only if the autoscaler goes below %d", rec.DesiredMax)
		}
	}
}

func recText(r *autoscaler.Recommendation) string {
	s := fmt.Sprintf("%d replicas (now %d)", r.Desired, r.Current)
	if r.DesiredMax != r.Desired {
		s = fmt.Sprintf("%d to %d replicas (now %d)", r.Desired, r.DesiredMax, r.Current)
	}
	return s
}

// scaleOf reads what the target's scale subresource shows: spec and status
// replicas and the selector.
func scaleOf(s *snapshot.Snapshot, ref snapshot.Ref) (spec, status int32, sel labels.Selector, err error) {
	var ls *metav1.LabelSelector
	found := false
	switch ref.Kind {
	case snapshot.Deployment:
		if d, ok := named(s.Deployments, ref); ok {
			spec, status, ls, found = replicasOf(d.Spec.Replicas), d.Status.Replicas, d.Spec.Selector, true
		}
	case snapshot.ReplicaSet:
		if rs, ok := named(s.ReplicaSets, ref); ok {
			spec, status, ls, found = replicasOf(rs.Spec.Replicas), rs.Status.Replicas, rs.Spec.Selector, true
		}
	case snapshot.StatefulSet:
		if st, ok := named(s.StatefulSets, ref); ok {
			spec, status, ls, found = replicasOf(st.Spec.Replicas), st.Status.Replicas, st.Spec.Selector, true
		}
	case snapshot.ReplicationController:
		if rc, ok := named(s.ReplicationControllers, ref); ok {
			spec, status, found = replicasOf(rc.Spec.Replicas), rc.Status.Replicas, true
			sel = labels.SelectorFromSet(rc.Spec.Selector)
		}
	}
	if !found {
		return 0, 0, nil, &NotFoundError{Ref: ref}
	}
	if sel == nil {
		if sel, err = metav1.LabelSelectorAsSelector(ls); err != nil {
			return 0, 0, nil, fmt.Errorf("%s %s has an invalid selector: %v", ref.Kind, ref.Name, err)
		}
	}
	return spec, status, sel, nil
}

// named finds ref's object in a snapshot list.
func named[T metav1.Object](list []T, ref snapshot.Ref) (T, bool) {
	for _, o := range list {
		if o.GetName() == ref.Name && o.GetNamespace() == ref.Namespace {
			return o, true
		}
	}
	var zero T
	return zero, false
}
