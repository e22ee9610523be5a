//go:build !linux

package upstream

// awaitExit returns at once: the caller's exec.Cmd.Wait waits for the
// process (holding an OS thread while it does; only Linux's pidfds let the
// runtime's poller wait instead).
func awaitExit(int) {}
