package serve

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A pipe is read through the poller and given back in blocking mode; a
// file is read as it is.
func TestPollableStdin(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	r.Fd() // blocking, as a child's stdin is (os/exec passes it so)
	in, restore := pollableStdin(r)
	if in == io.Reader(r) {
		t.Fatal("a pipe was not made pollable")
	}
	if _, err := w.Write([]byte("line\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, err := in.Read(buf)
	if err != nil || string(buf[:n]) != "line\n" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if !nonblocking(t, r) {
		t.Error("the pipe is not in non-blocking mode while serve reads it")
	}
	restore()
	if nonblocking(t, r) {
		t.Error("the pipe was left in non-blocking mode")
	}

	f, err := os.Create(filepath.Join(t.TempDir(), "in"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if in, restore := pollableStdin(f); in != io.Reader(f) {
		t.Error("a file was replaced")
	} else {
		restore()
	}
}

func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	var nb bool
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(fd uintptr) {
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
		if errno != 0 {
			t.Fatal(errno)
		}
		nb = flags&syscall.O_NONBLOCK != 0
	})
	return nb
}
