//go:build darwin && cgo

package launchd

/*
#include <launch.h>
#include <stdlib.h>
*/
import "C"

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// ActivateSocket returns the listeners launchd holds for the agent's
// Sockets entry name (launch_activate_socket(3)). A process not started by
// launchd, or without that socket, gets an error wrapping ErrNotActivated.
func ActivateSocket(name string) ([]net.Listener, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var fds *C.int
	var cnt C.size_t
	if rc := C.launch_activate_socket(cname, &fds, &cnt); rc != 0 {
		errno := syscall.Errno(rc)
		if errors.Is(errno, syscall.ESRCH) || errors.Is(errno, syscall.ENOENT) {
			return nil, fmt.Errorf("launch_activate_socket %q: %w: %w", name, ErrNotActivated, errno)
		}
		return nil, fmt.Errorf("launch_activate_socket %q: %w", name, errno)
	}
	defer C.free(unsafe.Pointer(fds))
	var lns []net.Listener
	for _, fd := range unsafe.Slice(fds, int(cnt)) {
		f := os.NewFile(uintptr(fd), name)
		ln, err := net.FileListener(f) // dups the descriptor
		f.Close()
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("launchd socket %q: %w", name, err)
		}
		lns = append(lns, ln)
	}
	if len(lns) == 0 {
		return nil, fmt.Errorf("launch_activate_socket %q: %w: no descriptors", name, ErrNotActivated)
	}
	return lns, nil
}
