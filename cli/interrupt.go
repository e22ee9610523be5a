package cli

import (
	"context"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

// Interrupts. mcpx installs no signal handler by default: os/signal costs
// two OS threads at start, a fifth of a warm call. An interrupt then ends
// mcpx at once, the kernel closes its connection, and the daemon cancels
// the call upstream. A command with something to undo first (a task to
// cancel, a prompt to leave, a terminal to restore) asks for the signal
// with interruptible or atInterrupt; once it has cleaned up, Main ends the
// process by the same signal, so a shell or a parent sees what it would
// have seen without the handler (and stops a script's loop on ^C).

// interruptSignals are the signals a command may take over.
var interruptSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM}

// received is the signal a handler took over (nil: none).
var received atomic.Value

// interruptible returns ctx cancelled at SIGINT or SIGTERM; stop releases
// the signals again.
func interruptible(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := atInterruptDo(cancel, false)
	return ctx, func() { stop(); cancel() }
}

// atInterrupt runs cleanup at SIGINT or SIGTERM and then ends the process
// by that signal at once: for a blocking read nothing can cancel, such as a
// password prompt with echo off.
func atInterrupt(cleanup func()) (stop func()) { return atInterruptDo(cleanup, true) }

func atInterruptDo(f func(), end bool) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, interruptSignals...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			received.Store(s)
			f()
			if end {
				endBySignal()
			}
		case <-done:
		}
	}()
	var once atomic.Bool
	return func() {
		if once.CompareAndSwap(false, true) {
			signal.Stop(ch)
			close(done)
		}
	}
}

// endBySignal ends the process by the signal a handler took over, if any,
// with the signal's default action. It returns only when there was none (or
// the signal did not end the process).
func endBySignal() {
	s, ok := received.Load().(syscall.Signal)
	if !ok {
		return
	}
	signal.Reset(s)
	if syscall.Kill(os.Getpid(), s) == nil {
		time.Sleep(time.Second) // delivery is asynchronous
	}
}
