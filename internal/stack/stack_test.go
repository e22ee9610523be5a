package stack

import (
	"testing"
	"unsafe"
)

// moves reports whether the calling goroutine's stack moved (was copied to
// a bigger one) while it ran about 16 KB deep: a local's address changes
// only then.
func moves(grow bool) bool {
	if grow {
		Grow()
	}
	var here byte
	before := uintptr(unsafe.Pointer(&here))
	deep(64) // 64 frames of 256 bytes and more
	return uintptr(unsafe.Pointer(&here)) != before
}

//go:noinline
func deep(n int) byte {
	var pad [256]byte
	pad[n%len(pad)] = byte(n)
	if n == 0 {
		return pad[0]
	}
	return deep(n-1) + pad[n%len(pad)]
}

func TestGrowLeavesRoomForDeepWork(t *testing.T) {
	run := func(grow bool) bool {
		done := make(chan bool)
		go func() { done <- moves(grow) }() // a new goroutine: a small stack
		return <-done
	}
	if !run(false) {
		t.Fatal("a new goroutine's stack did not move while going 16 KB deep: the test cannot see growth")
	}
	if run(true) {
		t.Error("after Grow, going 16 KB deep still moved the stack")
	}
}
