package cmd

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
)

// directKubelet is a TLS kubelet on 127.0.0.1 serving the recorded
// summary and configz; tokens counts requests that carried the
// kubeconfig's token. Its certificate is httptest's (the fake API
// server's too, so the kubeconfig's CA verifies it) unless own is set.
type directKubelet struct {
	srv    *httptest.Server
	tokens atomic.Int32
	caFile string // own certificate's PEM, when own
}

func newDirectKubelet(t *testing.T, own bool) *directKubelet {
	k := &directKubelet{}
	k.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "Bearer secret" {
			k.tokens.Add(1)
		}
		switch r.URL.Path {
		case "/stats/summary":
			_, _ = w.Write([]byte(mustRead(t, nodeSummaryPath)))
		case "/configz":
			_, _ = w.Write([]byte(mustRead(t, nodeConfigzPath)))
		default:
			http.NotFound(w, r)
		}
	}))
	if own {
		cert, pemCert := selfSignedIP(t, "127.0.0.1")
		k.srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		k.caFile = filepath.Join(t.TempDir(), "kubelet-ca.crt")
		if err := os.WriteFile(k.caFile, pemCert, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	k.srv.StartTLS()
	t.Cleanup(k.srv.Close)
	return k
}

func selfSignedIP(t *testing.T, ip string) (tls.Certificate, []byte) {
	cert, certPEM, _, err := sourcetest.SelfSigned("kubelet", net.ParseIP(ip))
	if err != nil {
		t.Fatal(err)
	}
	return cert, certPEM
}

// nodeAPIAt is nodeAPI with worker-1 reachable at the kubelet k, the node
// proxy forbidden.
func nodeAPIAt(t *testing.T, k *directKubelet) *fakeAPIServer {
	f := nodeAPI(t, true)
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := yaml.Unmarshal([]byte(mustRead(t, nodeFilePath)), &list); err != nil {
		t.Fatal(err)
	}
	node := list.Items[0]
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(k.srv.URL, "https://"))
	p, _ := strconv.Atoi(port)
	status := node["status"].(map[string]any)
	status["addresses"] = []any{map[string]any{"type": "InternalIP", "address": "127.0.0.1"}}
	status["daemonEndpoints"] = map[string]any{"kubeletEndpoint": map[string]any{"Port": p}}
	served := f.fault
	f.fault = func(w http.ResponseWriter, r *http.Request, n int) bool {
		if r.URL.Path == "/api/v1/nodes/worker-1" {
			writeJSON(w, node)
			return true
		}
		return served(w, r, n)
	}
	return f
}

// TestNodeLiveDirect: the command reads the kubelet with the kubeconfig's
// own token, verified by the kubeconfig's CA or --kubelet-certificate-
// authority; a certificate that does not verify gets no token unless
// --kubelet-insecure-tls, which warns on stderr and in the output.
func TestNodeLiveDirect(t *testing.T) {
	offline := cliRun(t, nil, nil, append(nodeArgs("node/worker-1")(t), "-o", "json")...)
	evictionOf := func(stdout string) (string, string) {
		var doc map[string]any
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		ev := doc["eviction"].(map[string]any)
		reads := fmt.Sprint(ev["kubeletReads"])
		delete(ev, "kubeletReads")
		return fmt.Sprint(ev, doc["victims"]), reads
	}
	want, _ := evictionOf(offline.stdout)
	for _, tc := range []struct {
		name       string
		own        bool
		flags      func(k *directKubelet) []string
		wantReads  string
		wantTokens bool
		wantStderr string
	}{
		{name: "the kubeconfig's CA", flags: func(*directKubelet) []string { return nil }, wantReads: "path:kubelet", wantTokens: true},
		{name: "--kubelet-certificate-authority", own: true, flags: func(k *directKubelet) []string { return []string{"--kubelet-certificate-authority", k.caFile} },
			wantReads: "path:kubelet", wantTokens: true},
		{name: "a certificate that does not verify", own: true, flags: func(*directKubelet) []string { return nil }, wantReads: "path:none"},
		{name: "--kubelet-insecure-tls", own: true, flags: func(*directKubelet) []string { return []string{"--kubelet-insecure-tls"} },
			wantReads: "insecureTLS:true path:kubelet", wantTokens: true, wantStderr: "Warning: --kubelet-insecure-tls"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newDirectKubelet(t, tc.own)
			args := append([]string{"node/worker-1", "--now", nodeNow, "-o", "json"}, tc.flags(k)...)
			r := nodeAPIAt(t, k).run(true, args...)
			if r.code != ExitOK {
				t.Fatalf("exit %d\n%s", r.code, r)
			}
			got, reads := evictionOf(r.stdout)
			if !strings.Contains(reads, tc.wantReads) {
				t.Errorf("kubeletReads %s, want %s", reads, tc.wantReads)
			}
			if (k.tokens.Load() > 0) != tc.wantTokens {
				t.Errorf("the kubelet got the token %d times, want any: %v", k.tokens.Load(), tc.wantTokens)
			}
			if tc.wantTokens && got != want {
				t.Errorf("live\n%s\noffline\n%s", got, want)
			}
			if !strings.Contains(r.stderr, tc.wantStderr) || (tc.wantStderr == "" && r.stderr != "") {
				t.Errorf("stderr %q, want %q", r.stderr, tc.wantStderr)
			}
		})
	}
}
