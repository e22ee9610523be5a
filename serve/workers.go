package serve

import (
	"sync"

	"github.com/mcpx-dev/mcpx/internal/stack"
)

// workers run the calls answered on stdio, each on a goroutine of its own
// (calls run at once, and the reader goes on reading the host's messages:
// cancellations, other calls). A goroutine that finished a call waits for
// the next instead of ending: a call goes deep (the daemon's client, JSON),
// and a fresh goroutine's stack would double several times on every call,
// copying its frames each time (5 % of serve's CPU on a call). Idle
// workers are as many as calls ran at once at most, and end with the
// session (stop).
type workers struct {
	work     chan func() // unbuffered: a send is taken only by an idle worker
	quit     chan struct{}
	initOnce sync.Once
	stopOnce sync.Once
}

func (w *workers) init() {
	w.initOnce.Do(func() { w.work, w.quit = make(chan func()), make(chan struct{}) })
}

// run runs f on an idle worker, or on a new one.
func (w *workers) run(f func()) {
	w.init()
	select {
	case w.work <- f:
	default:
		go w.loop(f)
	}
}

func (w *workers) loop(f func()) {
	stack.Grow()
	for {
		f()
		select {
		case f = <-w.work:
		case <-w.quit:
			return
		}
	}
}

// stop ends the idle workers (and each busy one once its call is done).
func (w *workers) stop() {
	w.init()
	w.stopOnce.Do(func() { close(w.quit) })
}
