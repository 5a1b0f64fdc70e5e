//go:build !linux

package e2e

import (
	"os"
	"syscall"
)

func childSysProcAttr() *syscall.SysProcAttr { return nil }

// peakRSS is unknown off Linux.
func peakRSS(ps *os.ProcessState) int64 { return -1 }

// sampleAnon is unknown off Linux.
func sampleAnon(int) (stop func() int64) { return func() int64 { return -1 } }
