package daemon

import (
	"fmt"
	"net"
	"syscall"
)

// peerUID reads the uid of the process at the other end of a unix socket
// connection (fdPeerUID per platform).
func peerUID(c net.Conn) (int, error) {
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
	if err := raw.Control(func(fd uintptr) { uid, uerr = fdPeerUID(int(fd)) }); err != nil {
		return -1, err
	}
	return uid, uerr
}
