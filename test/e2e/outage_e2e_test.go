package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The outage control plane's settings: short, so that a scenario takes
// seconds. The plugin is given the same values as flags.
const (
	outageMonitorPeriod = time.Second
	outageGracePeriod   = 6 * time.Second
	outageLeaseDuration = 4 * time.Second // the fake kubelet renews every quarter of it
	outageDefaultTolSec = 5               // kube-apiserver's DefaultTolerationSeconds
	outageControllers   = "node-lifecycle-controller,taint-eviction-controller,replicaset-controller,deployment-controller," +
		"statefulset-controller,daemonset-controller,job-controller,pod-garbage-collector-controller,disruption-controller," +
		"garbage-collector-controller"
)

// outageSettings are the rates under test (E2E_OUTAGE_RATE: primary and
// secondary, nodes per second per zone). Not 1: SwapLimiter skips a swap to
// the QPS the current limiter reports, and the paused limiter
// (fakeNeverRateLimiter) reports 1, so at exactly 1 node/s a zone that
// paused (partial disruption, every zone down) never taints again.
type outageSettings struct{ rate, secondary float64 }

func outageRates() outageSettings {
	s := outageSettings{rate: 0.5, secondary: 0.4}
	if v := strings.Split(envString("E2E_OUTAGE_RATE", ""), ","); len(v) == 2 {
		a, err1 := strconv.ParseFloat(v[0], 64)
		b, err2 := strconv.ParseFloat(v[1], 64)
		if err1 == nil && err2 == nil {
			s = outageSettings{a, b}
		}
	}
	return s
}

func envString(name, def string) string {
	if v := strings.TrimSpace(os.Getenv(name)); v != "" {
		return v
	}
	return def
}

func (s outageSettings) pluginFlags() []string {
	return []string{"--node-monitor-grace-period=" + outageGracePeriod.String(), "--node-monitor-period=" + outageMonitorPeriod.String(),
		"--node-lease-duration=" + outageLeaseDuration.String(), fmt.Sprintf("--node-eviction-rate=%g", s.rate),
		fmt.Sprintf("--secondary-node-eviction-rate=%g", s.secondary), "--unhealthy-zone-threshold=0.55", "--large-cluster-size-threshold=50"}
}

// outageTolerance widens every predicted window: one monitor period (the
// pass that notices a change may come a period late) plus E2E_OUTAGE_SLACK
// (default 1 s: the fake kubelet's 150 ms loop, the 100 ms tainting pass,
// the taint eviction worker, watch delivery, on two loaded cores).
func outageTolerance() time.Duration {
	return outageMonitorPeriod + envDuration("E2E_OUTAGE_SLACK", time.Second)
}

// TestOutageE2E fails nodes for real (their fake kubelet stops) under the
// node lifecycle and taint eviction controllers, after the plugin's
// `outage -o json`, and compares every determined answer.
func TestOutageE2E(t *testing.T) {
	picked := outagePicked()
	rates := outageRates()
	cl := startOutageCluster(t, rates)
	logf("outage: E2E_SEED=%d, scenarios %v, rate %g/%g per s, tolerance ±%s", env.seed, picked, rates.rate, rates.secondary, outageTolerance())
	for _, i := range picked {
		s := randomOutageScenario(env.seed, i)
		t.Run(fmt.Sprintf("scenario-%d", i), func(t *testing.T) { runOutageScenario(t, cl, rates, s) })
	}
	t.Log(outageTotals.String())
}

// outagePicked: E2E_OUTAGE_ONLY, else -short's E2E_OUTAGE_SHORT list, else
// E2E_OUTAGE scenarios from 0.
func outagePicked() []int {
	if v := os.Getenv("E2E_OUTAGE_ONLY"); v != "" {
		if i, err := strconv.Atoi(v); err == nil {
			return []int{i}
		}
	}
	if testing.Short() {
		var out []int
		for _, f := range strings.Split(envString("E2E_OUTAGE_SHORT", "0,2,3"), ",") {
			if i, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
				out = append(out, i)
			}
		}
		return out
	}
	var out []int
	for i := range envInt("E2E_OUTAGE", 16) {
		out = append(out, i)
	}
	return out
}

