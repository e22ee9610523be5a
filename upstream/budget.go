package upstream

import (
	"context"
	"sync"
	"time"
)

// A call's budget (callTimeout) bounds the server's work, not a person's:
// while the call waits for its caller to answer what the server asked
// (an elicitation), the clock stops. budget is a deadline that can pause.
type budget struct {
	mu     sync.Mutex
	left   time.Duration // what remains, as of since
	since  time.Time     // when the clock last (re)started
	paused int
	fired  bool
	timer  *time.Timer
}

type budgetKey struct{}

// withBudget returns a context that ends at deadline, counting only the
// time no pauseBudget holds it, and the func that releases it. Its Err is
// context.Canceled in both cases; context.Cause says DeadlineExceeded when
// the budget ran out.
func withBudget(parent context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	b := &budget{left: time.Until(deadline), since: time.Now()}
	b.mu.Lock()
	b.timer = time.AfterFunc(b.left, func() {
		b.mu.Lock()
		b.fired = true
		b.mu.Unlock()
		cancel(context.DeadlineExceeded)
	})
	b.mu.Unlock()
	return context.WithValue(ctx, budgetKey{}, b), func() {
		b.timer.Stop()
		cancel(context.Canceled)
	}
}

// pauseBudget stops the clock of ctx's budget (if it has one) until the
// returned func is called. Pauses nest.
func pauseBudget(ctx context.Context) (resume func()) {
	b, _ := ctx.Value(budgetKey{}).(*budget)
	if b == nil {
		return func() {}
	}
	b.mu.Lock()
	if b.paused == 0 && !b.fired && b.timer.Stop() {
		b.left -= time.Since(b.since)
	}
	b.paused++
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.paused--
			if b.paused == 0 && !b.fired {
				b.since = time.Now()
				b.timer.Reset(max(b.left, 0))
			}
		})
	}
}
