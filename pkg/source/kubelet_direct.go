package source

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/scale-preview/scale-preview/pkg/snapshot"
)

// KubeletAccess is how node/NAME reads a kubelet directly, where the
// kubelet authorizes /stats/* as nodes/stats and /configz as
// nodes/configz (KubeletFineGrainedAuthz) instead of nodes/proxy, which
// also reaches exec, attach and port-forward.
type KubeletAccess struct {
	// Config is the user's: its credentials (client certificate, token,
	// exec plugin) are what the kubelet authenticates, and its CA verifies
	// the kubelet's serving certificate unless CAFile is set.
	Config *rest.Config
	// CAFile is --kubelet-certificate-authority.
	CAFile string
	// InsecureTLS is --kubelet-insecure-tls: a serving certificate that
	// does not verify still gets the credentials (with a warning).
	InsecureTLS bool
	// AddressTypes in order of preference; nil: the API server's default.
	AddressTypes []corev1.NodeAddressType
	// Timeout bounds each direct request; 0: Config's (--request-timeout), else 10s.
	Timeout time.Duration
}

// DefaultAddressTypes is kube-apiserver's default
// --kubelet-preferred-address-types (cmd/kube-apiserver/app/options).
var DefaultAddressTypes = []corev1.NodeAddressType{
	corev1.NodeHostName, corev1.NodeInternalDNS, corev1.NodeInternalIP, corev1.NodeExternalDNS, corev1.NodeExternalIP,
}

// defaultKubeletPort is what the API server dials when the node reports
// no port (kube-apiserver --kubelet-port, pkg/kubelet/client).
const defaultKubeletPort = 10250

// maxKubeletDoc bounds a kubelet document read into memory.
const maxKubeletDoc = 256 << 20

// The ways a kubelet document was read (snapshot.KubeletRead.Path).
const (
	PathDirect    = "kubelet"
	PathNodeProxy = "node-proxy"
	PathFile      = "file"
	PathNone      = "none"
)

// kubeletDoc is one document the preview reads from a kubelet.
type kubeletDoc struct {
	name, path, permission string
}

var (
	summaryDoc = kubeletDoc{"stats summary", "stats/summary", "get on nodes/stats"}
	configzDoc = kubeletDoc{"configz", "configz", "get on nodes/configz; kubelets before 1.33 ask nodes/proxy instead"}
)

// KubeletEndpoint is host:port of the node's kubelet, chosen as the API
// server chooses it: the first address of the first preferred type that
// the node reports, and status.daemonEndpoints.kubeletEndpoint.Port.
func KubeletEndpoint(node *corev1.Node, types []corev1.NodeAddressType) (string, error) {
	if types == nil {
		types = DefaultAddressTypes
	}
	port := int(node.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port < 0 || port > 65535 {
		return "", fmt.Errorf("node %s reports kubelet port %d (status.daemonEndpoints.kubeletEndpoint.Port)", node.Name, port)
	}
	if port == 0 {
		port = defaultKubeletPort
	}
	for _, t := range types {
		for _, a := range node.Status.Addresses {
			if a.Type == t && a.Address != "" {
				return net.JoinHostPort(a.Address, strconv.Itoa(port)), nil
			}
		}
	}
	var have []string
	for _, a := range node.Status.Addresses {
		have = append(have, string(a.Type))
	}
	if len(have) == 0 {
		return "", fmt.Errorf("node %s reports no address (status.addresses is empty)", node.Name)
	}
	return "", fmt.Errorf("node %s reports no address of the types %v (it has %s)", node.Name, types, strings.Join(have, ", "))
}

// directKubelet reads documents from one kubelet over TLS with the user's
// credentials.
type directKubelet struct {
	access   *KubeletAccess
	endpoint string
	// verified sends credentials only to a certificate that verifies;
	// insecure (built on first need) skips verification.
	verified, insecure *http.Client
	warned             bool
	// down is a failure below HTTP (unreachable, a certificate that does
	// not verify): the next document fails the same way without a retry.
	down error
}

func (a *KubeletAccess) client(endpoint string, insecure bool) (*http.Client, error) {
	cfg := rest.CopyConfig(a.Config)
	cfg.Host, cfg.APIPath = "https://"+endpoint, ""
	// The kubeconfig's server name and skip-verify are the API server's.
	cfg.ServerName, cfg.Insecure = "", insecure
	if a.CAFile != "" {
		cfg.CAFile, cfg.CAData = a.CAFile, nil
	}
	if insecure {
		cfg.CAFile, cfg.CAData = "", nil
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, err
	}
	timeout := a.Timeout
	if timeout == 0 {
		timeout = cmp.Or(a.Config.Timeout, 10*time.Second) // --request-timeout
	}
	return &http.Client{Transport: rt, Timeout: timeout}, nil
}

// kubeletStatusError is a kubelet's refusal (401, 403) or other non-200.
type kubeletStatusError struct {
	code int
	body string
}

func (e *kubeletStatusError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.code, http.StatusText(e.code), e.body)
}

