package cmd

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// TestMain lets a test run the command as a real process (signals, memory
// limits): with SCALE_PREVIEW_MAIN=1 the test binary is the plugin.
func TestMain(m *testing.M) {
	if os.Getenv("SCALE_PREVIEW_MAIN") == "1" {
		// A run that would need gigabytes fails fast instead of taking
		// the machine with it.
		_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: 6 << 30, Max: 6 << 30})
		os.Exit(Main(strings.Fields(os.Getenv("SCALE_PREVIEW_ARGS")), os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// mainProcess is the plugin as a process with args (no spaces inside one)
// and extra environment.
func mainProcess(args []string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), "SCALE_PREVIEW_MAIN=1", "SCALE_PREVIEW_ARGS="+strings.Join(args, " ")), env...)
	return cmd
}
