package cmd

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

var faultArgs = []string{"deploy/api", "--replicas=2", "-n", "prod", "--kube-version", "1.37", "--now", liveNowFlag, "-o", "json"}

// wantPrediction: exit 0 and the same victims as without faults.
func wantPrediction(t *testing.T, r cliResult) {
	t.Helper()
	wantExit(t, r, ExitOK)
	if r.code == ExitOK {
		// Complete: the fixture's rollout leaves one pod to timing, so the
		// answer is judged by what was read, not by its certainty.
		if p := decode(t, r.stdout); len(p.Victims) == 0 || len(p.Incomplete) > 0 {
			t.Errorf("victims %v incomplete %v", p.Victims, p.Incomplete)
		}
	}
}

// wantFailure: the code, one line naming what went wrong, and no
// prediction on stdout.
func wantFailure(t *testing.T, r cliResult, code int, parts ...string) {
	t.Helper()
	wantExit(t, r, code, parts...)
	if r.stdout != "" {
		t.Errorf("a failed run printed a prediction:\n%s", r.stdout)
	}
	if strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic") {
		t.Errorf("stack trace on stderr: %s", r.stderr)
	}
}

func TestFaultBaseline(t *testing.T) {
	f := newFakeAPIServer(t)
	wantPrediction(t, f.run(true, faultArgs...))
	if n := f.requests("/api/v1/namespaces/prod/pods"); n < 3 {
		t.Errorf("%d pod list requests: the 5 pods should come in pages of 2", n)
	}
	// Built-in types are asked for as protobuf (JSON still decodes).
	for _, a := range f.accept {
		if !strings.HasPrefix(a, "application/vnd.kubernetes.protobuf") {
			t.Errorf("Accept %q: protobuf not requested", a)
		}
	}
}

// 429 and 503 with Retry-After: client-go waits and retries.
func TestFaultRetryAfter(t *testing.T) {
	for _, code := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(code), func(t *testing.T) {
			f := newFakeAPIServer(t)
			f.fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
				if r.URL.Path == "/api/v1/namespaces/prod/pods" && n <= 2 {
					w.Header().Set("Retry-After", "1")
					status(w, code, "TooManyRequests", "slow down")
					return true
				}
				return false
			}
			wantPrediction(t, f.run(true, faultArgs...))
		})
	}
}

// Server errors that client-go does not retry end the run with one line.
func TestFaultServerErrors(t *testing.T) {
	for _, tc := range []struct {
		code   int
		reason string
		exit   int
		words  string
	}{
		{http.StatusInternalServerError, "InternalError", ExitError, "failed to answer"},
		{http.StatusServiceUnavailable, "ServiceUnavailable", ExitUnreachable, "unavailable"},
		{http.StatusTooManyRequests, "TooManyRequests", ExitUnreachable, "overloaded"},
	} {
		t.Run(tc.reason, func(t *testing.T) {
			f := newFakeAPIServer(t)
			f.fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
				if r.URL.Path == "/api/v1/namespaces/prod/pods" {
					status(w, tc.code, tc.reason, "boom")
					return true
				}
				return false
			}
			wantFailure(t, f.run(true, faultArgs...), tc.exit, tc.words)
		})
	}
}

// A slow server and --request-timeout: the run ends at the timeout.
func TestFaultSlowServer(t *testing.T) {
	f := newFakeAPIServer(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	f.fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.URL.Path == "/api/v1/namespaces/prod/pods" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return true
		}
		return false
	}
	r := f.run(true, append([]string{"--request-timeout=300ms"}, faultArgs...)...)
	wantFailure(t, r, ExitUnreachable, "did not answer in time", "--request-timeout")
	if r.elapsed > 5*time.Second {
		t.Errorf("took %v with --request-timeout=300ms", r.elapsed)
	}
}

// A connection reset in the middle of a paginated list: client-go retries
// a GET once the connection breaks; a server that keeps breaking it ends
// the run with one line.
func TestFaultConnectionReset(t *testing.T) {
	f := newFakeAPIServer(t)
	f.fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.URL.Query().Get("continue") == "page-2" && n <= 3 {
			resetConnection(t, w)
			return true
		}
		return false
	}
	wantPrediction(t, f.run(true, faultArgs...))

	f = newFakeAPIServer(t)
	f.fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.URL.Query().Get("continue") == "page-2" {
			resetConnection(t, w)
			return true
		}
		return false
	}
	wantFailure(t, f.run(true, faultArgs...), ExitUnreachable)
}