func get(ctx context.Context, c *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxKubeletDoc))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &kubeletStatusError{resp.StatusCode, strings.TrimSpace(firstLine(string(data)))}
	}
	return data, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// read fetches one document; insecure says whether the certificate went
// unverified. A certificate that does not verify gets no credentials (the
// handshake fails before any are sent) unless InsecureTLS.
func (d *directKubelet) read(ctx context.Context, doc kubeletDoc) (data []byte, insecure bool, err error) {
	if d.down != nil {
		return nil, false, d.down
	}
	data, insecure, err = d.readOnce(ctx, doc)
	var se *kubeletStatusError
	if err != nil && !errors.As(err, &se) && ctx.Err() == nil {
		d.down = err
	}
	return data, insecure, err
}

func (d *directKubelet) readOnce(ctx context.Context, doc kubeletDoc) (data []byte, insecure bool, err error) {
	url := "https://" + d.endpoint + "/" + doc.path
	if d.verified == nil {
		if d.verified, err = d.access.client(d.endpoint, false); err != nil {
			return nil, false, err
		}
	}
	data, err = get(ctx, d.verified, url)
	if err == nil || !isCertError(err) || !d.access.InsecureTLS {
		return data, false, err
	}
	if d.insecure == nil {
		if d.insecure, err = d.access.client(d.endpoint, true); err != nil {
			return nil, true, err
		}
	}
	data, err = get(ctx, d.insecure, url)
	return data, true, err
}

func isCertError(err error) bool {
	var (
		cv *tls.CertificateVerificationError
		ua x509.UnknownAuthorityError
		he x509.HostnameError
		ci x509.CertificateInvalidError
	)
	return errors.As(err, &cv) || errors.As(err, &ua) || errors.As(err, &he) || errors.As(err, &ci)
}

// directWhy says in words why a direct read failed.
func (d *directKubelet) directWhy(doc kubeletDoc, err error) string {
	at := "directly from the kubelet at " + d.endpoint + ": "
	var se *kubeletStatusError
	switch {
	case errors.As(err, &se) && se.code == http.StatusForbidden:
		return at + "refused by the kubelet (needs " + doc.permission + "): " + se.body
	case errors.As(err, &se) && se.code == http.StatusUnauthorized:
		return at + "the kubelet did not accept your credentials (401 Unauthorized)"
	case isCertError(err):
		ca := "the kubeconfig's certificate authority"
		if d.access.CAFile != "" {
			ca = "--kubelet-certificate-authority " + d.access.CAFile
		}
		return at + "its serving certificate does not verify against " + ca + " (" + oneLineErr(errors.Unwrap(err)) +
			"); no credentials were sent (--kubelet-insecure-tls would send them anyway)"
	}
	return at + oneLineErr(err)
}

