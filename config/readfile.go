package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// MaxConfigSize bounds every config file mcpx reads (mcpx's own and every
// host's): a file larger than this is refused with ErrTooLarge.
const MaxConfigSize = 4 << 20

// maxClaudeStateSize bounds ~/.claude.json, which Claude Code also uses for
// its own state (project history) and which grows larger than a config.
const maxClaudeStateSize = 64 << 20

// ErrNotRegular is a config path that is not a regular file (a FIFO, a
// device, a directory, a socket).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is a config file over the size cap.
var ErrTooLarge = errors.New("file too large")

// ReadFile reads a config file. Every config and host file mcpx reads goes
// through it: the file is opened non-blocking (so a FIFO never hangs the
// caller), must be a regular file once opened (fstat, so a symlink to
// /dev/zero is refused), and may hold at most MaxConfigSize bytes.
func ReadFile(path string) ([]byte, error) {
	return readFileMax(path, MaxConfigSize)
}

func readFileMax(path string, limit int64) ([]byte, error) {
	b, _, err := readConfig(path, limit)
	return b, err
}

// readConfig is ReadFile returning the opened file's FileInfo too (owner
// and mode of exactly the file whose bytes were read).
func readConfig(path string, limit int64) ([]byte, fs.FileInfo, error) {
	return readConfigIf(path, limit, nil)
}

// readConfigIf is readConfig that first asks check (when not nil) about the
// opened file, and reads nothing when check says no: a file owned by
// another user is never read past that check.
func readConfigIf(path string, limit int64, check func(string, fs.FileInfo) error) ([]byte, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("read %s: %w (%s)", path, ErrNotRegular, fi.Mode().Type())
	}
	if check != nil {
		if err := check(path, fi); err != nil {
			return nil, fi, err
		}
	}
	if fi.Size() > limit {
		return nil, nil, fmt.Errorf("read %s: %w: %d bytes, the limit is %d", path, ErrTooLarge, fi.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, nil, fmt.Errorf("read %s: %w: over %d bytes", path, ErrTooLarge, limit)
	}
	return b, fi, nil
}
