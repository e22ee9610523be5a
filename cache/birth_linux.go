package cache

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// birthTime is the file's creation time where the filesystem records it,
// else its modification time.
func birthTime(path string, fi os.FileInfo) time.Time {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BTIME, &st); err == nil && st.Mask&unix.STATX_BTIME != 0 {
		return time.Unix(st.Btime.Sec, int64(st.Btime.Nsec))
	}
	return fi.ModTime()
}
