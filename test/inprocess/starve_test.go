package inprocess

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// CPU starvation (INPROCESS_STARVE=N): N goroutines spin beside the
// controllers while the runs go on, as other work saturates a control
// plane's CPU. With GOMAXPROCS=1 the controllers then get the processor
// only when the scheduler preempts a spinner (every 10 ms or so), the way
// a starved kube-controller-manager is scheduled.
var (
	starveMu    sync.Mutex
	starveUsers int
	starveStop  chan struct{}
	starveSpins atomic.Int64
)

// startStarving starts the spinners (once, shared by concurrent callers);
// the returned func stops them when the last caller is done.
func startStarving() func() {
	n := envInt("INPROCESS_STARVE", 0)
	if n <= 0 {
		return func() {}
	}
	starveMu.Lock()
	defer starveMu.Unlock()
	if starveUsers == 0 {
		starveStop = make(chan struct{})
		for range n {
			go spin(starveStop)
		}
	}
	starveUsers++
	return func() {
		starveMu.Lock()
		defer starveMu.Unlock()
		if starveUsers--; starveUsers == 0 {
			close(starveStop)
		}
	}
}

func spin(stop chan struct{}) {
	x := uint64(1)
	for {
		for range 1 << 16 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		starveSpins.Add(int64(x & 1))
		select {
		case <-stop:
			return
		default:
		}
	}
}

// starveSetting describes the starvation for the logs.
func starveSetting() string {
	n := envInt("INPROCESS_STARVE", 0)
	if n <= 0 {
		return "off"
	}
	return fmt.Sprintf("%d spinners, GOMAXPROCS=%d", n, runtime.GOMAXPROCS(0))
}
