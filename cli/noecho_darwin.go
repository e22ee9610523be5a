package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// noEcho turns off echo on the terminal f until restore is called.
func noEcho(f *os.File) (restore func(), err error) {
	fd := int(f.Fd())
	t, err := unix.IoctlGetTermios(fd, unix.TIOCGETA)
	if err != nil {
		return nil, err
	}
	saved := *t
	t.Lflag &^= unix.ECHO
	if err := unix.IoctlSetTermios(fd, unix.TIOCSETA, t); err != nil {
		return nil, err
	}
	return func() { _ = unix.IoctlSetTermios(fd, unix.TIOCSETA, &saved) }, nil
}
