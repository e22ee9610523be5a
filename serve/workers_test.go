package serve

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// Calls run at once (one that waits does not hold up the next), every
// call runs, and stop ends the workers once idle.
func TestWorkersRunCallsAtOnceAndEnd(t *testing.T) {
	before := runtime.NumGoroutine()
	var w workers
	release := make(chan struct{})
	started := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	w.run(func() { defer wg.Done(); close(started); <-release }) // a call that waits
	<-started
	done := make(chan struct{})
	wg.Add(1)
	w.run(func() { defer wg.Done(); close(done) })
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a call waited for another to end")
	}
	close(release)
	wg.Wait()
	ran := 0
	var mu sync.Mutex
	for range 50 {
		wg.Add(1)
		w.run(func() { defer wg.Done(); mu.Lock(); ran++; mu.Unlock() })
		wg.Wait()
	}
	if ran != 50 {
		t.Fatalf("%d of 50 calls ran", ran)
	}
	w.stop()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine() - before; n > 0 {
		t.Errorf("%d workers left after stop", n)
	}
}
