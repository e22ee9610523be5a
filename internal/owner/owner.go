// Package owner decides whether a file or directory mcpx reads for a
// decision may be trusted: it must belong to the current user and be
// writable by nobody else, and a file must be a regular file reached
// without following a symlink. Another local user who could write it could
// otherwise choose the command a daemon runs (key records), what a tool's
// annotations say (schema refs, the content store), the variables a server
// gets (env files), which config files count as trusted (trust records),
// which tokens a server is sent (the token store) or which daemon the CLI
// talks to (sockets and their directories).
//
// It is the one ownership check of mcpx: every package that reads such
// state uses it, either the defaults (CheckDir for the directories on the
// way, OpenFile or ReadFile for the file itself) or a Rule of its own (who
// may own the path, which permission bits others must not have, the
// caller's kind of refusal). Every refusal is an *Error: errors.Is(err,
// ErrUnsafe) holds for all of them, errors.Is(err, kind) for the caller's
// kind, and errors.As gives the path, its owner and its mode. The message
// is one sentence naming the path and what is wrong with it.
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

// Problem is what is wrong with a refused path.
type Problem int

const (
	// WrongOwner: the path belongs to another user.
	WrongOwner Problem = iota + 1
	// OpenToOthers: group or others have a permission bit the rule denies.
	OpenToOthers
	// WrongMode: the permission bits are not exactly the ones the rule wants.
	WrongMode
	// WrongType: not a directory, not a regular file, or a symbolic link.
	WrongType
)

// Error is a path a check refused.
type Error struct {
	// What names the path's role in the message ("trust record",
	// "socket"); empty, the path alone.
	What string
	Path string
	// Problem says what is wrong; the fields below say the details.
	Problem Problem
	// Owner is the uid the path belongs to (WrongOwner), User the one
	// it must belong to.
	Owner, User int
	// Mode is the path's mode (type and permission bits).
	Mode fs.FileMode
	// Want is, for OpenToOthers, the bits others must not have, for
	// WrongMode the permission bits wanted, and for WrongType the type
	// wanted (fs.ModeDir, or 0 for a regular file).
	Want fs.FileMode
	// Kind is the caller's kind of refusal (Rule.Kind), reachable with
	// errors.Is besides ErrUnsafe; nil for none.
	Kind error
}

func (e *Error) Error() string {
	subject := e.Path
	if e.What != "" {
		subject = e.What + " " + e.Path
	}
	switch e.Problem {
	case WrongOwner:
		return fmt.Sprintf("%s is owned by uid %d, not by you (uid %d)", subject, e.Owner, e.User)
	case OpenToOthers:
		if e.Want&0o044 == 0 {
			return fmt.Sprintf("%s is writable by group or others (mode %#o; run `chmod go-w %s`)", subject, e.Mode.Perm(), e.Path)
		}
		return fmt.Sprintf("%s is open to group or others (mode %#o; run `chmod go-rwx %s`)", subject, e.Mode.Perm(), e.Path)
	case WrongMode:
		return fmt.Sprintf("%s has mode %#o, not %#o (run `chmod %o %s`)", subject, e.Mode.Perm(), e.Want, e.Want, e.Path)
	default:
		want := "a regular file"
		if e.Want == fs.ModeDir {
			want = "a directory"
		}
		return fmt.Sprintf("%s is not %s (%s)", subject, want, FileKind(e.Mode))
	}
}

// Unwrap returns ErrUnsafe and the caller's kind.
func (e *Error) Unwrap() []error {
	if e.Kind == nil {
		return []error{ErrUnsafe}
	}
	return []error{ErrUnsafe, e.Kind}
}

// Rule says what a path must be to be trusted.
type Rule struct {
	// User is the uid the path must belong to.
	User int
	// Root accepts root as the owner too (a config file an administrator
	// installed).
	Root bool
	// Deny are the permission bits group and others must not have
	// (0o022: writing; 0o077: any access).
	Deny fs.FileMode
	// Exact, when not zero, is the only permission mode accepted (and
	// Deny is not looked at).
	Exact fs.FileMode
	// What and Kind are copied into every Error (see there).
	What string
	Kind error
}

// Mine is the rule for mcpx's own state: owned by the current user and
// writable by nobody else.
func Mine() Rule { return Rule{User: os.Getuid(), Deny: 0o022} }

// UID is the uid that owns fi, where the platform says (false elsewhere).
func UID(fi fs.FileInfo) (int, bool) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid), true
	}
	return 0, false
}

func (r Rule) refuse(path string, fi fs.FileInfo, p Problem) *Error {
	return &Error{What: r.What, Path: path, Problem: p, User: r.User, Mode: fi.Mode(), Kind: r.Kind}
}

// Check applies r's owner and mode rules to fi, the FileInfo of path
// (from Lstat, or from fstat of the opened file). The type of the path is
// not looked at.
func (r Rule) Check(path string, fi fs.FileInfo) error {
	if uid, ok := UID(fi); ok && uid != r.User && !(r.Root && uid == 0) {
		e := r.refuse(path, fi, WrongOwner)
		e.Owner = uid
		return e
	}
	perm := fi.Mode().Perm()
	switch {
	case r.Exact != 0 && perm != r.Exact:
		e := r.refuse(path, fi, WrongMode)
		e.Want = r.Exact
		return e
	case r.Exact == 0 && perm&r.Deny != 0:
		e := r.refuse(path, fi, OpenToOthers)
		e.Want = r.Deny
		return e
	}
	return nil
}

// CheckDir checks that path is a directory (not a symlink to one) that r
// accepts. A missing directory is an error satisfying errors.Is(err,
// fs.ErrNotExist).
func (r Rule) CheckDir(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		e := r.refuse(path, fi, WrongType)
		e.Want = fs.ModeDir
		return e
	}
	return r.Check(path, fi)
}

// Open opens path for reading without following a symlink in its last
// element and without blocking on a FIFO, then checks what it opened
// (fstat): a regular file that r accepts. A missing file is an error
// satisfying errors.Is(err, fs.ErrNotExist).
func (r Rule) Open(path string) (*os.File, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, &Error{What: r.What, Path: path, Problem: WrongType, User: r.User, Mode: fs.ModeSymlink, Kind: r.Kind}
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = r.refuse(path, fi, WrongType)
	}
	if err == nil {
		err = r.Check(path, fi)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// CheckDir is Mine().CheckDir.
func CheckDir(path string) error { return Mine().CheckDir(path) }

// CheckFile is CheckDir for a regular file.
func CheckFile(path string) error {
	r := Mine()
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return r.refuse(path, fi, WrongType)
	}
	return r.Check(path, fi)
}

// MkdirAll creates path (mode perm, parents as needed) and checks it with
// CheckDir.
func MkdirAll(path string, perm os.FileMode) error {
	if err := os.MkdirAll(path, perm); err != nil {
		return err
	}
	return CheckDir(path)
}

// OpenFile is Mine().Open.
func OpenFile(path string) (*os.File, error) { return Mine().Open(path) }

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

// FileKind says what a path of mode m is, for messages ("a FIFO (named
// pipe)", "a directory", ...).
func FileKind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a block device"
	case t.IsDir():
		return "a directory"
	case t == 0:
		return "a regular file"
	default:
		return m.String()
	}
}
