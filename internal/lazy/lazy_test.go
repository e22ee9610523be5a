package lazy

import (
	"sync"
	"testing"
)

var calls int

var answer = Value[int]{New: func() int { calls++; return 42 }}

func TestValueComputesOnce(t *testing.T) {
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got := answer.Get(); got != 42 {
				t.Errorf("Get() = %d, want 42", got)
			}
		})
	}
	wg.Wait()
	if answer.Get() != 42 || calls != 1 {
		t.Errorf("New ran %d times, want 1", calls)
	}
}
