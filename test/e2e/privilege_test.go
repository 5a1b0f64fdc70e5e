package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

type auditEvent struct {
	Stage      string `json:"stage"`
	RequestURI string `json:"requestURI"`
	Verb       string `json:"verb"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		APIGroup    string `json:"apiGroup"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// viewerAuditViolations scans the API server's audit log (JSON lines) for
// requests by the viewer user. bad lists requests whose verb is not
// get/list/watch; used summarises "verb resource -> code" counts.
func viewerAuditViolations(path string) (bad, used []string, err error) {
	return auditViolations(path, viewerUser)
}

// auditViolations is viewerAuditViolations for any user.
func auditViolations(path, user string) (bad, used []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	counts := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 4<<20), 4<<20)
	for sc.Scan() {
		var ev auditEvent
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return nil, nil, fmt.Errorf("audit line is not JSON: %w", err)
		}
		if ev.User.Username != user {
			continue
		}
		what := ev.RequestURI
		if ev.ObjectRef != nil {
			what = ev.ObjectRef.Resource
			if ev.ObjectRef.APIGroup != "" {
				what += "." + ev.ObjectRef.APIGroup
			}
			if ev.ObjectRef.Subresource != "" {
				what += "/" + ev.ObjectRef.Subresource
			}
		} else if i := strings.IndexByte(what, '?'); i >= 0 {
			what = what[:i]
		}
		code := 0
		if ev.ResponseStatus != nil {
			code = ev.ResponseStatus.Code
		}
		counts[fmt.Sprintf("%s %s -> %d", ev.Verb, what, code)]++
		switch ev.Verb {
		case "get", "list", "watch":
		default:
			bad = append(bad, fmt.Sprintf("%s %s", ev.Verb, ev.RequestURI))
		}
	}
	for k, n := range counts {
		used = append(used, fmt.Sprintf("%s (x%d)", k, n))
	}
	sort.Strings(used)
	return bad, used, sc.Err()
}

