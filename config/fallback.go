package config

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/mcpx-dev/mcpx/internal/owner"
)

// Fallback directories. The runtime directory without XDG_RUNTIME_DIR
// ($TMPDIR/mcpx-<uid>) and the short socket directory (/tmp/mcpx-<uid>-<h>)
// have predictable names in directories everyone may write, so another
// user can create them first (mode 0777, or a symlink) and would otherwise
// lock the user out of mcpx until root removes them. When that happened,
// mcpx makes a directory whose name nobody can guess (os.MkdirTemp: mkdir
// fails rather than reuse anything that exists) beside the taken one and
// records its path in State/fallback/<taken name>, a file in the user's own
// state directory, so every mcpx process of the user (the CLI, a daemon it
// starts) finds the same one. A recorded directory that is gone or no
// longer ours is never recreated under its known name: a new one is made.

// fallbackRecord is where the fallback for dir is recorded.
func fallbackRecord(state, dir string) string {
	return filepath.Join(state, "fallback", filepath.Base(dir))
}

// claimDir returns dir, created 0700 when missing, when it is ours. When
// another user holds dir (it belongs to them, or is their symlink), it
// returns this user's private fallback for it instead, making one if
// needed; note is the sentence to show the user when it made one. Our own
// dir with a wrong mode stays an error wrapping ErrUnsafeDir: the user can
// fix it (chmod 700), and nobody else could have set it.
func claimDir(dir, state string) (use, note string, err error) {
	err = ensurePrivateDir(dir)
	if err == nil {
		return dir, "", nil
	}
	holder, held := heldByOther(dir)
	if !held {
		return "", "", err
	}
	if alt, ok := recordedFallback(state, dir); ok {
		return alt, "", nil
	}
	alt, made, ferr := makeFallback(state, dir)
	if ferr != nil {
		return "", "", fmt.Errorf("%w; no private directory could be made instead: %w", err, ferr)
	}
	if !made {
		return alt, "", nil // another process made it meanwhile
	}
	return alt, fmt.Sprintf("%s belongs to uid %d, not to you (uid %d), so another user could reach your daemons there: mcpx uses the private directory %s instead (recorded in %s; see docs/security.md)",
		dir, holder, os.Getuid(), alt, fallbackRecord(state, dir)), nil
}

// heldByOther reports whether dir exists and belongs to another user.
func heldByOther(dir string) (uid int, held bool) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return 0, false
	}
	uid, ok := owner.UID(fi)
	return uid, ok && uid != os.Getuid()
}

// recordedFallback returns the recorded fallback for dir when the record is
// ours and names a directory that still is a private one of ours beside
// dir with dir's name as its prefix.
func recordedFallback(state, dir string) (string, bool) {
	b, err := owner.ReadFile(fallbackRecord(state, dir), 4096)
	if err != nil {
		return "", false
	}
	alt := strings.TrimSpace(string(b))
	if !filepath.IsAbs(alt) || filepath.Clean(alt) != alt || filepath.Dir(alt) != filepath.Dir(dir) ||
		!strings.HasPrefix(filepath.Base(alt), filepath.Base(dir)+"-") {
		return "", false
	}
	if checkPrivateDir(alt) != nil {
		return "", false
	}
	return alt, true
}

// makeFallback makes a private directory beside dir and records it, under
// a lock so that processes racing here agree on one. made is false when
// another process recorded a usable one first.
func makeFallback(state, dir string) (alt string, made bool, err error) {
	rec := fallbackRecord(state, dir)
	if err := owner.MkdirAll(filepath.Dir(rec), 0o700); err != nil {
		return "", false, fmt.Errorf("record fallback directory: %w", err)
	}
	lk := flock.New(rec+".lock", flock.SetPermissions(0o600))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if ok, err := lk.TryLockContext(ctx, 10*time.Millisecond); !ok {
		return "", false, fmt.Errorf("lock %s: %w", lk.Path(), errors.Join(err, ctx.Err()))
	}
	defer lk.Unlock()
	if alt, ok := recordedFallback(state, dir); ok {
		return alt, false, nil
	}
	alt, err = os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+"-*")
	if err != nil {
		return "", false, err
	}
	err = os.Chmod(alt, 0o700) // exactly 0700, whatever the umask took away
	if err == nil {
		err = checkPrivateDir(alt)
	}
	if err == nil {
		err = writeFileAtomic(rec, []byte(alt+"\n"), 0o600)
	}
	if err != nil {
		os.Remove(alt)
		return "", false, err
	}
	return alt, true, nil
}

// writeFileAtomic writes data to path through a temporary file and a
// rename, so a reader sees the old content or the new, never a part.
func writeFileAtomic(path string, data []byte, perm fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	return err
}
