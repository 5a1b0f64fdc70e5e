package e2e

// The kubelet stand-in of the netns eviction test: the real kubelet
// server (k8s.io/kubernetes/pkg/kubelet/server) with its real
// authentication and authorization filter, built as cmd/kubelet/app's
// BuildAuth builds it (webhook token authentication through the API
// server's TokenReview, x509 client certificates from a client CA, webhook
// authorization through SubjectAccessReview). Only the data is fake: the
// summary provider returns the recorded summary, and configz holds the
// recorded configuration. A recorder in front says which requests arrived
// with credentials and what the kubelet answered.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/configz"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	kubeletconfig "k8s.io/kubernetes/pkg/kubelet/apis/config"
	kubeletserver "k8s.io/kubernetes/pkg/kubelet/server"
	"k8s.io/kubernetes/pkg/kubelet/server/stats"
)

// kubeletHit is one request the kubelet received.
type kubeletHit struct {
	Run, Path  string
	Credential bool // an Authorization header or a client certificate
	Code       int
}

// kubeletRecorder tags each request with the plugin run under way.
type kubeletRecorder struct {
	mu   sync.Mutex
	run  string
	hits []kubeletHit
}

func (r *kubeletRecorder) setRun(run string) { r.mu.Lock(); r.run = run; r.mu.Unlock() }

func (r *kubeletRecorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// Before the kubelet's filter, which deletes a token it accepted.
		cred := req.Header.Get("Authorization") != "" || (req.TLS != nil && len(req.TLS.PeerCertificates) > 0)
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(sw, req)
		r.mu.Lock()
		r.hits = append(r.hits, kubeletHit{Run: r.run, Path: req.URL.Path, Credential: cred, Code: sw.code})
		r.mu.Unlock()
	})
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) { w.code = code; w.ResponseWriter.WriteHeader(code) }

// fakeKubeletHost is the kubelet's HostInterface: nothing the summary and
// configz endpoints read; the methods NewServer takes as values exist.
type fakeKubeletHost struct{ kubeletserver.HostInterface }

func (fakeKubeletHost) SyncLoopHealthCheck(*http.Request) error { return nil }

// fakeSummary is the kubelet's ResourceAnalyzer: the summary handler's
// data is dir/summary.json, read at each request.
type fakeSummary struct {
	stats.ResourceAnalyzer
	path string
}

func (f fakeSummary) Get(context.Context, bool) (*statsapi.Summary, error) {
	b, err := os.ReadFile(f.path)
	if err != nil {
		return nil, err
	}
	var s statsapi.Summary
	return &s, json.Unmarshal(b, &s)
}

func (f fakeSummary) GetCPUAndMemoryStats(ctx context.Context) (*statsapi.Summary, error) {
	return f.Get(ctx, false)
}

// rawConfig is configz's kubeletconfig object as recorded JSON (the real
// kubelet sets its versioned KubeletConfiguration; configz marshals either
// with encoding/json).
type rawConfig struct{ json.RawMessage }

// GetObjectKind is the kubelet's (configz refuses an object without one).
func (rawConfig) GetObjectKind() schema.ObjectKind {
	return &metav1.TypeMeta{APIVersion: "kubelet.config.k8s.io/v1beta1", Kind: "KubeletConfiguration"}
}
func (c rawConfig) DeepCopyObject() runtime.Object {
	return rawConfig{slices.Clone(c.RawMessage)}
}

// kubeletCerts are the PEM files of the kubelet stand-in's TLS.
type kubeletCerts struct {
	servingCA      string // the kubelet's self-signed serving certificate
	servingKey     *ecdsa.PrivateKey
	servingDER     []byte
	clientCA       string // signs the API server's kubelet client certificate
	apiClientCert  string
	apiClientKey   string
	otherCA        string // a CA that signed nothing the kubelet serves
	kubeletAddress string
}

