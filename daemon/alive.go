package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// The alive lock: a daemon holds an exclusive flock on Paths.Alive(key) for
// its whole life, so "a daemon for this key is running" can be known
// without its socket file (which anyone may delete) and without a pid
// (which may be reused). The direct manager checks it under its spawn lock
// (service.Direct) and never starts a second daemon while it is held. The
// kernel drops the lock when the process dies, however it dies.

// errAlive is another daemon for the same key holding the alive lock.
var errAlive = errors.New("another daemon for this key is running")

// takeAlive locks path, waiting up to wait for a daemon that is exiting to
// let go.
func takeAlive(path string, wait time.Duration) (*flock.Flock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	l := flock.New(path, flock.SetPermissions(0o600))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ok, err := l.TryLockContext(ctx, 20*time.Millisecond)
	if ok {
		return l, nil
	}
	l.Close()
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("lock %s: %w", path, errAlive)
	}
	return nil, fmt.Errorf("lock %s: %w", path, err)
}

// keepSocket watches the socket file a directly started daemon bound: when
// it is removed or replaced (someone deleted it; the listener itself still
// works but nobody can reach it), the daemon binds the path again and
// serves on both, so no second daemon is needed. If another process
// answers on the path now, this daemon exits instead. It checks the info
// file as often: a file removed within a second of the last request's
// check (keepInfo) is written again without waiting for another request,
// since `mcpx status` and `mcpx stop` send none.
func (d *daemon) keepSocket(ctx context.Context, srv *http.Server) {
	ino := func() uint64 {
		fi, err := os.Lstat(d.socket)
		if err != nil {
			return 0
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && fi.Mode().Type() == os.ModeSocket {
			return uint64(st.Ino)
		}
		return 0
	}
	bound := ino()
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(d.opts.SocketCheck):
		}
		now := ino()
		if now != 0 && now == bound {
			d.repairInfo()
			continue
		}
		ln, err := bind(d.socket)
		if err != nil {
			d.stop(fmt.Sprintf("socket %s was removed and cannot be bound again: %v", d.socket, err))
			return
		}
		bound = ino()
		d.log.Printf("socket %s was removed; bound it again", d.socket)
		d.repairInfo() // removed with it, most likely
		go func(ln net.Listener) {
			if err := d.lns.serve(srv, newLimitListener(ln, d.opts.MaxConns)); err != nil && !errors.Is(err, http.ErrServerClosed) {
				d.log.Printf("serve re-bound socket: %v", err)
			}
		}(ln)
	}
}
