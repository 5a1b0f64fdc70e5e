//go:build linux

package e2e

import "syscall"

// childSysProcAttr makes the control-plane processes die with the test
// binary, even when `go test -timeout` kills it before teardown runs.
func childSysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
