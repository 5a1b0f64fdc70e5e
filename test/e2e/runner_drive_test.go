package e2e

// Driving: waiting for the controllers to settle, then predicting.

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// settle waits until the workload's controllers have caught up with every
// change (observedGeneration, pod counts per ReplicaSet) and nothing in the
// namespace changed for quiet. With afterScale, StatefulSets only need the
// quiet period (an OrderedReady set may legitimately stall).
func (r *scenarioRun) settle(ctx context.Context, quiet, timeout time.Duration, afterScale bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last string
	var since time.Time
	var lastWhy string
	err := pollUntil(ctx, 150*time.Millisecond, func(ctx context.Context) (bool, error) {
		fp, ok, why, err := r.fingerprint(ctx)
		if err != nil {
			lastWhy = err.Error()
			return false, nil
		}
		lastWhy = why
		if fp != last {
			last, since = fp, time.Now()
			return false, nil
		}
		return ok && time.Since(since) >= quiet, nil
	})
	if err != nil {
		return fmt.Errorf("controllers did not settle in %s (%s): %w", timeout, lastWhy, err)
	}
	return nil
}

// fingerprint summarises the namespace; ok says whether the controllers
// have observed the latest spec and the pod counts match it.
func (r *scenarioRun) fingerprint(ctx context.Context) (string, bool, string, error) {
	c := env.cp.admin
	pods, _, err := r.listPods(ctx)
	if err != nil {
		return "", false, "", err
	}
	var b strings.Builder
	activeBy := map[types.UID]int{}
	for _, p := range pods {
		fmt.Fprintf(&b, "%s/%s;", p.Name, p.ResourceVersion)
		if isActive(p) {
			activeBy[controllerUID(p)]++
		}
	}
	ok, why := true, ""
	checkRS := func(name string, uid types.UID, gen, observed int64, replicas int32) {
		if observed < gen {
			ok, why = false, fmt.Sprintf("%s observedGeneration %d < %d", name, observed, gen)
		} else if activeBy[uid] != int(replicas) {
			ok, why = false, fmt.Sprintf("%s has %d active pods, wants %d", name, activeBy[uid], replicas)
		}
	}
	switch r.sc.kind {
	case kindDeployment, kindRS:
		if r.sc.kind == kindDeployment {
			d, err := c.AppsV1().Deployments(r.ns).Get(ctx, workloadName, metav1.GetOptions{})
			if err != nil {
				return "", false, "", err
			}
			fmt.Fprintf(&b, "D%s;", d.ResourceVersion)
			if d.Status.ObservedGeneration < d.Generation {
				ok, why = false, "deployment not observed"
			}
		}
		rss, err := c.AppsV1().ReplicaSets(r.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return "", false, "", err
		}
		for _, rs := range rss.Items {
			fmt.Fprintf(&b, "RS%s/%s;", rs.Name, rs.ResourceVersion)
			checkRS(rs.Name, rs.UID, rs.Generation, rs.Status.ObservedGeneration, *rs.Spec.Replicas)
		}
	case kindRC:
		rc, err := c.CoreV1().ReplicationControllers(r.ns).Get(ctx, workloadName, metav1.GetOptions{})
		if err != nil {
			return "", false, "", err
		}
		fmt.Fprintf(&b, "RC%s;", rc.ResourceVersion)
		checkRS(rc.Name, rc.UID, rc.Generation, rc.Status.ObservedGeneration, *rc.Spec.Replicas)
	case kindSTS:
		s, err := c.AppsV1().StatefulSets(r.ns).Get(ctx, workloadName, metav1.GetOptions{})
		if err != nil {
			return "", false, "", err
		}
		fmt.Fprintf(&b, "STS%s;", s.ResourceVersion)
		if s.Status.ObservedGeneration < s.Generation {
			ok, why = false, "statefulset not observed"
		}
	}
	return b.String(), ok, why, nil
}

// ---------------------------------------------------------------- predict

// stableMargin: a prediction whose stableUntil is closer than this is
// redone after stableUntil has passed (log2 age buckets move with time).
func stableMargin() time.Duration { return envDuration("E2E_STABLE_MARGIN", 30*time.Second) }

func (r *scenarioRun) predict(ctx context.Context) error {
	if env.pluginPath == "" {
		r.predReason = env.pluginMissing
		return nil
	}
	for attempt := 0; ; attempt++ {
		long := (r.seq+attempt)%2 == 0
		pred, run, err := predict(ctx, r.sc.kind, r.ns, workloadName, r.sc.target, long)
		r.predRun = run
		if err != nil {
			if run != nil && run.exitCode == 0 && strings.TrimSpace(run.stdout) == "" && !requirePlugin() {
				r.predReason = "plugin printed nothing (not implemented yet?)"
				return nil
			}
			return err
		}
		r.pred = pred
		su, ok, _ := pred.stableUntilTime()
		if !ok {
			return nil
		}
		wait := time.Until(su)
		margin := stableMargin()
		if r.sc.stableMargin > 0 {
			margin = r.sc.stableMargin
		}
		if wait > margin || wait < -time.Hour || attempt >= 8 {
			return nil
		}
		if wait < 0 {
			wait = 0
		}
		r.notef("stableUntil %s is %s away: waiting past it and predicting again", su.Format(time.RFC3339), wait.Round(time.Millisecond))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait + 1100*time.Millisecond):
		}
	}
}