// newKubeletCerts writes the certificates to dir.
func newKubeletCerts(dir, addr string) (*kubeletCerts, error) {
	c := &kubeletCerts{kubeletAddress: addr}
	var err error
	ip := net.ParseIP(addr)
	if c.servingDER, c.servingKey, err = makeCert("sp-evict-kubelet", []net.IP{ip}, nil, nil, true, x509.ExtKeyUsageServerAuth); err != nil {
		return nil, err
	}
	c.servingCA = filepath.Join(dir, "kubelet-ca.crt")
	if err := writePEM(c.servingCA, "CERTIFICATE", c.servingDER); err != nil {
		return nil, err
	}
	caDER, caKey, err := makeCert("sp-evict-kubelet-client-ca", nil, nil, nil, true, x509.ExtKeyUsageClientAuth)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	c.clientCA = filepath.Join(dir, "kubelet-client-ca.crt")
	if err := writePEM(c.clientCA, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	clDER, clKey, err := makeCert("kube-apiserver-kubelet-client", nil, caCert, caKey, false, x509.ExtKeyUsageClientAuth)
	if err != nil {
		return nil, err
	}
	c.apiClientCert, c.apiClientKey = filepath.Join(dir, "apiserver-kubelet-client.crt"), filepath.Join(dir, "apiserver-kubelet-client.key")
	if err := writePEM(c.apiClientCert, "CERTIFICATE", clDER); err != nil {
		return nil, err
	}
	kder, err := x509.MarshalECPrivateKey(clKey)
	if err != nil {
		return nil, err
	}
	if err := writePEM(c.apiClientKey, "EC PRIVATE KEY", kder); err != nil {
		return nil, err
	}
	c.otherCA = filepath.Join(dir, "other-ca.crt")
	return c, writePEM(c.otherCA, "CERTIFICATE", caDER)
}

func makeCert(cn string, ips []net.IP, parent *x509.Certificate, parentKey *ecdsa.PrivateKey, isCA bool, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn}, IPAddresses: ips,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		BasicConstraintsValid: true, IsCA: isCA,
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	return der, key, err
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

// startRealKubelet serves the real kubelet server for node nodeName on
// addr:port, authenticating and authorizing through the API server that
// client reaches (the kubelet's own credentials: TokenReview and
// SubjectAccessReview).
func startRealKubelet(ctx context.Context, client kubernetes.Interface, nodeName string, port int, certs *kubeletCerts, dir string, configzJSON []byte, rec *kubeletRecorder) error {
	clientCA, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", certs.clientCA)
	if err != nil {
		return err
	}
	authn, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous:                          &apiserver.AnonymousAuthConfig{Enabled: false},
		CacheTTL:                           0,
		ClientCertificateCAContentProvider: clientCA,
		TokenAccessReviewClient:            client.AuthenticationV1(),
		WebhookRetryBackoff:                genericoptions.DefaultAuthWebhookRetryBackoff(),
	}.New()
	if err != nil {
		return err
	}
	authz, err := authorizerfactory.DelegatingAuthorizerConfig{
		SubjectAccessReviewClient: client.AuthorizationV1(),
		// No cache: each run is authorized afresh.
		AllowCacheTTL: 0, DenyCacheTTL: 0,
		WebhookRetryBackoff: genericoptions.DefaultAuthWebhookRetryBackoff(),
	}.New()
	if err != nil {
		return err
	}
	auth := kubeletserver.NewKubeletAuth(authn, kubeletserver.NewNodeAuthorizerAttributesGetter(types.NodeName(nodeName)), authz, clientCA)
	cz, err := configz.New("kubeletconfig")
	if err != nil {
		return err
	}
	if err := cz.Set(rawConfig{configzJSON}); err != nil {
		return err
	}
	srv := kubeletserver.NewServer(ctx, fakeKubeletHost{}, fakeSummary{path: filepath.Join(dir, "summary.json")}, nil, nil, auth,
		&kubeletconfig.KubeletConfiguration{EnableDebuggingHandlers: true})
	l, err := net.Listen("tcp", net.JoinHostPort(certs.kubeletAddress, strconv.Itoa(port)))
	if err != nil {
		return err
	}
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(certs.clientCA)
	if err != nil {
		return err
	}
	pool.AppendCertsFromPEM(caPEM)
	hs := &http.Server{Handler: rec.wrap(&srv), ReadHeaderTimeout: 10 * time.Second, TLSConfig: &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{certs.servingDER}, PrivateKey: certs.servingKey}},
		// As the kubelet with a client CA: verify a certificate if given.
		ClientAuth: tls.VerifyClientCertIfGiven, ClientCAs: pool,
		MinVersion: tls.VersionTLS12,
	}}
	go func() {
		if err := hs.ServeTLS(l, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "kubelet:", err)
		}
	}()
	go func() { <-ctx.Done(); _ = hs.Close() }()
	return nil
}