type outageCluster struct {
	*drainCluster
	nodes *outageKubelet
}

// startOutageCluster starts a control plane of its own with the node
// lifecycle settings, the outage kubelet and the real kube-scheduler.
func startOutageCluster(t *testing.T, r outageSettings) *outageCluster {
	t.Helper()
	api := []string{fmt.Sprintf("--default-not-ready-toleration-seconds=%d", outageDefaultTolSec),
		fmt.Sprintf("--default-unreachable-toleration-seconds=%d", outageDefaultTolSec)}
	kcm := []string{"--node-monitor-period=" + outageMonitorPeriod.String(), "--node-monitor-grace-period=" + outageGracePeriod.String(),
		"--node-startup-grace-period=" + outageGracePeriod.String(), fmt.Sprintf("--node-eviction-rate=%g", r.rate),
		fmt.Sprintf("--secondary-node-eviction-rate=%g", r.secondary), "--unhealthy-zone-threshold=0.55", "--large-cluster-size-threshold=50"}
	cp, err := startControlPlaneArgs(env.cp.binDir, outageControllers, api, kcm)
	if err != nil {
		t.Fatalf("outage control plane: %v", err)
	}
	cl := &outageCluster{drainCluster: &drainCluster{cp: cp}}
	t.Cleanup(func() { cl.stop(t) })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := drainDeleteProbe(ctx, cp.admin); err != nil {
		t.Fatalf("outage control plane: removing the probe: %v", err)
	}
	cl.kubelet, cl.nodes = startOutageKubelet(cp.admin, outageLeaseDuration/4)
	cl.startScheduler(t)
	return cl
}

// outageTally sums the comparisons of a run for its summary line.
type outageTally struct {
	mu                                       sync.Mutex
	scenarios, compared, checked, undet, bad int
}

var outageTotals outageTally

func (o *outageTally) add(v *outageVerdict) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if v == nil {
		o.scenarios++
		return
	}
	o.compared++
	o.checked += v.checked
	o.undet += v.undetermined
	o.bad += len(v.mismatches)
}

func (o *outageTally) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return fmt.Sprintf("e2e outage: %d scenarios, %d compared with the plugin: %d determined answers checked, %d mismatched, %d undetermined",
		o.scenarios, o.compared, o.checked, o.bad, o.undet)
}

func runOutageScenario(t *testing.T, cl *outageCluster, r outageSettings, s *outageScenario) {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	c := cl.cp.admin
	t.Log(s.String())
	defer func() {
		if err := s.tearDown(ctx, c); err != nil {
			t.Errorf("tear down: %v", err)
		}
		cl.nodes.forget(s.fail)
	}()
	start := time.Now()
	if err := s.setUp(ctx, c); err != nil {
		t.Fatalf("set up: %v", err)
	}
	setUp := time.Since(start)
	pred := outagePredict(ctx, t, cl, r, s)
	w, err := startOutageWatch(ctx, c, s.ns, filepath.Join(cl.cp.dir, "kube-controller-manager.log"))
	if err != nil {
		t.Fatal(err)
	}
	t0 := cl.nodes.fail(s.fail, s.condition)
	maxTol := time.Duration(s.maxTolerationSeconds(outageDefaultTolSec)) * time.Second
	spread := time.Duration(float64(len(s.fail))/r.rate) * time.Second
	minRun := outageGracePeriod + 2*outageMonitorPeriod + spread + maxTol + 2*time.Second
	// A Job's replacement waits for its back-off (about 10 s).
	quiet := max(maxTol, 11*time.Second) + outageTolerance()
	obs, err := w.record(ctx, t0, minRun, quiet)
	t.Logf("recorded after the failure (set-up %s, observed %s):\n%s", setUp.Round(time.Millisecond), obs.since().Round(time.Millisecond), strings.Join(obs.events, "\n"))
	t.Logf("zones logged: %v, all down: %v", obs.zones, obs.allDown)
	if err != nil {
		t.Fatal(err)
	}
	outageTotals.add(nil)
	outageSelfCheck(t, s, obs)
	if pred != nil {
		outageJudge(t, pred, obs)
	}
}
