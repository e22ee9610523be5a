package config

// The info file and the key record: the files through which the CLI and
// the daemon learn about each other without a socket (DESIGN.md §4). Their
// paths are Paths.Info, Paths.KeyRecord and Paths.RuntimeKeyRecord; their
// schemas are docs/schemas/info-file.schema.json and key-record.schema.json.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mcpx-dev/mcpx/internal/owner"
	"github.com/mcpx-dev/mcpx/internal/proc"
)

// InfoFile is <runtime>/mcpx/<daemonKey>.json, written by a running daemon
// and removed on clean exit.
type InfoFile struct {
	DaemonKey  string `json:"daemonKey"`
	SchemaHash string `json:"schemaHash"`
	Socket     string `json:"socket"`
	Pid        int    `json:"pid"`
	// PidStart is the daemon's start time in clock ticks after boot (Linux
	// /proc/<pid>/stat), so a reader can tell it from a later process that
	// reused the pid (see Running).
	PidStart  uint64    `json:"pidStart,omitempty"`
	Manager   string    `json:"manager"`
	Configs   []string  `json:"configs"`
	Version   string    `json:"version"`
	StartedAt time.Time `json:"startedAt"`
	// Binary is the daemon executable's identity (version.BinaryID).
	Binary string `json:"binary,omitempty"`
}

// KeyRecord is $XDG_STATE_HOME/mcpx/keys/<daemonKey>.json, written by the
// client before activation; the daemon reads its configs from it.
type KeyRecord struct {
	DaemonKey string    `json:"daemonKey"`
	Configs   []string  `json:"configs"`
	CreatedAt time.Time `json:"createdAt"`
	// StateDir and CacheDir are the client's config.Paths State and Cache
	// (mcpx's own directories under XDG_STATE_HOME and XDG_CACHE_HOME), set
	// in the copy written to the runtime directory
	// (config.Paths.RuntimeKeyRecord) so a daemon whose environment lacks
	// the shell's XDG variables uses the same directories.
	StateDir string `json:"stateDir,omitempty"`
	CacheDir string `json:"cacheDir,omitempty"`
	// TokenStore is the client's EnvTokenStore, in the runtime copy when
	// set: the daemon uses it instead of its own environment's, which
	// under launchd or systemd is not the shell's.
	TokenStore string `json:"tokenStore,omitempty"`
}

// EnvTokenStore picks where the daemon keeps OAuth tokens: "auto" (the
// default), "keyring" or "file".
const EnvTokenStore = "MCPX_TOKEN_STORE"

// TokenStores are the values EnvTokenStore accepts ("" is auto).
var TokenStores = []string{"", "auto", "keyring", "file"}

// WriteJSONAtomic writes v as indented JSON to path with the given mode:
// temp file in the same directory, fsync, rename. Readers see either the old
// file or the new one, never a partial write; a crash may leave a
// ".tmp-*" file behind, which nothing reads.
func WriteJSONAtomic(path string, v any, mode uint32) error {
	return writeJSON(path, v, mode, true)
}

// WriteRuntimeJSON is WriteJSONAtomic without the fsync, for a file that
// describes a live process (the daemon's info file): readers still see the
// old or the new file, and after a crash of the machine the process it
// describes is gone anyway, so the file is stale whatever it holds (readers
// treat an undecodable one as stale). The fsync cost every daemon start
// 0.2 to 2 ms here (10 ms once, under strace) where the runtime directory
// is on disk, as it is for the direct manager without XDG_RUNTIME_DIR.
func WriteRuntimeJSON(path string, v any, mode uint32) error {
	return writeJSON(path, v, mode, false)
}

func writeJSON(path string, v any, mode uint32, durable bool) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: encode: %w", path, err)
	}
	data = append(data, '\n')
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(os.FileMode(mode)); err != nil {
		return fail(err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if durable {
		if err := f.Sync(); err != nil {
			return fail(err)
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadInfo reads an info file. A missing file is an error satisfying
// errors.Is(err, fs.ErrNotExist).
func ReadInfo(path string) (*InfoFile, error) {
	var info InfoFile
	if err := readJSON(path, &info); err != nil {
		return nil, fmt.Errorf("read info file: %w", err)
	}
	return &info, nil
}

// ReadKeyRecord reads a key record. A missing file is an error satisfying
// errors.Is(err, fs.ErrNotExist). The record decides which configs (so
// which commands) a daemon runs: its directory and the file itself must be
// the user's and writable by nobody else (package owner), else the error
// wraps owner.ErrUnsafe. (Callers check the state directory above
// State/keys themselves.)
func ReadKeyRecord(path string) (*KeyRecord, error) {
	if err := owner.CheckDir(filepath.Dir(path)); err != nil {
		return nil, fmt.Errorf("read key record: %w", err)
	}
	var rec KeyRecord
	if err := readJSON(path, &rec); err != nil {
		return nil, fmt.Errorf("read key record: %w", err)
	}
	return &rec, nil
}

// maxRecord bounds an info file or key record.
const maxRecord = 1 << 20

// readJSON reads a file mcpx itself wrote: owned by the user, writable by
// nobody else, a regular file not reached through a symlink (package
// owner).
func readJSON(path string, v any) error {
	data, err := owner.ReadFile(path, maxRecord)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Running reports whether the info file's pid is still the daemon that
// wrote it: the same start time where it was recorded and can be read,
// else a command line holding "--key <daemonKey>". A pid that was reused
// by an unrelated process is not running.
func (i *InfoFile) Running() bool {
	return i != nil && proc.Is(i.Pid, i.PidStart, "--key", i.DaemonKey)
}

// Signal sends sig to the daemon only if Running holds (through a pidfd
// where the kernel has them); otherwise it returns syscall.ESRCH.
func (i *InfoFile) Signal(sig syscall.Signal) error {
	return proc.Signal(i.Pid, i.PidStart, sig, "--key", i.DaemonKey)
}