// 410 Gone for an expired continue token: the list starts over as one
// full list, and the answer is the complete one.
func TestFaultExpiredContinue(t *testing.T) {
	f := newFakeAPIServer(t)
	full := false
	f.fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.URL.Path != "/api/v1/namespaces/prod/pods" {
			return false
		}
		if r.URL.Query().Get("continue") != "" {
			status(w, http.StatusGone, "Expired", "The provided continue parameter is too old to display a consistent list result.")
			return true
		}
		if r.URL.Query().Get("limit") == "" {
			full = true
		}
		return false
	}
	r := f.run(true, faultArgs...)
	wantPrediction(t, r)
	if !full {
		t.Error("no full list after 410 Gone")
	}
	if r.code == ExitOK {
		if p := decode(t, r.stdout); p.CurrentReplicas != 5 {
			t.Errorf("current replicas %d after the restarted list, want all 5", p.CurrentReplicas)
		}
	}
}

// A certificate that does not verify is named as such, not "cannot reach".
func TestFaultUntrustedCertificate(t *testing.T) {
	f := newFakeAPIServer(t)
	r := f.run(false, faultArgs...)
	wantFailure(t, r, ExitUnreachable, "certificate", "certificate-authority")
	if strings.Contains(r.stderr, "cannot reach") {
		t.Errorf("a certificate failure blamed on the network: %s", r.stderr)
	}
}

// A Deployment that changes on every read: bounded re-reads, then an
// answer marked uncertain, which --fail-if-uncertain stops.
func TestFaultWorkloadKeepsChanging(t *testing.T) {
	f := newFakeAPIServer(t)
	f.deploymentRV = func(n int) string { return "rv-" + string(rune('a'+n)) }
	r := f.run(true, faultArgs...)
	wantExit(t, r, ExitOK)
	if p := decode(t, r.stdout); p.Certain || len(p.Incomplete) == 0 || !strings.Contains(p.Incomplete[0], "changed while it was read") {
		t.Errorf("certain %v incomplete %v", p.Certain, p.Incomplete)
	}
	if n := f.requests("/apis/apps/v1/namespaces/prod/deployments/api"); n != 2*maxReadsForTest {
		t.Errorf("%d reads of the Deployment, want %d (bounded re-reads)", n, 2*maxReadsForTest)
	}
	f = newFakeAPIServer(t)
	f.deploymentRV = func(n int) string { return "rv-" + string(rune('a'+n)) }
	// The prediction is printed, marked uncertain, then the exit code stops a runbook.
	wantExit(t, f.run(true, append(faultArgs, "--fail-if-uncertain")...), ExitUncertain, "changed while it was read")

	// Changed once, then settled: read again, certain.
	f = newFakeAPIServer(t)
	f.deploymentRV = func(n int) string {
		if n == 1 {
			return "1"
		}
		return "2"
	}
	wantPrediction(t, f.run(true, faultArgs...))
}

const maxReadsForTest = 3

// Ctrl-C: a real process, a server that never answers; the process exits
// with 130 within a second of SIGINT.
func TestFaultInterrupt(t *testing.T) {
	f := newFakeAPIServer(t)
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	started := make(chan struct{}, 10)
	f.fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		started <- struct{}{}
		select {
		case <-hang:
		case <-r.Context().Done():
		}
		return true
	}
	cmd := mainProcess(faultArgs, "KUBECONFIG="+f.kubeconfig(true))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("the process never reached the API server")
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	took := time.Since(sent)
	code := cmd.ProcessState.ExitCode()
	if code != ExitInterrupted {
		t.Errorf("exit %d (%v), want %d; stderr %q", code, err, ExitInterrupted, stderr.String())
	}
	if took > time.Second {
		t.Errorf("exited %v after SIGINT, want within a second", took)
	}
	if !strings.HasPrefix(stderr.String(), "error: interrupted") {
		t.Errorf("stderr %q", stderr.String())
	}
}
