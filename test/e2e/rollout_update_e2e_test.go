package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	deploymentutil "k8s.io/kubernetes/pkg/controller/deployment/util"
)

// TestRolloutUpdateE2E is the real-control-plane proof of `kubectl
// scale-preview rollout`: seeded random workloads on a control plane of
// its own (kube-apiserver with ResourceQuota admission; the deployment,
// replicaset, statefulset, daemonset, disruption, resourcequota and
// garbage-collector controllers; the real kube-scheduler; the drain's fake
// kubelet with per-revision readiness). Per scenario: set up and settle,
// predict (live, as the read-only viewer), start the rollout with kubectl
// v1.37.1, record every pod deletion, creation and binding until it
// completes or stops progressing, self-check the recording against the
// controllers' rules, then compare with the prediction.
func TestRolloutUpdateE2E(t *testing.T) {
	picked := updatePicked()
	kubectl := drainKubectl(t)
	start := time.Now()
	dc := startKubeletCluster(t, updateControllers)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := grantRolloutReads(ctx, dc.cp.admin); err != nil {
		t.Fatal(err)
	}
	t.Logf("rollout control plane up in %s; E2E_SEED=%d, scenarios %v", time.Since(start).Round(time.Millisecond), env.seed, picked)
	for _, i := range picked {
		s := randomUpdateScenario(env.seed, i)
		t.Run(fmt.Sprintf("scenario-%d-%s", i, s.family), func(t *testing.T) {
			runUpdateScenario(t, dc, kubectl, s)
		})
	}
	if m := updateRun.chanceMisses(); len(m) > 0 {
		t.Errorf("chances that did not hold: %v", m)
	}
	t.Log(updateRun.String())
	fmt.Fprintln(os.Stderr, updateRun.String())
	logf("rollout e2e took %s", time.Since(start).Round(time.Second))
}

// updatePicked: E2E_ROLLOUT_UPDATE_ONLY=i, else with -short the list in
// E2E_ROLLOUT_UPDATE_SHORT, else the first E2E_ROLLOUT_UPDATE.
func updatePicked() []int { return scenariosPicked("E2E_ROLLOUT_UPDATE", "0,1,4,6,7,8", 27) }

// updateQuiet is how long nothing may happen before the rollout counts as
// stalled: past the Ready delays and minReadySeconds, and for a quota,
// past the ReplicaSet controller's back-off after a refused creation.
func updateQuiet(s *updateScenario) time.Duration {
	q := 6*time.Second + time.Duration(s.minReadySeconds)*time.Second
	if s.quota != "" {
		q = 60 * time.Second
	}
	return q
}

