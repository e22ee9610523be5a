// Package filestamp says, with one stat, whether a file may have changed:
// the daemon uses it to notice edited configs and a rewritten environment
// file, the schema cache to reuse a snapshot whose ref is unchanged.
package filestamp

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// Stamp is what a stat says about one version of a file. Files written by
// temp file + rename get a new inode, so a rewrite changes the stamp even
// within the filesystem's mtime resolution.
type Stamp struct {
	Exists bool
	Ino    uint64
	Size   int64
	MTime  time.Time
}

// Of stats path. A missing file is the zero Stamp and no error.
func Of(path string) (Stamp, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Stamp{}, nil
	}
	if err != nil {
		return Stamp{}, err
	}
	st := Stamp{Exists: true, Size: fi.Size(), MTime: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.Ino = uint64(sys.Ino)
	}
	return st, nil
}
