//go:build linux

package e2e

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
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

// sampleAnon polls the process's anonymous resident memory (RssAnon: heap,
// stacks, the runtime's own) every 2 ms until stop is called, and returns
// the largest value seen, in bytes. Peak RSS also counts the executable's
// file-backed pages, which the kernel may map in 2 MiB folios: tens of MiB
// that are page cache, not the process's own memory.
func sampleAnon(pid int) (stop func() int64) {
	done, peak := make(chan struct{}), make(chan int64)
	go func() {
		var hi int64
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			if v := rssAnon(pid); v > hi {
				hi = v
			}
			select {
			case <-done:
				peak <- hi
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 { close(done); return <-peak }
}

func rssAnon(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "RssAnon:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb * 1024
		}
	}
	return 0
}
