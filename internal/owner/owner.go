// Package owner decides whether a file or directory mcpx reads for a
// decision may be trusted: it must belong to the current user and be
// writable by nobody else, and a file must be a regular file reached
// without following a symlink. Another local user who could write it could
// otherwise choose the command a daemon runs (key records), what a tool's
// annotations say (schema refs, the content store) or the variables a
// server gets (env files).
//
// Every mcpx package that reads such state uses this package (key records,
// info files, env files, schema refs, content-store entries; trust records
// and token stores should too): CheckDir for the directories on the way,
// OpenFile or ReadFile for the file itself. Refusals wrap ErrUnsafe and
// read as one sentence that names the path and what to do.
//
// The checks are on the object itself, not its ancestors above mcpx's own
// directories: a parent that others may write (a shared XDG_STATE_HOME)
// still cannot swap a directory that is ours and checked, because each
// file is opened without following symlinks and then checked by fstat.
package owner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrUnsafe is the kind of every refusal.
var ErrUnsafe = errors.New("not safe to trust")

// UnsafeError is a path refused: Why says what is wrong with it.
type UnsafeError struct {
	Path string
	Why  string
}

func (e *UnsafeError) Error() string {
	return fmt.Sprintf("refusing %s: %s; it must be owned by you (uid %d) and writable only by you", e.Path, e.Why, os.Getuid())
}

// Unwrap returns ErrUnsafe.
func (e *UnsafeError) Unwrap() error { return ErrUnsafe }

// check applies the owner and mode rules to fi.
func check(path string, fi fs.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return &UnsafeError{Path: path, Why: fmt.Sprintf("it is owned by uid %d", st.Uid)}
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return &UnsafeError{Path: path, Why: fmt.Sprintf("it is writable by others (mode %#o)", fi.Mode().Perm())}
	}
	return nil
}

// CheckDir checks that path is a directory (not a symlink to one) owned by
// the current user and not writable by group or others. A missing
// directory is an error satisfying errors.Is(err, fs.ErrNotExist).
func CheckDir(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &UnsafeError{Path: path, Why: "it is not a directory (" + kind(fi) + ")"}
	}
	return check(path, fi)
}

// CheckFile is CheckDir for a regular file.
func CheckFile(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return &UnsafeError{Path: path, Why: "it is not a regular file (" + kind(fi) + ")"}
	}
	return check(path, fi)
}

// MkdirAll creates path (mode perm, parents as needed) and checks it with
// CheckDir.
func MkdirAll(path string, perm os.FileMode) error {
	if err := os.MkdirAll(path, perm); err != nil {
		return err
	}
	return CheckDir(path)
}

// OpenFile opens path for reading without following a symlink in its last
// element and without blocking on a FIFO, then checks what it opened
// (fstat): a regular file owned by the current user and writable by nobody
// else. A missing file is an error satisfying errors.Is(err,
// fs.ErrNotExist).
func OpenFile(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, &UnsafeError{Path: path, Why: "it is a symbolic link"}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &UnsafeError{Path: path, Why: "it is not a regular file (" + kind(fi) + ")"}
	}
	if err := check(path, fi); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads a file opened with OpenFile, at most max bytes (max <= 0:
// no bound); a longer file is an error.
func ReadFile(path string, max int64) ([]byte, error) {
	f, err := OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if max > 0 {
		r = io.LimitReader(f, max+1)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if max > 0 && int64(len(b)) > max {
		return nil, fmt.Errorf("read %s: larger than %d bytes", path, max)
	}
	return b, nil
}

func kind(fi fs.FileInfo) string {
	switch t := fi.Mode().Type(); {
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeDevice != 0:
		return "a device"
	case t.IsDir():
		return "a directory"
	default:
		return fi.Mode().String()
	}
}
