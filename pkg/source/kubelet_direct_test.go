package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
	"github.com/scale-preview/scale-preview/pkg/source/sourcetest"
)

func TestKubeletEndpoint(t *testing.T) {
	addr := func(typ corev1.NodeAddressType, a string) corev1.NodeAddress {
		return corev1.NodeAddress{Type: typ, Address: a}
	}
	all := []corev1.NodeAddress{
		addr(corev1.NodeExternalIP, "203.0.113.5"), addr(corev1.NodeInternalIP, "10.0.0.5"),
		addr(corev1.NodeInternalDNS, "w1.internal"), addr(corev1.NodeHostName, "w1"),
	}
	for _, tc := range []struct {
		name    string
		addrs   []corev1.NodeAddress
		port    int32
		types   []corev1.NodeAddressType
		want    string
		wantErr string
	}{
		// kube-apiserver's default order: Hostname, InternalDNS, InternalIP, ExternalDNS, ExternalIP.
		{name: "hostname first", addrs: all, port: 10250, want: "w1:10250"},
		{name: "internal DNS before internal IP", addrs: all[:3], port: 10250, want: "w1.internal:10250"},
		{name: "internal IP before external", addrs: all[:2], port: 10250, want: "10.0.0.5:10250"},
		{name: "first of a type", addrs: []corev1.NodeAddress{addr(corev1.NodeInternalIP, "10.0.0.7"), addr(corev1.NodeInternalIP, "10.0.0.8")}, port: 1, want: "10.0.0.7:1"},
		{name: "empty address skipped", addrs: []corev1.NodeAddress{addr(corev1.NodeHostName, ""), addr(corev1.NodeExternalIP, "203.0.113.5")}, port: 10250, want: "203.0.113.5:10250"},
		{name: "ipv6", addrs: []corev1.NodeAddress{addr(corev1.NodeInternalIP, "2001:db8::1")}, port: 10250, want: "[2001:db8::1]:10250"},
		{name: "preferred types given", addrs: all, port: 10250, types: []corev1.NodeAddressType{corev1.NodeInternalIP}, want: "10.0.0.5:10250"},
		// As the API server: no port reported means its --kubelet-port, 10250.
		{name: "no port", addrs: all[1:2], want: "10.0.0.5:10250"},
		{name: "bad port", addrs: all, port: 70000, wantErr: "reports kubelet port 70000"},
		{name: "negative port", addrs: all, port: -1, wantErr: "reports kubelet port -1"},
		{name: "no addresses", port: 10250, wantErr: "reports no address (status.addresses is empty)"},
		{name: "no address of the types", addrs: all[:1], port: 10250, types: []corev1.NodeAddressType{corev1.NodeInternalIP}, wantErr: "no address of the types [InternalIP] (it has ExternalIP)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "w1"}}
			n.Status.Addresses = tc.addrs
			n.Status.DaemonEndpoints.KubeletEndpoint.Port = tc.port
			got, err := KubeletEndpoint(n, tc.types)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %q, %v; want error %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

const (
	testSummary = `{"node": {"nodeName": "worker-1"}, "pods": []}`
	testConfigz = `{"kubeletconfig": {"evictionHard": {"memory.available": "100Mi"}}}`
	testToken   = "user-token"
)

// fakeKubelet is a TLS kubelet on 127.0.0.1 that records what credentials
// reached it; forbid answers 403 for a path, as the kubelet's authorizer.
type fakeKubelet struct {
	srv              *httptest.Server
	requests, tokens atomic.Int32
	clientCerts      atomic.Int32
}

func newFakeKubelet(t *testing.T, forbid string) *fakeKubelet {
	k := &fakeKubelet{}
	k.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k.requests.Add(1)
		if r.Header.Get("Authorization") == "Bearer "+testToken {
			k.tokens.Add(1)
		}
		switch {
		case forbid != "" && r.URL.Path == forbid:
			http.Error(w, "Forbidden (user=u, verb=get, resource=nodes, subresource(s)=[stats])", http.StatusForbidden)
		case r.URL.Path == "/stats/summary":
			_, _ = w.Write([]byte(testSummary))
		case r.URL.Path == "/configz":
			_, _ = w.Write([]byte(testConfigz))
		default:
			http.NotFound(w, r)
		}
	}))
	// The handshake records any client certificate offered, even on a
	// connection that then fails.
	k.srv.TLS = &tls.Config{ClientAuth: tls.RequestClientCert, MinVersion: tls.VersionTLS12,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) > 0 {
				k.clientCerts.Add(1)
			}
			return nil
		}}
	k.srv.StartTLS()
	t.Cleanup(k.srv.Close)
	return k
}