// TestViewerIsReadOnly runs the plugin as the read-only viewer against each
// workload kind and proves from the audit log that the viewer only ever
// issued get/list/watch. (TestMain repeats the check over the whole run.)
func TestViewerIsReadOnly(t *testing.T) {
	needPlugin(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// One small workload of every kind in one namespace.
	var runs []*scenarioRun
	for _, kind := range []string{kindDeployment, kindRS, kindRC, kindSTS} {
		r := newRun(&scenario{name: "audit-" + kind, kind: kind, replicas: 2, target: 1,
			states: []podState{running("node-a", 48*time.Hour), running("node-b", time.Hour)}})
		if err := r.prepare(ctx); err != nil {
			t.Fatalf("prepare %s: %v", kind, err)
		}
		runs = append(runs, r)
	}
	ok := 0
	for _, r := range runs {
		pred, run, err := predict(ctx, r.sc.kind, r.ns, workloadName, 1, false)
		if err != nil {
			// Reported by the scenario tests; here only the requests matter.
			t.Logf("%s: %v", r.sc.kind, err)
			continue
		}
		ok++
		t.Logf("%s: victims %v (%s)", r.sc.kind, pred.Victims, run.duration.Round(time.Millisecond))
	}
	if ok == 0 {
		t.Errorf("the plugin failed for every kind")
	}
	bad, used, err := viewerAuditViolations(env.cp.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("requests made by %q so far:\n  %s", viewerUser, strings.Join(used, "\n  "))
	if len(used) == 0 {
		t.Fatalf("the audit log has no request by %q: the check would be vacuous", viewerUser)
	}
	if len(bad) > 0 {
		t.Errorf("user %q issued non-read requests: %v", viewerUser, bad)
	}
	var denied []string
	for _, u := range used {
		if strings.Contains(u, "-> 403") {
			denied = append(denied, u)
		}
	}
	if len(denied) > 0 {
		t.Logf("NOTE: the plugin asked for things the documented least-privilege role does not grant: %v", denied)
	}
}

// TestForbiddenIsOneLineError runs the plugin as a user with no role at all.
func TestForbiddenIsOneLineError(t *testing.T) {
	needPlugin(t)
	ctx := context.Background()
	run, err := runPlugin(ctx, env.pluginPath, "rs/"+probeRSName, "--replicas=0", "-n", probeNamespace,
		"--kubeconfig", env.cp.nobodyKubeconfig, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", run)
	if run.exitCode == 0 {
		t.Fatalf("plugin succeeded for a user without any role")
	}
	msg := strings.TrimRight(run.stderr, "\n")
	if strings.Contains(msg, "\n") {
		t.Errorf("error is not one line: %q", run.stderr)
	}
	if !strings.Contains(strings.ToLower(msg), "forbidden") {
		t.Errorf("error does not say forbidden: %q", msg)
	}
	if run.exitCode != 4 {
		t.Errorf("exit code %d, the contract says 4 for forbidden", run.exitCode)
	}
}

// TestExitCodes checks the rest of the CLI contract: usage error, not
// found, server unreachable, scale-up.
func TestExitCodes(t *testing.T) {
	needPlugin(t)
	ctx := context.Background()
	viewer := []string{"-n", probeNamespace, "--kubeconfig", env.cp.viewerKubeconfig, "-o", "json"}
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"missing --replicas", append([]string{"rs/" + probeRSName}, viewer...), 2},
		{"not found", append([]string{"deploy/does-not-exist", "--replicas=1"}, viewer...), 3},
		{"server unreachable", []string{"rs/" + probeRSName, "--replicas=0", "-n", probeNamespace, "--kubeconfig", env.cp.deadKubeconfig, "-o", "json"}, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run, err := runPlugin(ctx, env.pluginPath, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if run.exitCode != tc.code {
				t.Errorf("exit code %d, want %d: %s", run.exitCode, tc.code, run)
			}
			if msg := strings.TrimRight(run.stderr, "\n"); msg == "" || strings.Contains(msg, "\n") {
				t.Errorf("want a one-line error on stderr, got %q", run.stderr)
			}
		})
	}
	// An unsupported TYPE is not spelled out by the contract: it must fail
	// with a one-line error; 2 (usage) is expected but only noted.
	t.Run("unsupported type", func(t *testing.T) {
		run, err := runPlugin(ctx, env.pluginPath, append([]string{"daemonset/x", "--replicas=1"}, viewer...)...)
		if err != nil {
			t.Fatal(err)
		}
		if run.exitCode == 0 {
			t.Fatalf("plugin accepted a DaemonSet: %s", run)
		}
		if msg := strings.TrimRight(run.stderr, "\n"); msg == "" || strings.Contains(msg, "\n") {
			t.Errorf("want a one-line error on stderr, got %q", run.stderr)
		}
		if run.exitCode != 2 {
			t.Logf("CONTRACT NOTE: exit code %d for an unsupported TYPE (usage errors are 2): %s", run.exitCode, run)
		}
	})
	t.Run("scale-up", func(t *testing.T) {
		run, err := runPlugin(ctx, env.pluginPath, append([]string{"replicaset/" + probeRSName, "--replicas=3"}, viewer...)...)
		if err != nil {
			t.Fatal(err)
		}
		if run.exitCode != 0 {
			t.Fatalf("scale-up failed: %s", run)
		}
		var p prediction
		if err := json.Unmarshal([]byte(run.stdout), &p); err != nil {
			t.Fatalf("not JSON: %v: %s", err, run)
		}
		if len(p.Victims) != 0 {
			t.Errorf("scale-up has victims %v", p.Victims)
		}
		if err := p.validate(kindRS, probeNamespace, probeRSName, 1, 3); err != nil {
			t.Errorf("contract: %v", err)
		}
		if slices.ContainsFunc(p.Pods, func(pp predictedPod) bool { return pp.Fate == "delete" }) {
			t.Errorf("scale-up marks pods for deletion: %s", run.stdout)
		}
	})
}
