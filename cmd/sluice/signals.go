package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// defaultStopTimeout is the default of --stop-timeout: below the 30 s that
// service managers (Kubernetes, systemd) commonly allow before SIGKILL.
const defaultStopTimeout = 10 * time.Second

// stopOnSignals returns a context that the first of sigs cancels, so that
// the jobs stop gracefully: sources stop reading, sinks flush, the last
// checkpoint commits. If the process is still running timeout after that
// signal, or on a second one, it exits at once with 128 + the signal's
// number, as a process killed by the signal would: nothing more is
// flushed, and a job run again resumes from its last checkpoint, as after
// a crash. release ends the watch (and disarms the timeout).
func stopOnSignals(parent context.Context, stderr io.Writer, timeout time.Duration, sigs ...os.Signal) (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancel(parent)
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, sigs...)
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		var first os.Signal
		select {
		case first = <-ch:
		case <-done:
			return
		}
		fmt.Fprintf(stderr, "sluice: %s: stopping (sources stop reading, sinks flush); another signal exits at once\n", name(first))
		cancel()
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case sig := <-ch:
			fmt.Fprintf(stderr, "sluice: %s again: exiting at once\n", name(sig))
			os.Exit(exitCode(sig))
		case <-t.C:
			fmt.Fprintf(stderr, "sluice: did not stop within %v of %s: exiting; what the last checkpoint does not hold is read again when the job restarts\n",
				timeout, name(first))
			os.Exit(exitCode(first))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		<-ended
		cancel()
	}
}

// name names a signal as kill(1) does.
func name(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case os.Interrupt:
		return "SIGINT"
	}
	return sig.String()
}

// exitCode is the exit status of a process killed by sig.
func exitCode(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return 1
}
