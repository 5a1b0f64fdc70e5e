package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestDrainE2E compares `kubectl scale-preview drain -o json` with the real
// `kubectl drain` v1.37.1 on a control plane of its own (Eviction API,
// disruption and workload controllers, kube-scheduler, a fake kubelet), on
// seeded random scenarios: the first E2E_DRAIN (default 24), or with
// -short the scenarios E2E_DRAIN_SHORT lists (default 0,2,7,19: a Job and
// two budgets over one pod, a refusal, a two-node drain with a replacement
// that fits nowhere, a budget that blocks), E2E_DRAIN_ONLY=i for one. The
// plugin predicts first, live as the read-only viewer; then kubectl drain
// runs as admin with the same flags and --timeout.
func TestDrainE2E(t *testing.T) {
	picked := drainPicked()
	kubectl := drainKubectl(t)
	start := time.Now()
	dc := startDrainCluster(t)
	t.Logf("drain control plane up in %s; E2E_SEED=%d, scenarios %v", time.Since(start).Round(time.Millisecond), env.seed, picked)
	for _, i := range picked {
		s := randomDrainScenario(env.seed, i)
		t.Run(fmt.Sprintf("scenario-%d", i), func(t *testing.T) {
			runDrainScenario(t, dc, kubectl, s)
		})
	}
	t.Log(drainRun.String())
	fmt.Fprintln(os.Stderr, drainRun.String())
}

// drainPicked are the scenario numbers this run drains.
func drainPicked() []int { return scenariosPicked("E2E_DRAIN", "0,2,7,19", 24) }

// scenariosPicked: ENV_ONLY=i; else with -short (and ENV unset) the list
// in ENV_SHORT, or short; else the first ENV scenarios (n by default).
func scenariosPicked(env, short string, n int) []int {
	if only := envInt(env+"_ONLY", -1); only >= 0 {
		return []int{only}
	}
	var picked []int
	if testing.Short() && os.Getenv(env) == "" {
		list := os.Getenv(env + "_SHORT")
		if list == "" {
			list = short
		}
		for _, f := range strings.Split(list, ",") {
			if i, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
				picked = append(picked, i)
			}
		}
		return picked
	}
	for i := range envInt(env, n) {
		picked = append(picked, i)
	}
	return picked
}

// drainKubectl is kubectl built at the pinned release with the control
// plane (test/.bin/kubectl), or E2E_KUBECTL.
func drainKubectl(t *testing.T) string {
	if k := os.Getenv("E2E_KUBECTL"); k != "" {
		return k
	}
	k := filepath.Join(env.build.binDir, "kubectl")
	if _, err := os.Stat(k); err != nil {
		t.Fatalf("kubectl: %v (set E2E_KUBECTL)", err)
	}
	return k
}

// drainTimeout gives each replacement a retry period (kubectl retries a
// 429 every 5 s) and a second to turn Ready, for the most pods one
// workload has on the drained nodes, plus a margin.
func drainTimeout(s *drainScenario) time.Duration {
	return time.Duration(12+6*s.pdbPodsOnDrained()) * time.Second
}

