package serve

import (
	"io"
	"os"
	"syscall"
)

// pollableStdin returns in, when it is a pipe or a socket (a host's end of
// the stdio transport), as a file read through the runtime's poller, and
// the func that puts the descriptor back as it was.
//
// Go reads os.Stdin with a blocking read(2): while serve waits for the
// host's next message, a thread sits in the kernel holding its processor,
// and the runtime's monitor takes the processor back 20 µs later, hands it
// to another thread, and keeps polling at that pace. On a call's path that
// is a thread hand-off and a few wake-ups of the monitor per message, which
// on a machine with few cores is taken from the processes the call waits
// for (the daemon, the server). A non-blocking descriptor is waited for in
// epoll, like a socket. Terminals and files stay as they are (a terminal's
// flags are shared with the shell, and a file is always ready).
func pollableStdin(in io.Reader) (io.Reader, func()) {
	f, ok := in.(*os.File)
	if !ok {
		return in, func() {}
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return in, func() {}
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return in, func() {}
	}
	dup := -1
	_ = rc.Control(func(fd uintptr) {
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		if errno == 0 && flags&syscall.O_NONBLOCK == 0 { // (already so: Go polls it)
			if d, err := syscall.Dup(int(fd)); err == nil {
				dup = d
			}
		}
	})
	if dup < 0 {
		return in, func() {}
	}
	syscall.CloseOnExec(dup)
	if err := syscall.SetNonblock(dup, true); err != nil {
		syscall.Close(dup)
		return in, func() {}
	}
	// The flag belongs to the open file, which the host may share (a pipe
	// it also hands to others): it is cleared again when serve stops
	// reading.
	nb := os.NewFile(uintptr(dup), f.Name())
	return nb, func() {
		_ = syscall.SetNonblock(dup, false)
		nb.Close()
	}
}
