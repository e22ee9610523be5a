// Package peercred reads the uid of the process at the other end of a unix
// socket connection: SO_PEERCRED on Linux, LOCAL_PEERCRED (what
// getpeereid(3) does) on macOS. The CLI uses it to refuse a socket served by
// another user before it sends anything; the daemon, to refuse a client of
// another user.
package peercred

import (
	"fmt"
	"net"
	"syscall"
)

// UID returns the peer's uid of c, a unix socket connection (or a wrapper
// of one that has a NetConn method).
func UID(c net.Conn) (int, error) {
	if w, ok := c.(interface{ NetConn() net.Conn }); ok {
		c = w.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return -1, fmt.Errorf("%T is not a socket", c)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	uid, uerr := -1, error(nil)
	if err := raw.Control(func(fd uintptr) { uid, uerr = fdUID(int(fd)) }); err != nil {
		return -1, err
	}
	return uid, uerr
}
