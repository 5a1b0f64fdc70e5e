package rollout

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"

	"github.com/scale-preview/scale-preview/pkg/deployment"
	"github.com/scale-preview/scale-preview/pkg/prediction"
	"github.com/scale-preview/scale-preview/pkg/scheduling"
	"github.com/scale-preview/scale-preview/pkg/workload"
)

// Predict runs the Deployment's rollout for the change: step by step, and
// again as a bad release whose new pods never become available.
func Predict(in Input) (*Result, error) {
	if in.StatefulSet != nil {
		return predictStatefulSet(in)
	}
	if in.DaemonSet != nil {
		return predictDaemonSet(in)
	}
	d := in.Deployment
	if err := checkStrategy(d); err != nil {
		return nil, err
	}
	tmpl, err := newTemplate(d, in.Change, in.Now)
	if err != nil {
		return nil, err
	}
	strategy := string(d.Spec.Strategy.Type)
	if strategy == "" {
		strategy = string(appsv1.RollingUpdateDeploymentStrategyType)
	}
	res := &Result{Certain: true, Rollout: prediction.Rollout{Kind: "Deployment", Name: d.Name, Namespace: d.Namespace,
		Strategy: strategy, Change: in.Change.Kind}}
	if d.Spec.Paused && in.Change.Kind != ChangeResume {
		res.Rollout.Outcome = prediction.RolloutNotStarted
		res.Rollout.Reason = "the Deployment is paused: the controller changes no ReplicaSet's template until it is resumed"
		res.Rollout.Unblock = "kubectl rollout resume deployment/" + d.Name
		return res, nil
	}
	// One scheduler's view for both runs: the bad release's is a copy.
	view, err := scheduling.NewView(in.Nodes, in.Pods, in.Namespaces, in.Scheduler)
	if err != nil {
		return nil, err
	}
	badView := view.Clone()
	s, err := newSim(in, tmpl, false, view)
	if err != nil {
		return nil, err
	}
	s.run(res)
	bad, _ := newSim(in, tmpl, true, badView)
	badRes := &Result{Certain: true}
	bad.run(badRes)
	res.Rollout.IfNewPodsFail = failed(badRes, bad.available())
	return res, nil
}

// run is the rollout's steps until it completes or stops moving.
func (s *sim) run(res *Result) {
	r := &res.Rollout
	for len(r.Steps) < maxSteps {
		st := s.step()
		idle := !st.changed && len(s.terminat) == 0
		if idle && (s.neverReady || len(s.waiting()) == 0) {
			break
		}
		waiting := s.waiting()
		st.out.WaitsFor = len(waiting)
		if s.neverReady {
			st.out.WaitsFor = 0
		}
		r.Steps = append(r.Steps, st.out)
		res.Victims = append(res.Victims, st.out.Deleted...)
		if s.done() {
			break
		}
		if !s.neverReady {
			for _, m := range waiting {
				makeAvailable(m, s.in.Now)
			}
			s.oneByOne = len(waiting) > 1
		}
		s.finishTerminations()
	}
	s.verdict(res)
}

// verdict: completes, stalls (why, and what unblocks it), or not-started.
func (s *sim) verdict(res *Result) {
	r := &res.Rollout
	res.Certain = s.certain
	res.Warnings = workload.Dedupe(append(res.Warnings, s.warnings...))
	switch {
	case len(r.Steps) == 0 && s.done():
		r.Outcome, r.Reason = prediction.RolloutNotStarted, "nothing changes: the new template is the one already rolled out"
	case s.done():
		r.Outcome = prediction.RolloutCompletes
	default:
		r.Outcome = prediction.RolloutStalls
		r.Remaining = s.old()
		r.Reason, r.Unblock = s.stallReason()
		if pds := s.in.Deployment.Spec.ProgressDeadlineSeconds; pds != nil {
			r.Reason += fmt.Sprintf("; after progressDeadlineSeconds (%ds) the Deployment's Progressing condition turns False (ProgressDeadlineExceeded): that only sets a condition, nothing rolls back", *pds)
		}
	}
}

// stallReason names what the rollout waits for forever.
func (s *sim) stallReason() (string, string) {
	if un := s.unplaced(); len(un) > 0 {
		reason := fmt.Sprintf("%d new pod(s) fit no node: %s", len(un), un[0].fitError)
		if deployment.MaxUnavailable(s.d) == 0 {
			reason += "; with maxUnavailable 0 no old pod is deleted to make room"
		}
		return reason, "free room on a node the new pods may use (or allow maxUnavailable > 0 so that old pods make room)"
	}
	if s.quotaBlocked != "" {
		return "the ReplicaSet controller cannot create the new pods: " + s.quotaBlocked + "; " + quotaRetryLong + "; nothing in the rollout frees the quota",
			"raise the ResourceQuota's hard limit, or free quota in the namespace (or allow maxUnavailable > 0 so that old pods free it)"
	}
	return "the controller makes no further change (" + strings.Join(s.old(), ", ") + " remain)", "check the Deployment's conditions"
}

// runWithBadRelease runs a StatefulSet's or DaemonSet's update into res,
// then again as a bad release whose new pods never become available.
func runWithBadRelease[S interface {
	run(*Result)
	availableNow() int32
}](res *Result, newSim func(neverReady bool) (S, error)) error {
	s, err := newSim(false)
	if err != nil {
		return err
	}
	s.run(res)
	bad, _ := newSim(true)
	badRes := &Result{Certain: true}
	bad.run(badRes)
	res.Rollout.IfNewPodsFail = failed(badRes, bad.availableNow())
	return nil
}

// failed is the bad release's cost: every old pod it deleted, and the
// lowest availability.
func failed(bad *Result, now int32) prediction.IfNewPodsFail {
	out := prediction.IfNewPodsFail{Deleted: bad.Victims, AvailableMin: now}
	for _, st := range bad.Rollout.Steps {
		out.AvailableMin = min(out.AvailableMin, st.AvailableMin)
	}
	return out
}
