package serve

import (
	"context"
	"testing"
	"time"
)

// A parked call is taken once by its requestState; one nobody resumes is
// cancelled when parkWait passes.
func TestParking(t *testing.T) {
	var pk parking
	ctx, cancel := context.WithCancel(context.Background())
	p := &parked{cancel: cancel}
	state := pk.park(p)
	if pk.take(state+"-TAMPERED") != nil {
		t.Error("a changed requestState found the call")
	}
	if got := pk.take(state); got != p {
		t.Fatalf("take = %v", got)
	}
	if pk.take(state) != nil {
		t.Error("a requestState served twice")
	}
	if ctx.Err() != nil {
		t.Error("taking the call cancelled it")
	}

	old := parkWait
	parkWait = 10 * time.Millisecond
	defer func() { parkWait = old }()
	ctx2, cancel2 := context.WithCancel(context.Background())
	state2 := pk.park(&parked{cancel: cancel2})
	select {
	case <-ctx2.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("an unresumed call was not cancelled")
	}
	if pk.take(state2) != nil {
		t.Error("an expired call could be resumed")
	}
}
