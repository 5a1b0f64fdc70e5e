package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testEnv is shared by every test: one control plane for the whole run.
type testEnv struct {
	cp            *controlPlane
	build         *buildResult
	pluginPath    string // "" when the plugin cannot be used
	pluginMissing string // why
	seed          uint64
	stats         agreementStats
	suiteStart    time.Time
}

var env = &testEnv{}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "e2e: "+format+"\n", args...)
}

func envDuration(name string, def time.Duration) time.Duration {
	if v := os.Getenv(name); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			return d
		}
		logf("ignoring %s=%q: not a duration", name, v)
	}
	return def
}

func envInt(name string, def int) int {
	if v := os.Getenv(name); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
		logf("ignoring %s=%q: not an integer", name, v)
	}
	return def
}

// requirePlugin turns "plugin unavailable" from a skip into a failure.
func requirePlugin() bool { return os.Getenv("E2E_REQUIRE_PLUGIN") == "1" }

// needPlugin skips (or, with E2E_REQUIRE_PLUGIN=1, fails) a plugin test.
func needPlugin(t *testing.T) {
	t.Helper()
	if env.pluginPath != "" {
		return
	}
	if requirePlugin() {
		t.Fatalf("plugin unavailable: %s", env.pluginMissing)
	}
	t.Skipf("plugin unavailable: %s", env.pluginMissing)
}

func TestMain(m *testing.M) {
	flag.Parse()
	if f := flag.Lookup("test.list"); f != nil && f.Value.String() != "" {
		os.Exit(m.Run())
	}
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) int {
	env.seed = uint64(envInt("E2E_SEED", 20260522))
	logf("E2E_SEED=%d (set E2E_SEED to reproduce a run)", env.seed)

	binDir := os.Getenv("E2E_BIN_DIR")
	if binDir == "" {
		binDir = "test/.bin"
	}
	b, err := buildBinaries(binDir)
	if err != nil {
		logf("FAIL: building binaries: %v", err)
		return 1
	}
	env.build = b
	env.pluginPath, env.pluginMissing = b.pluginPath, b.pluginMissing

	cp, err := startControlPlane(b.binDir)
	if err != nil {
		logf("FAIL: starting the control plane: %v", err)
		return 1
	}
	env.cp = cp
	logf("control plane up in %s (API %s, etcd %s, logs in %s)", cp.startDuration.Round(time.Millisecond), cp.apiURL, cp.etcdURL, cp.dir)
	probePlugin()
	if env.pluginPath == "" {
		logf("plugin comparisons will be SKIPPED: %s", env.pluginMissing)
	}

	env.suiteStart = time.Now()
	code := m.Run()
	suite := time.Since(env.suiteStart)

	// Every plugin invocation of the whole run must have been read-only.
	if env.pluginPath != "" {
		if bad, _, err := viewerAuditViolations(cp.auditLog); err != nil {
			logf("audit log check failed: %v", err)
			code = 1
		} else if len(bad) > 0 {
			logf("FAIL: user %q issued non-read requests: %s", viewerUser, strings.Join(bad, "; "))
			code = 1
		}
	}
	if err := cp.crashed(); err != nil {
		logf("control plane crashed during the run: %v", err)
		code = 1
	}
	fmt.Fprintln(os.Stderr, env.stats.String())
	logf("timings: control-plane build %s, kube-scheduler build %s, etcd build %s, plugin build %s, control-plane start %s, tests %s",
		b.controlPlane.Round(time.Millisecond), b.scheduler.Round(time.Millisecond), b.etcd.Round(time.Millisecond), b.plugin.Round(time.Millisecond),
		cp.startDuration.Round(time.Millisecond), suite.Round(time.Millisecond))
	if code != 0 {
		fmt.Fprint(os.Stderr, cp.logTails(40))
	}
	cp.stop()
	if code != 0 || os.Getenv("E2E_KEEP") == "1" {
		logf("kept %s (logs, audit log, kubeconfigs)", cp.dir)
	} else {
		os.RemoveAll(cp.dir)
	}
	return code
}

// probePlugin runs the plugin once against the probe ReplicaSet. A binary
// that exits 0 and prints nothing is the placeholder main package: plugin
// comparisons are then skipped (unless E2E_REQUIRE_PLUGIN=1).
func probePlugin() {
	if env.pluginPath == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run, err := runPlugin(ctx, env.pluginPath, "rs/"+probeRSName, "--replicas=0", "-n", probeNamespace,
		"--kubeconfig", env.cp.viewerKubeconfig, "-o", "json")
	switch {
	case err != nil:
		logf("plugin probe: %v", err)
	case run.exitCode == 0 && strings.TrimSpace(run.stdout) == "":
		if !requirePlugin() {
			env.pluginPath = ""
			env.pluginMissing = "the plugin binary builds but prints nothing for a valid invocation (placeholder main package?)"
		}
	case run.exitCode == 0:
		logf("plugin probe OK (%s)", run.duration.Round(time.Millisecond))
	default:
		logf("plugin probe failed: %s", run)
	}
}
