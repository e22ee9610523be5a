package daemon

import (
	"os"
	"strconv"
	"sync"
	"syscall"

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
