//go:build darwin

package launchd

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"github.com/ebitengine/purego"
)

// libSystem's launch_activate_socket(3) and free(3), bound through purego
// rather than cgo, so that a CGO_ENABLED=0 build (the usual cross-compiled
// release) still takes its socket from launchd.
var (
	bindOnce sync.Once
	bindErr  error
	// int launch_activate_socket(const char *name, int **fds, size_t *cnt)
	launchActivateSocket func(name string, fds **int32, cnt *uintptr) int32
	cfree                func(p unsafe.Pointer)
)

func bindLibSystem() error {
	bindOnce.Do(func() {
		lib, err := purego.Dlopen("/usr/lib/libSystem.B.dylib", purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			bindErr = fmt.Errorf("load libSystem: %w", err)
			return
		}
		for name, fptr := range map[string]any{"launch_activate_socket": &launchActivateSocket, "free": &cfree} {
			sym, err := purego.Dlsym(lib, name)
			if err != nil {
				bindErr = fmt.Errorf("libSystem has no %s: %w", name, err)
				return
			}
			purego.RegisterFunc(fptr, sym)
		}
	})
	return bindErr
}

// ActivateSocket returns the listeners launchd holds for the agent's
// Sockets entry name (launch_activate_socket(3)). A process not started by
// launchd, or without that socket, gets an error wrapping ErrNotActivated.
func ActivateSocket(name string) ([]net.Listener, error) {
	if err := bindLibSystem(); err != nil {
		return nil, fmt.Errorf("launch_activate_socket %q: %w", name, err)
	}
	var fds *int32
	var cnt uintptr
	if rc := launchActivateSocket(name, &fds, &cnt); rc != 0 {
		errno := syscall.Errno(rc)
		if errors.Is(errno, syscall.ESRCH) || errors.Is(errno, syscall.ENOENT) {
			return nil, fmt.Errorf("launch_activate_socket %q: %w: %w", name, ErrNotActivated, errno)
		}
		return nil, fmt.Errorf("launch_activate_socket %q: %w", name, errno)
	}
	if fds == nil {
		return nil, fmt.Errorf("launch_activate_socket %q: %w: no descriptors", name, ErrNotActivated)
	}
	defer cfree(unsafe.Pointer(fds))
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