func (k *fakeKubelet) caPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: k.srv.Certificate().Raw})
}

func (k *fakeKubelet) node(t *testing.T) *corev1.Node {
	host, port, err := net.SplitHostPort(strings.TrimPrefix(k.srv.URL, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"}}
	n.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: host}}
	n.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(p)
	return n
}

// fakeProxyAPI is an API server whose node proxy serves both documents,
// or refuses them (403) when forbidden.
func fakeProxyAPI(t *testing.T, forbidden bool) (kubernetes.Interface, *atomic.Int32) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if forbidden {
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Forbidden","code":403,"message":"nodes \"worker-1\" is forbidden"}`))
			return
		}
		switch r.URL.Path {
		case "/api/v1/nodes/worker-1/proxy/stats/summary":
			_, _ = w.Write([]byte(testSummary))
		case "/api/v1/nodes/worker-1/proxy/configz":
			_, _ = w.Write([]byte(testConfigz))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := kubernetes.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c, &hits
}

// clientCert is a self-signed client certificate and key, PEM.
func clientCert(t *testing.T) (certPEM, keyPEM []byte) {
	_, certPEM, keyPEM, err := sourcetest.SelfSigned("user", nil)
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, keyPEM
}

func paths(reads []snapshot.KubeletRead) string {
	var s []string
	for _, r := range reads {
		p := r.Document + "=" + r.Path
		if r.InsecureTLS {
			p += "(insecure)"
		}
		s = append(s, p)
	}
	return strings.Join(s, " ")
}

// TestReadKubelet: the direct path with the user's credentials, TLS
// verification (no credentials to a certificate that does not verify
// unless --kubelet-insecure-tls), and the fallbacks: node proxy, then none.
func TestReadKubelet(t *testing.T) {
	certPEM, keyPEM := clientCert(t)
	otherCA, _ := clientCert(t) // a certificate that signed no kubelet
	for _, tc := range []struct {
		name             string
		caData           []byte // the kubeconfig's CA; nil: the kubelet's own
		caFile           bool   // --kubelet-certificate-authority with the kubelet's CA
		insecure         bool
		clientCert       bool
		forbid           string // a path the kubelet refuses
		unreachable      bool
		noAddress        bool
		proxyForbidden   bool
		wantReads        string
		wantCreds        bool // the kubelet received credentials
		wantProxy        bool
		wantNote         string
		wantUnavailable  string
		wantSummaryCount int
	}{
		{name: "verified by the kubeconfig's CA", wantReads: "stats/summary=kubelet configz=kubelet", wantCreds: true, wantSummaryCount: 1},
		{name: "client certificate", clientCert: true, wantReads: "stats/summary=kubelet configz=kubelet", wantCreds: true, wantSummaryCount: 1},
		{name: "verified by --kubelet-certificate-authority", caData: otherCA, caFile: true, wantReads: "stats/summary=kubelet configz=kubelet", wantCreds: true, wantSummaryCount: 1},
		{name: "certificate does not verify: no credentials, node proxy", caData: otherCA, clientCert: true, wantReads: "stats/summary=node-proxy configz=node-proxy",
			wantProxy: true, wantNote: "does not verify against the kubeconfig's certificate authority", wantSummaryCount: 1},
		{name: "certificate does not verify, nothing else", caData: otherCA, proxyForbidden: true, wantReads: "stats/summary=none configz=none",
			wantProxy: true, wantUnavailable: "no credentials were sent (--kubelet-insecure-tls would send them anyway); through the node proxy: forbidden"},
		{name: "--kubelet-insecure-tls", caData: otherCA, insecure: true, clientCert: true, wantReads: "stats/summary=kubelet(insecure) configz=kubelet(insecure)",
			wantCreds: true, wantNote: "--kubelet-insecure-tls: the serving certificate of the kubelet at", wantSummaryCount: 1},
		{name: "--kubelet-insecure-tls, certificate verifies", insecure: true, wantReads: "stats/summary=kubelet configz=kubelet", wantCreds: true, wantSummaryCount: 1},
		{name: "kubelet refuses stats, proxy forbidden", forbid: "/stats/summary", proxyForbidden: true, wantReads: "stats/summary=none configz=kubelet", wantCreds: true,
			wantProxy: true, wantUnavailable: "refused by the kubelet (needs get on nodes/stats)"},
		{name: "kubelet refuses stats, proxy allowed", forbid: "/stats/summary", wantReads: "stats/summary=node-proxy configz=kubelet", wantCreds: true,
			wantProxy: true, wantNote: "refused by the kubelet (needs get on nodes/stats)", wantSummaryCount: 1},
		{name: "unreachable", unreachable: true, wantReads: "stats/summary=node-proxy configz=node-proxy", wantProxy: true, wantNote: "connection refused", wantSummaryCount: 1},
		{name: "no address", noAddress: true, wantReads: "stats/summary=node-proxy configz=node-proxy", wantProxy: true, wantNote: "reports no address", wantSummaryCount: 1},
		{name: "no address, proxy forbidden", noAddress: true, proxyForbidden: true, wantReads: "stats/summary=none configz=none", wantProxy: true,
			wantUnavailable: "directly: node worker-1 reports no address (status.addresses is empty); through the node proxy: forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newFakeKubelet(t, tc.forbid)
			node := k.node(t)
			if tc.unreachable {
				k.srv.Close()
			}
			if tc.noAddress {
				node.Status.Addresses = nil
			}
			cfg := &rest.Config{BearerToken: testToken}
			cfg.CAData = k.caPEM()
			if tc.caData != nil {
				cfg.CAData = tc.caData
			}
			if tc.clientCert {
				cfg.BearerToken, cfg.CertData, cfg.KeyData = "", certPEM, keyPEM
			}
			access := &KubeletAccess{Config: cfg, InsecureTLS: tc.insecure}
			if tc.caFile {
				access.CAFile = filepath.Join(t.TempDir(), "kubelet-ca.crt")
				if err := os.WriteFile(access.CAFile, k.caPEM(), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			client, proxyHits := fakeProxyAPI(t, tc.proxyForbidden)
			s := &snapshot.Snapshot{}
			if err := (&Live{Client: client, Kubelet: access}).readKubelet(context.Background(), node, s); err != nil {
				t.Fatal(err)
			}
			if got := paths(s.Kubelet.Reads); got != tc.wantReads {
				t.Errorf("reads %q, want %q", got, tc.wantReads)
			}
			creds := k.tokens.Load() + k.clientCerts.Load()
			if (creds > 0) != tc.wantCreds {
				t.Errorf("the kubelet received credentials %d times (requests %d), want any: %v", creds, k.requests.Load(), tc.wantCreds)
			}
			if tc.caData != nil && !tc.insecure && !tc.caFile && k.requests.Load() > 0 {
				t.Errorf("%d requests reached a kubelet whose certificate does not verify", k.requests.Load())
			}
			if (proxyHits.Load() > 0) != tc.wantProxy {
				t.Errorf("node proxy hits %d, want any: %v", proxyHits.Load(), tc.wantProxy)
			}
			notes, unavailable := strings.Join(s.Notes, "\n"), strings.Join(s.Kubelet.Unavailable, "\n")
			if !strings.Contains(notes, tc.wantNote) || (tc.wantNote == "" && notes != "") {
				t.Errorf("notes %q, want %q", notes, tc.wantNote)
			}
			if !strings.Contains(unavailable, tc.wantUnavailable) || (tc.wantUnavailable == "" && unavailable != "") {
				t.Errorf("unavailable %q, want %q", unavailable, tc.wantUnavailable)
			}
			if len(s.Kubelet.Summaries) != tc.wantSummaryCount {
				t.Errorf("%d summaries, want %d", len(s.Kubelet.Summaries), tc.wantSummaryCount)
			}
		})
	}
}

// TestReadKubeletProxyOnly: without a REST config (an injected client),
// only the node proxy is tried, and its refusal names the permission it
// lacked, as before the direct path existed.
func TestReadKubeletProxyOnly(t *testing.T) {
	client, _ := fakeProxyAPI(t, true)
	s := &snapshot.Snapshot{}
	if err := (&Live{Client: client}).readKubelet(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-1"}}, s); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Kubelet.Unavailable, "\n"); !strings.Contains(got, "forbidden (needs get on nodes/proxy)") || paths(s.Kubelet.Reads) != "stats/summary=none configz=none" {
		t.Errorf("unavailable %q, reads %q", got, paths(s.Kubelet.Reads))
	}
}
