//go:build linux

package e2e

import (
	"os"
	"syscall"
)

// childSysProcAttr makes the control-plane processes die with the test
// binary, even when `go test -timeout` kills it before teardown runs.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// peakRSS is the peak resident set size of a finished child process, in
// bytes (wait4's ru_maxrss, in KiB on Linux; it covers the child's own
// reaped children too), or -1 when unknown.
func peakRSS(ps *os.ProcessState) int64 {
	if ps == nil {
		return -1
	}
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss * 1024
	}
	return -1
}
