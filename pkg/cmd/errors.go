package cmd

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/scale-preview/scale-preview/pkg/complete"
	"github.com/scale-preview/scale-preview/pkg/source"
	"github.com/scale-preview/scale-preview/pkg/workload"
)

// Exit codes a script can rely on (documented in the README).
const (
	ExitOK          = 0
	ExitError       = 1 // anything not listed below
	ExitUsage       = 2 // bad flags or arguments
	ExitNotFound    = 3 // the object does not exist
	ExitForbidden   = 4 // RBAC denied a read, or authentication failed
	ExitUnreachable = 5 // the API server could not be reached
	ExitBadFile     = 6 // -f file unreadable, malformed, empty
	ExitUnsupported = 7 // a kind the plugin does not model
	ExitUncertain   = 8 // --fail-if-uncertain and some fate is left to chance, or the input may be incomplete
	// ExitInterrupted is the shell's code for a command ended by SIGINT (128+2).
	ExitInterrupted = 130
)

// exitError carries an exit code with a one-line message.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, format string, a ...any) error {
	return &exitError{code: code, err: fmt.Errorf(format, a...)}
}

// classify maps an error to its exit code and a one-line message that says
// what to do.
func classify(err error) (int, string) {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code, oneLine(ee.err.Error())
	}
	if code, ok := jobModeCode(err); ok {
		return code, oneLine(err.Error())
	}
	var ut *unknownTypeError
	if errors.As(err, &ut) {
		return ExitUnsupported, oneLine(ut.Error())
	}
	var fe *source.FileError
	if errors.As(err, &fe) {
		return ExitBadFile, oneLine(fe.Error())
	}
	var ie *complete.IncompleteError
	var de *complete.DuplicateError
	var ne *complete.NamelessError
	if errors.As(err, &ie) || errors.As(err, &de) || errors.As(err, &ne) {
		return ExitBadFile, oneLine(err.Error())
	}
	var nf *workload.NotFoundError
	if errors.As(err, &nf) {
		return ExitNotFound, oneLine(nf.Error() + " (check the name and -n NAMESPACE)")
	}
	if errors.Is(err, workload.ErrUnsupported) {
		return ExitUnsupported, oneLine(err.Error())
	}
	switch {
	case apierrors.IsNotFound(err):
		return ExitNotFound, oneLine(err.Error() + " (check the name and -n NAMESPACE)")
	case apierrors.IsForbidden(err):
		return ExitForbidden, oneLine(err.Error() +
			"; scale-preview needs get and list on the workload, its ReplicaSets and its pods (see README, Permissions)")
	case apierrors.IsUnauthorized(err):
		return ExitForbidden, oneLine("unauthorized: " + err.Error() + "; check your credentials (--kubeconfig, --context, --token)")
	}
	if code, msg, ok := classifyTransport(err); ok {
		return code, msg
	}
	if isUnreachable(err) {
		return ExitUnreachable, oneLine("cannot reach the Kubernetes API server: " + err.Error() + "; check --kubeconfig/--context/--server, or predict offline with -f FILE")
	}
	return ExitError, oneLine(err.Error())
}

func isUnreachable(err error) bool {
	var ue *url.Error
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.As(err, &oe) ||
		errors.Is(err, syscall.ECONNREFUSED) || strings.Contains(err.Error(), "connection refused") ||
		strings.Contains(err.Error(), "no such host") || strings.Contains(err.Error(), "i/o timeout")
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.TrimPrefix(s, "error: ")
}
