package cmd

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/cli-runtime/pkg/genericiooptions"
)

// fakeAPIServer serves liveObjects over HTTPS the way kube-apiserver does
// for the requests the plugin makes (JSON, paginated pod lists), so that
// tests drive the real client-go transport: retries, timeouts, TLS.
type fakeAPIServer struct {
	t   *testing.T
	srv *httptest.Server
	// podPage is how many pods the server puts in one page, whatever the
	// client's limit (a server may return fewer items than asked for).
	podPage int
	// fault, if set, may answer a request itself; n counts the requests
	// to the same path so far (1 for the first).
	fault func(w http.ResponseWriter, r *http.Request, n int) bool
	// deploymentRV, if set, gives the Deployment's resourceVersion per read.
	deploymentRV func(n int) string

	mu     sync.Mutex
	count  map[string]int
	log    []string
	accept []string // Accept headers seen
}

func newFakeAPIServer(t *testing.T) *fakeAPIServer {
	f := &fakeAPIServer{t: t, podPage: 2, count: map[string]int{}}
	f.srv = httptest.NewTLSServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPIServer) requests(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.count[path]
}

func (f *fakeAPIServer) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.count[r.URL.Path]++
	n := f.count[r.URL.Path]
	f.log = append(f.log, r.Method+" "+r.URL.String())
	f.accept = append(f.accept, r.Header.Get("Accept"))
	f.mu.Unlock()
	if f.fault != nil && f.fault(w, r, n) {
		return
	}
	objs := liveObjects()
	d := objs[0].(*appsv1.Deployment)
	var rsItems []appsv1.ReplicaSet
	var pods []corev1.Pod
	for _, o := range objs[1:] {
		switch x := o.(type) {
		case *appsv1.ReplicaSet:
			rsItems = append(rsItems, *x)
		case *corev1.Pod:
			if x.Namespace == "prod" {
				pods = append(pods, *x)
			}
		}
	}
	switch r.URL.Path {
	case "/apis/apps/v1/namespaces/prod/deployments/api":
		d.TypeMeta = metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}
		d.ResourceVersion = "100"
		if f.deploymentRV != nil {
			d.ResourceVersion = f.deploymentRV(n)
		}
		writeJSON(w, d)
	case "/apis/apps/v1/namespaces/prod/replicasets":
		writeJSON(w, &appsv1.ReplicaSetList{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSetList"}, Items: rsItems})
	case "/api/v1/namespaces/prod/pods":
		f.servePods(w, r, pods)
	case "/apis/autoscaling/v2/namespaces/prod/horizontalpodautoscalers":
		writeJSON(w, map[string]any{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscalerList", "items": []any{}})
	case "/apis/policy/v1/namespaces/prod/poddisruptionbudgets":
		writeJSON(w, map[string]any{"apiVersion": "policy/v1", "kind": "PodDisruptionBudgetList", "items": []any{}})
	case "/api/v1/nodes":
		writeJSON(w, map[string]any{"apiVersion": "v1", "kind": "NodeList", "items": []any{}})
	default:
		parts := strings.Split(r.URL.Path, "/")
		status(w, http.StatusNotFound, "NotFound", fmt.Sprintf("%s %q not found", parts[len(parts)-2], parts[len(parts)-1]))
	}
}

// servePods pages with continue tokens "page-N"; a request without limit
// gets everything (the full list a pager falls back to after 410).
func (f *fakeAPIServer) servePods(w http.ResponseWriter, r *http.Request, all []corev1.Pod) {
	sel, err := labels.Parse(r.URL.Query().Get("labelSelector"))
	if err != nil {
		status(w, http.StatusBadRequest, "BadRequest", err.Error())
		return
	}
	var pods []corev1.Pod
	for _, p := range all {
		if sel.Matches(labels.Set(p.Labels)) {
			pods = append(pods, p)
		}
	}
	list := &corev1.PodList{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PodList"}}
	list.ResourceVersion = "100"
	start := 0
	if c := r.URL.Query().Get("continue"); c != "" {
		start, _ = strconv.Atoi(strings.TrimPrefix(c, "page-"))
	}
	end := len(pods)
	if r.URL.Query().Get("limit") != "" && start+f.podPage < end {
		end = start + f.podPage
		list.Continue = "page-" + strconv.Itoa(end)
	}
	list.Items = pods[start:end]
	writeJSON(w, list)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// status answers with a metav1.Status as kube-apiserver does.
func status(w http.ResponseWriter, code int, reason, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(&metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"},
		Status: metav1.StatusFailure, Code: int32(code), Reason: metav1.StatusReason(reason), Message: msg})
}

// resetConnection drops the TCP connection with a RST, mid-response.
func resetConnection(t *testing.T, w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Errorf("hijack: %v", err)
		return
	}
	if tc, ok := conn.(interface{ NetConn() net.Conn }); ok {
		if tcp, ok := tc.NetConn().(*net.TCPConn); ok {
			_ = tcp.SetLinger(0)
		}
	}
	_ = conn.Close()
}

// kubeconfig writes a kubeconfig for the server; trusted=false leaves out
// its CA, so the certificate does not verify.
func (f *fakeAPIServer) kubeconfig(trusted bool) string {
	ca := ""
	if trusted {
		pemCA := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: f.srv.Certificate().Raw})
		ca = "\n    certificate-authority-data: " + base64.StdEncoding.EncodeToString(pemCA)
	}
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster:
    server: %s%s
users:
- name: me
  user:
    token: secret
contexts:
- name: fake
  context: {cluster: fake, user: me, namespace: prod}
current-context: fake
`, f.srv.URL, ca)
	path := filepath.Join(f.t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		f.t.Fatal(err)
	}
	return path
}

// runAgainst runs the command with a kubeconfig for f, building the client
// from it as a user's run does.
func (f *fakeAPIServer) run(trusted bool, args ...string) cliResult {
	f.t.Helper()
	f.t.Setenv("KUBECONFIG", f.kubeconfig(trusted))
	var out, errOut bytes.Buffer
	o := NewOptions(genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	start := time.Now()
	code := run(o, args)
	return cliResult{code: code, stdout: out.String(), stderr: errOut.String(), elapsed: time.Since(start)}
}
