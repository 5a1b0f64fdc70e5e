package cmd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/scale-preview/scale-preview/pkg/prediction"
)

// classifyTransport names the failures of talking to an API server that
// are not "the server is unreachable": a certificate that does not verify,
// a server that answered too slowly or with a server error.
func classifyTransport(err error) (int, string, bool) {
	if isCertificateError(err) {
		return ExitUnreachable, oneLine("the API server's TLS certificate does not verify: " + err.Error() +
			"; this is a certificate problem, not the network: check certificate-authority(-data) in the kubeconfig, or --certificate-authority / --tls-server-name"), true
	}
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "Client.Timeout exceeded") ||
		apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) {
		return ExitUnreachable, oneLine("the API server did not answer in time: " + err.Error() +
			"; raise --request-timeout (e.g. --request-timeout=60s) or check the server's load"), true
	}
	if apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) {
		return ExitUnreachable, oneLine("the API server is overloaded or unavailable and kept refusing after retries: " + err.Error() + "; try again later"), true
	}
	if apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err) {
		return ExitError, oneLine("the API server failed to answer: " + err.Error() + "; try again, or predict offline with -f FILE"), true
	}
	return 0, "", false
}

func isCertificateError(err error) bool {
	var ua x509.UnknownAuthorityError
	var ci x509.CertificateInvalidError
	var he x509.HostnameError
	var cv *tls.CertificateVerificationError
	var rh tls.RecordHeaderError
	if errors.As(err, &ua) || errors.As(err, &ci) || errors.As(err, &he) || errors.As(err, &cv) || errors.As(err, &rh) {
		return true
	}
	// Errors that crossed a url.Error keep only their text.
	s := err.Error()
	return strings.Contains(s, "x509: ") || strings.Contains(s, "tls: failed to verify certificate")
}

// configError explains a failure to build the client configuration: a bad
// --request-timeout is a flag error, not a kubeconfig problem.
func (o *Options) configError(err error) error {
	if t := o.configFlags.Timeout; t != nil && *t != "" {
		if _, perr := clientcmd.ParseTimeout(*t); perr != nil {
			return withCode(ExitUsage, "--request-timeout %q is not a duration: use seconds or a number with a unit, e.g. 30s or 2m", *t)
		}
	}
	return withCode(ExitUsage, "cannot load kubeconfig: %v; set --kubeconfig or KUBECONFIG, or predict offline with -f FILE", err)
}

// uncertainError is the --fail-if-uncertain failure; it says when the
// cause is the input rather than chance.
func uncertainError(p *prediction.Prediction) error {
	if len(p.Incomplete) > 0 {
		return fmt.Errorf("%w (the input may be incomplete: %s)", errUncertain, p.Incomplete[0])
	}
	return errUncertain
}
