package daemon

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// adoptInherited makes LISTEN_FDS from the direct manager ours: with
// api.EnvListenInherited=1 and no LISTEN_PID, LISTEN_PID is set to this
// process so that the systemd activation code takes the socket (one code
// path for every inherited listener). It reports whether it did, and
// unsets the marker either way.
func adoptInherited() bool {
	marked := os.Getenv(api.EnvListenInherited) == "1"
	os.Unsetenv(api.EnvListenInherited)
	if !marked || os.Getenv("LISTEN_FDS") == "" || os.Getenv("LISTEN_PID") != "" {
		return false
	}
	os.Setenv("LISTEN_PID", strconv.Itoa(os.Getpid()))
	return true
}

// inheritedManager is the manager a daemon handed an inherited socket runs
// under: api.EnvListenManager when a predecessor set it (handoff.go), else
// direct (the direct manager spawned it). The variable is unset.
func inheritedManager() string {
	m := os.Getenv(api.EnvListenManager)
	os.Unsetenv(api.EnvListenManager)
	if m == "systemd" {
		return m
	}
	return "direct"
}

// takeReadyPipe takes the readiness pipe the direct manager passed
// (api.EnvReadyFD) and returns the function that reports "READY=1" on it
// and closes it (nil without one). The descriptor is marked close-on-exec
// at once, so the MCP servers this daemon starts never hold it.
func takeReadyPipe() func() {
	v := os.Getenv(api.EnvReadyFD)
	os.Unsetenv(api.EnvReadyFD)
	fd, err := strconv.Atoi(v)
	if v == "" || err != nil || fd < 3 {
		return nil
	}
	syscall.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "ready")
	var once sync.Once
	return func() {
		once.Do(func() {
			f.Write([]byte("READY=1\n")) // best effort: the client may be gone
			f.Close()
		})
	}
}

// removeDirectSocket removes the socket file a direct-manager daemon leaves
// when it exits (a socket handed over as a descriptor is not unlinked when
// it closes). It does so under the direct manager's lock, and only when
// nobody answers on the path: a newer daemon may already have bound it
// (an upgrade, a restart), and its socket must stay.
func removeDirectSocket(paths config.Paths, key config.DaemonKey, sock string) {
	if fi, err := os.Lstat(sock); err != nil || fi.Mode().Type() != os.ModeSocket {
		return
	}
	lock := flock.New(paths.Lock(key), flock.SetPermissions(0o600))
	defer lock.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if ok, _ := lock.TryLockContext(ctx, 10*time.Millisecond); !ok {
		return
	}
	defer lock.Unlock()
	c, err := net.DialTimeout("unix", sock, time.Second)
	if err == nil {
		c.Close()
		return // another daemon serves it now
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		os.Remove(sock)
	}
}
