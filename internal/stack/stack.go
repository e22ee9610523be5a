// Package stack grows a goroutine's stack ahead of deep work.
//
// A goroutine starts with a 2 KB stack that doubles when a call needs more,
// and each doubling copies and adjusts every frame on it, reading the
// binary's PC tables, often from pages not yet touched. A short-lived
// goroutine that goes deep (a CLI command, a daemon request) pays that
// several times, deep inside its work: 6 % of a warm `mcpx call`'s CPU, and
// 11 % of the daemon's CPU per request, in perf profiles. Growing once,
// while the stack is shallow, costs one copy of a few frames.
package stack

// Size is the stack Grow makes room for: enough for mcpx's commands and the
// daemon's requests without another doubling. 32 KB measured faster than
// 16 KB and 64 KB for the CLI; the frame is zeroed, so a bigger one costs
// page faults of its own.
const Size = 32 << 10

// Grow makes the calling goroutine's stack hold at least Size more bytes
// than it uses now.
//
//go:noinline
func Grow() {
	var frame [Size]byte
	keep(frame[:])
}

// keep uses the frame so that the compiler keeps it.
//
//go:noinline
func keep(b []byte) { _ = b[len(b)-1] }