func runUpdateScenario(t *testing.T, dc *drainCluster, kubectl string, s *updateScenario) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	c := dc.cp.admin
	t.Log(s.String())
	defer func() {
		if err := s.tearDown(ctx, c); err != nil {
			t.Errorf("tear down: %v", err)
		}
	}()
	began := time.Now()
	if err := s.setUp(ctx, dc); err != nil {
		t.Fatalf("set up: %v", err)
	}
	setUpTook := time.Since(began)
	s.saved = s.save(ctx, dc, kubectl)
	pred, skip := updatePredict(ctx, t, dc, s)
	rec, rv, err := newUpdateRecorder(ctx, c, s)
	if err != nil {
		t.Fatal(err)
	}
	dc.kubelet.setRevisionReadiness(s.ns, revisionReadiness{delay: updateNewReady, never: s.newNeverReady})
	o, err := s.record(ctx, c, rec, rv, func() error { _, err := s.act(ctx, kubectl, dc.cp.adminKubeconfig); return err },
		updateQuiet(s), 3*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if o.outcome == "stalls" && s.quota != "" {
		if o.backOff, err = s.quotaRoom(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("set up in %s; %s (waiting out the quota back-off: %v)", setUpTook.Round(time.Millisecond), o, o.backOff)
	updateSelfCheck(t, s, o)
	updateRun.mu.Lock()
	updateRun.scenarios++
	updateRun.outcomes[o.outcome]++
	updateRun.mu.Unlock()
	if skip != "" {
		updateRun.mu.Lock()
		updateRun.skipped = append(updateRun.skipped, fmt.Sprintf("%d: %s", s.index, skip))
		updateRun.mu.Unlock()
		t.Skipf("comparison skipped: %s (the real rollout ran and was self-checked)", skip)
	}
	cmp := compareUpdate(s, pred, o)
	updateRun.add(cmp, s.index)
	t.Logf("compared %v; uncertain %v", cmp.compared, cmp.uncertain)
	for _, m := range cmp.mismatches {
		t.Errorf("MISMATCH (E2E_ROLLOUT_UPDATE_ONLY=%d E2E_SEED=%d; cluster before in %s): %s", s.index, env.seed, s.saved, m)
	}
}

var updatePluginProbe struct {
	once sync.Once
	why  string
}

// updatePluginMissing says why the plugin cannot predict rollouts.
func updatePluginMissing(ctx context.Context) string {
	updatePluginProbe.once.Do(func() {
		if env.pluginPath == "" {
			updatePluginProbe.why = "plugin unavailable: " + env.pluginMissing
			return
		}
		run, err := runPlugin(ctx, env.pluginPath, "rollout", "--help")
		if err != nil || run.exitCode != 0 || !strings.Contains(run.stdout, "--image") {
			updatePluginProbe.why = "the plugin has no rollout mode (kubectl scale-preview rollout TYPE/NAME --image) yet"
		}
	})
	return updatePluginProbe.why
}

// updatePredict runs `rollout TYPE/NAME -o json` (with --image for an image
// change) as the viewer. It returns why the comparison is skipped when the
// plugin lacks the mode or the kind.
func updatePredict(ctx context.Context, t *testing.T, dc *drainCluster, s *updateScenario) (*rolloutPrediction, string) {
	if why := updatePluginMissing(ctx); why != "" {
		return nil, why
	}
	if s.change == "desired" {
		return desiredPredict(ctx, t, dc, s) // desired_rollout_e2e_test.go
	}
	args := []string{"rollout", strings.ToLower(s.kind) + "/" + s.name, "-n", s.ns, "--kubeconfig", dc.cp.viewerKubeconfig, "-o", "json"}
	if s.change == "image" {
		args = append(args, "--image", appContainer+"="+updateImage)
	}
	run, err := runPlugin(ctx, env.pluginPath, args...)
	if err != nil {
		t.Fatalf("plugin: %v", err)
	}
	if run.exitCode != 0 {
		if run.exitCode == 7 || kindUnsupported(run.stderr) { // 7: ExitUnsupported, a kind the plugin does not model
			return nil, fmt.Sprintf("the plugin's rollout mode does not support %s yet: %s", s.kind, strings.TrimSpace(run.stderr))
		}
		t.Fatalf("plugin failed: %s\nthe cluster is in %s (repeat offline with -f)", run, s.saved)
	}
	p, err := parseRolloutPrediction(run.stdout)
	if err != nil {
		t.Fatalf("%v\n%s", err, firstLines(run.stdout, 40))
	}
	t.Logf("plugin (%s): certain %v, victims %v\n%s", run.duration.Round(time.Millisecond), p.Certain, p.Victims, firstLines(run.stdout, 120))
	return p, ""
}

func kindUnsupported(stderr string) bool {
	s := strings.ToLower(stderr)
	return strings.Contains(s, "not supported") || strings.Contains(s, "unsupported") || strings.Contains(s, "not yet")
}

// updateSelfCheck checks the recording against what the controllers'
// rules say whatever the plugin predicts (rolling.go, recreate.go,
// stateful_set_control.go, daemon/update.go), where a scenario makes the
// answer plain.
func updateSelfCheck(t *testing.T, s *updateScenario, o *updateObserved) {
	if s.desiredReplicas > 0 {
		return // a scale-in with the rollout: the rules below are a rollout's alone
	}
	var fails []string
	fail := func(format string, args ...any) { fails = append(fails, fmt.Sprintf(format, args...)) }
	if want := expectedOutcome(s); want != "" && o.outcome != want {
		fail("outcome %s, expected %s", o.outcome, want)
	}
	switch {
	case s.kind == "Deployment" && s.recreate:
		if len(o.batches) != 1 || len(o.victims) != s.replicas {
			fail("Recreate deletes every old pod in one pass: passes %v", o.batches)
		}
		if first, lastGone := o.firstCreate(), o.lastOldGone(); !first.IsZero() && first.Before(lastGone) {
			fail("Recreate created a new pod %s before the last old one was gone", lastGone.Sub(first))
		}
	case s.kind == "Deployment" && s.unhealthy < 0 && !s.midRollout:
		surge, unavail, _ := deploymentutil.ResolveFenceposts(s.surge, s.unavail, int32(s.replicas))
		if o.rec.availableMin < s.replicas-int(unavail) {
			fail("available fell to %d, below replicas-maxUnavailable %d", o.rec.availableMin, s.replicas-int(unavail))
		}
		if unavail > 0 && s.quota == "" && len(o.batches) > 0 && len(o.batches[0]) != min(int(unavail), s.replicas) {
			fail("first pass deleted %v, expected maxUnavailable=%d old pods (surge %d)", o.batches[0], unavail, surge)
		}
	case s.kind == "StatefulSet" && s.stsUnavail == nil && s.unhealthy < 0 && !s.newNeverReady:
		var want []string
		for ord := s.replicas - 1; ord >= int(s.partition); ord-- {
			want = append(want, fmt.Sprintf("%s/%s-%d", s.ns, s.name, ord))
		}
		if strings.Join(o.victims, ",") != strings.Join(want, ",") || len(o.batches) != len(want) {
			fail("StatefulSet update deletes %v one at a time, real passes %v", want, o.batches)
		}
	case s.kind == "DaemonSet" && s.surge == nil:
		mu, _ := intstr.GetScaledValueFromIntOrPercent(s.unavail, len(s.nodes), true)
		for _, b := range o.batches {
			if len(b) > mu {
				fail("DaemonSet pass %v deletes more than maxUnavailable=%d", b, mu)
			}
		}
	}
	updateRun.mu.Lock()
	updateRun.selfChecks++
	if len(fails) > 0 {
		updateRun.selfFailed++
	}
	updateRun.mu.Unlock()
	for _, f := range fails {
		t.Errorf("self-check (E2E_ROLLOUT_UPDATE_ONLY=%d): %s", s.index, f)
	}
}

// expectedOutcome is the outcome plain from the scenario's shape ("" when
// it is not).
func expectedOutcome(s *updateScenario) string {
	switch {
	case s.newNeverReady:
		return "stalls"
	case s.unhealthy >= 0 || s.tightDSNode != "" || s.midRollout:
		return ""
	case s.family == "tight" || s.family == "quota":
		_, unavail, _ := deploymentutil.ResolveFenceposts(s.surge, s.unavail, int32(s.replicas))
		if unavail == 0 {
			return "stalls"
		}
		return ""
	}
	return "completes"
}

func (o *updateObserved) firstCreate() time.Time {
	for _, ev := range o.rec.events {
		if ev.what == "create" {
			return ev.at
		}
	}
	return time.Time{}
}

func (o *updateObserved) lastOldGone() time.Time {
	var last time.Time
	for _, ev := range o.rec.events {
		if ev.what == "gone" && o.rec.pods[ev.uid].old {
			last = ev.at
		}
	}
	return last
}
