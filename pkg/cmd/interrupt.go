package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"
)

// interruptGrace is how long a run may take to unwind after Ctrl-C before
// the process exits anyway: a read that does not watch the context (a file
// on stdin, a stuck TLS handshake) must not keep the user waiting.
const interruptGrace = 800 * time.Millisecond

// withInterrupt returns a context cancelled by SIGINT (Ctrl-C). After a
// signal the process exits with ExitInterrupted within interruptGrace even
// if the run has not returned; a second signal exits at once.
func withInterrupt(stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt)
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
		case <-done:
			return
		}
		cancel()
		select {
		case <-sig:
		case <-time.After(interruptGrace):
		case <-done:
			return
		}
		fmt.Fprintln(stderr, "error: interrupted")
		os.Exit(ExitInterrupted)
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel()
	}
}

// interrupted: the run ended because the user pressed Ctrl-C.
func interrupted(ctx context.Context) bool {
	return ctx != nil && ctx.Err() == context.Canceled
}
