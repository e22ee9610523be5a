package peercred

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// fdUID reads the peer's uid with LOCAL_PEERCRED, what getpeereid(3) does.
func fdUID(fd int) (int, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return -1, fmt.Errorf("LOCAL_PEERCRED: %w", err)
	}
	return int(cred.Uid), nil
}