func runDrainScenario(t *testing.T, dc *drainCluster, kubectl string, s *drainScenario) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	c := dc.cp.admin
	t.Log(s.String())
	defer func() {
		if err := s.tearDown(ctx, c); err != nil {
			t.Errorf("tear down: %v", err)
		}
	}()
	if err := s.setUp(ctx, c); err != nil {
		t.Fatalf("set up: %v", err)
	}
	before, err := drainSnapshotBefore(ctx, c, s)
	if err != nil {
		t.Fatal(err)
	}
	timeout := drainTimeout(s)
	s.saved = drainSaveCluster(ctx, dc, kubectl, s)
	pred := drainPredict(ctx, t, dc, s, timeout)

	stdout, stderr, code, took, err := runKubectlDrain(ctx, kubectl, dc.cp.adminKubeconfig, s, timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("kubectl drain exit %d in %s (--timeout=%s)\nstdout:\n%s\nstderr:\n%s", code, took.Round(time.Millisecond), timeout, stdout, stderr)
	nodes, err := observeDrain(ctx, c, s, before, stderr)
	if err != nil {
		t.Fatal(err)
	}
	var evicted []string
	for _, o := range nodes {
		evicted = append(evicted, o.evicted...)
	}
	repl, err := observeReplacements(ctx, c, before, evicted, 25*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	drainCheckSelf(t, nodes, code, before, stderr)
	drainRecord(t, s, pred, nodes, repl, before)
}

// drainSaveCluster writes what the plugin reads, as the drain docs' one
// kubectl get command saves it, so that a prediction can be repeated
// offline with -f (the directory is kept when the test fails).
func drainSaveCluster(ctx context.Context, dc *drainCluster, kubectl string, s *drainScenario) string {
	out := filepath.Join(dc.cp.dir, s.ns+".yaml")
	cmd := exec.CommandContext(ctx, kubectl, "get", "nodes,pods,pdb,deploy,rs,sts,ds,rc,jobs,priorityclasses", "-A", "-o", "yaml",
		"--kubeconfig", dc.cp.adminKubeconfig)
	b, err := cmd.Output()
	if err == nil {
		err = os.WriteFile(out, b, 0o600)
	}
	if err != nil {
		return "(not saved: " + err.Error() + ")"
	}
	return out
}

var drainPluginProbe struct {
	once sync.Once
	why  string
}

// drainPluginMissing says why the plugin cannot predict drains ("" when it
// can): not built, or built without the drain command.
func drainPluginMissing(ctx context.Context) string {
	drainPluginProbe.once.Do(func() {
		if env.pluginPath == "" {
			drainPluginProbe.why = env.pluginMissing
			return
		}
		run, err := runPlugin(ctx, env.pluginPath, "drain", "--help")
		if err != nil || run.exitCode != 0 || !strings.Contains(run.stdout, "--ignore-daemonsets") {
			drainPluginProbe.why = "the plugin has no drain command yet"
		}
	})
	return drainPluginProbe.why
}

// drainPredict runs the plugin as the read-only viewer, before the drain.
func drainPredict(ctx context.Context, t *testing.T, dc *drainCluster, s *drainScenario, timeout time.Duration) *drainPrediction {
	if why := drainPluginMissing(ctx); why != "" {
		if requirePlugin() {
			t.Fatalf("plugin unavailable: %s", why)
		}
		t.Logf("no prediction (%s): the real drain runs alone", why)
		return nil
	}
	args := append([]string{"drain"}, s.drain...)
	args = append(args, s.flags...)
	args = append(args, fmt.Sprintf("--timeout=%s", timeout), "--kubeconfig", dc.cp.viewerKubeconfig, "-o", "json")
	run, err := runPlugin(ctx, env.pluginPath, args...)
	if err == nil && run.exitCode != 0 {
		err = fmt.Errorf("plugin failed: %s", run)
	}
	if err != nil {
		// Still run the real drain: its outcome is logged and self-checked.
		t.Errorf("plugin: %v\nthe cluster before the drain is in %s (repeat offline with -f)", err, s.saved)
		drainRun.pluginFailed(s.index)
		return nil
	}
	p, err := parseDrainPrediction(run.stdout)
	if err != nil {
		t.Fatalf("%v\n%s", err, firstLines(run.stdout, 20))
	}
	t.Logf("plugin (%s): certain %v, victims %v\n%s", run.duration.Round(time.Millisecond), p.Certain, p.Victims, firstLines(run.stdout, 200))
	return p
}

// drainCheckSelf checks what holds whatever the plugin says: a drained
// node keeps none of the pods kubectl acted on, a blocked one keeps some,
// a refused one lost none, and kubectl exits non-zero exactly when a node
// failed.
func drainCheckSelf(t *testing.T, nodes []drainNodeObserved, code int, before *drainBefore, stderr string) {
	failed := false
	for _, o := range nodes {
		if m := drainSplitMismatch(o, before, stderr); m != "" {
			t.Errorf("test harness vs kubectl: %s", m)
		}
		t.Logf("real: %s %s evicted %v remaining %v skipped %v", o.node, o.outcome, o.evicted, o.remaining, o.skipped)
		switch {
		case o.outcome == "drained" && len(o.remaining) > 0:
			t.Errorf("%s drained but %v remain", o.node, o.remaining)
		case o.outcome == "blocked" && len(o.remaining) == 0:
			t.Errorf("%s failed with nothing left: %s", o.node, o.err)
		case o.outcome == "refused" && len(o.evicted) > 0:
			t.Errorf("%s refused but %v were evicted", o.node, o.evicted)
		}
		failed = failed || o.outcome != "drained"
	}
	if failed != (code != 0) {
		t.Errorf("kubectl drain exit code %d, but node outcomes %v", code, nodes)
	}
}

func drainRecord(t *testing.T, s *drainScenario, p *drainPrediction, nodes []drainNodeObserved, repl map[string][]string, before *drainBefore) {
	st := drainRun
	st.mu.Lock()
	st.scenarios++
	for _, o := range nodes {
		st.outcomes[o.outcome]++
	}
	if len(s.drain) > 1 {
		st.twoNode++
	}
	for _, nodes := range repl {
		for _, n := range nodes {
			if n == "" {
				st.unschedulable++
			}
		}
	}
	st.mu.Unlock()
	t.Logf("real replacements (owner -> nodes, \"\" = unschedulable): %v", repl)
	if p == nil {
		return
	}
	owners := map[string]string{}
	for _, pod := range before.pods {
		owners[podKey(&pod)] = drainOwner(&pod)
	}
	cmp := compareDrain(p, nodes, repl, owners)
	st.mu.Lock()
	st.predicted++
	st.nodesCompared += cmp.nodes
	st.nodesUncertain += cmp.nodesUncertain
	st.replacementsCompared += cmp.groups
	st.replacementsUncertain += cmp.groupsUncert
	st.nodesRaced += cmp.nodesRaced
	st.replacementsRaced += cmp.groupsRaced
	for _, m := range cmp.mismatches {
		st.mismatches = append(st.mismatches, fmt.Sprintf("scenario %d: %s", s.index, m))
	}
	st.mu.Unlock()
	if len(cmp.mismatches) > 0 {
		t.Logf("the cluster before the drain is in %s", s.saved)
	}
	for _, m := range cmp.mismatches {
		t.Errorf("MISMATCH (E2E_DRAIN_ONLY=%d E2E_SEED=%d): %s", s.index, env.seed, m)
	}
}
