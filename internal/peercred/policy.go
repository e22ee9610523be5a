package peercred

import (
	"fmt"
	"path/filepath"

	"github.com/mcpx-dev/mcpx/internal/owner"
)

// Who may serve a user's socket. The uid a client sees for a socket (the
// file's owner, and the peer credentials of the connection, which are those
// of the process that called listen(2)) is the user's own when the daemon
// bound the socket itself. Under socket activation it is the service
// manager's: launchd runs as root and binds an agent's SockPathName itself
// (xnu's LOCAL_PEERCRED reports the listening socket's credentials), and so
// does systemd's PID 1 for a system-level socket unit. Root can do anything
// to the user anyway, so a root listener is no threat in itself; what must
// not be accepted is a socket someone else put where the user looks. So the
// policy is: the user, or root when the socket lies in a directory that is
// the user's own and closed to everyone else (owned by the user, no group
// or other permission bits), where nobody but the user and root can have
// created it.

// ServerAllowed reports whether uid may serve user me on the socket at
// path. When it may not, why says what is wrong, as a clause for an error
// message ("" when uid is simply another user).
func ServerAllowed(path string, uid, me int) (ok bool, why string) {
	if uid == me {
		return true, ""
	}
	if uid != 0 {
		return false, ""
	}
	dir := filepath.Dir(path)
	if err := PrivateDir(dir, me); err != nil {
		return false, fmt.Sprintf("root may hold your socket only in a directory that is yours alone, and %v", err)
	}
	return true, ""
}

// PrivateDir checks that dir is a directory (not a symlink) owned by uid me
// with no permission bits for group or others (an *owner.Error if not).
func PrivateDir(dir string, me int) error {
	return owner.Rule{User: me, Deny: 0o077}.CheckDir(dir)
}