// readKubelet reads the node's stats summary and configz into s: directly
// from the kubelet when access allows it, else through the API server's
// node proxy (which needs nodes/proxy; tried, never asked for), else not
// at all (noted in s.Kubelet.Unavailable; the figures are then assumed).
func (l *Live) readKubelet(ctx context.Context, node *corev1.Node, s *snapshot.Snapshot) error {
	var direct *directKubelet
	var noDirect string
	if l.Kubelet != nil && l.Kubelet.Config != nil {
		ep, err := KubeletEndpoint(node, l.Kubelet.AddressTypes)
		if err != nil {
			noDirect = "directly: " + err.Error()
		} else {
			direct = &directKubelet{access: l.Kubelet, endpoint: ep}
		}
	}
	for _, doc := range []kubeletDoc{summaryDoc, configzDoc} {
		data, read, why := l.readKubeletDoc(ctx, node.Name, doc, direct, noDirect)
		s.Kubelet.Reads = append(s.Kubelet.Reads, read)
		if data == nil {
			s.Kubelet.Unavailable = append(s.Kubelet.Unavailable, fmt.Sprintf("the kubelet's %s could not be read: %s", doc.name, strings.Join(why, "; ")))
			continue
		}
		if len(why) > 0 {
			s.Notes = append(s.Notes, fmt.Sprintf("the kubelet's %s was read through the API server's node proxy: %s", doc.name, strings.Join(why, "; ")))
		}
		if read.InsecureTLS && !direct.warned {
			direct.warned = true
			s.Notes = append(s.Notes, fmt.Sprintf("--kubelet-insecure-tls: the serving certificate of the kubelet at %s did not verify, and your credentials were sent to it anyway", direct.endpoint))
		}
		if err := addKubeletDoc(s, doc, data); err != nil {
			return fmt.Errorf("node %s: %v", node.Name, err)
		}
	}
	return nil
}

// readKubeletDoc tries the direct path, then the node proxy. data is nil
// when neither served it; why says what failed.
func (l *Live) readKubeletDoc(ctx context.Context, nodeName string, doc kubeletDoc, direct *directKubelet, noDirect string) ([]byte, snapshot.KubeletRead, []string) {
	var why []string
	if noDirect != "" {
		why = append(why, noDirect)
	}
	if direct != nil {
		data, insecure, err := direct.read(ctx, doc)
		if err == nil {
			return data, snapshot.KubeletRead{Document: doc.path, Path: PathDirect, Endpoint: direct.endpoint, InsecureTLS: insecure}, nil
		}
		why = append(why, direct.directWhy(doc, err))
	}
	data, err := l.Client.CoreV1().RESTClient().Get().Resource("nodes").Name(nodeName).SubResource("proxy").Suffix(doc.path).DoRaw(ctx)
	if err == nil {
		return data, snapshot.KubeletRead{Document: doc.path, Path: PathNodeProxy}, why
	}
	switch {
	case apierrors.IsForbidden(err) && len(why) > 0:
		why = append(why, "through the node proxy: forbidden")
	case apierrors.IsForbidden(err):
		why = append(why, "forbidden (needs get on nodes/proxy)")
	default:
		why = append(why, "through the node proxy: "+oneLineErr(err))
	}
	return nil, snapshot.KubeletRead{Document: doc.path, Path: PathNone}, why
}

// addKubeletDoc parses a document read live into s.
func addKubeletDoc(s *snapshot.Snapshot, doc kubeletDoc, data []byte) error {
	if doc == summaryDoc {
		sum, err := ParseSummary(data)
		if err != nil {
			return err
		}
		s.Kubelet.Summaries = append(s.Kubelet.Summaries, sum)
		return nil
	}
	cfg, err := ParseConfigz(data)
	if err != nil {
		return err
	}
	s.Kubelet.Configs = append(s.Kubelet.Configs, cfg)
	s.Kubelet.ConfigNames = append(s.Kubelet.ConfigNames, "configz")
	return nil
}
