// Package resolve answers which daemon serves a directory, and which daemon
// keys this machine knows, from the configs and the runtime files alone
// (config.InfoFile, config.KeyRecord): it never dials a socket and never
// activates anything. Both binaries use it: the daemon for GET /v1/resolve,
// the CLI for `mcpx resolve`, `mcpx daemons` and `mcpx stop --all`.
package resolve

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// DirError is a directory /v1/resolve or `mcpx resolve` cannot answer for.
// Code is api.CodeDirectoryNotAbsolute or api.CodeDirectoryNotFound (both HTTP 400).
type DirError struct {
	Dir  string
	Code string
	Err  error
}

func (e *DirError) Error() string {
	switch e.Code {
	case api.CodeDirectoryNotAbsolute:
		return fmt.Sprintf("resolve %q: not an absolute path", e.Dir)
	default:
		if e.Err != nil {
			return fmt.Sprintf("resolve %s: %v", e.Dir, e.Err)
		}
		return fmt.Sprintf("resolve %s: not a directory", e.Dir)
	}
}

// Unwrap returns the underlying error (fs.ErrNotExist for a missing
// directory), if any.
func (e *DirError) Unwrap() error { return e.Err }

// errNotDir is the kind of a path that exists but is not a directory.
var errNotDir = errors.New("not a directory")

// Options tune DirWith.
type Options struct {
	// Self is the mcpxd binary the built-in config runs ("demo" is
	// `<mcpxd> demo-server`), so it enters the built-in schemaHash. Empty:
	// os.Executable resolved through symlinks, as client and daemon do.
	Self string
	// Manager is reported for a key with no info file: the manager that
	// would serve it (the daemon passes its own, the CLI what Detect
	// chose). Empty leaves Resolve.Manager empty for such keys.
	Manager string
}

// Dir answers GET /v1/resolve and `mcpx resolve` for dir. It is
// DirWith with default options.
func Dir(dir string, paths config.Paths, getenv config.Getenv) (*api.Resolve, error) {
	return DirWith(dir, paths, getenv, Options{})
}

// DirWith finds which daemon serves dir and what is known about it,
// without dialing any socket and without activating anything:
//
//   - Dir: dir resolved through symlinks (dir must be absolute).
//   - Configs and DaemonKey: config.Discover(dir, getenv) and its key.
//     Callers answering for a directory other than their own pass a getenv
//     without MCPX_CONFIG (and MCPX_SOCKET), so their overrides never leak
//     into the answer.
//   - State: api.DaemonRunning / api.DaemonStale from the key's info file and
//     kill(pid, 0); api.DaemonStopped without an info file.
//   - Socket, Manager, SchemaHash: from the info file of a running daemon;
//     otherwise paths.Socket(key), opts.Manager, and the schemaHash of the
//     config as it loads now.
//
// Errors: a relative dir is a *DirError with api.CodeDirectoryNotAbsolute; a
// missing dir or a non-directory is a *DirError with api.CodeDirectoryNotFound;
// a config that does not parse is the *config.ParseError (errors.As), never
// a silent "no config". A config that parses but whose schemaHash cannot be
// computed for another reason is not an error: SchemaHash is left empty.
func DirWith(dir string, paths config.Paths, getenv config.Getenv, opts Options) (*api.Resolve, error) {
	if !filepath.IsAbs(dir) {
		return nil, &DirError{Dir: dir, Code: api.CodeDirectoryNotAbsolute}
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(dir))
	if err != nil {
		return nil, &DirError{Dir: dir, Code: api.CodeDirectoryNotFound, Err: err}
	}
	if fi, err := os.Stat(real); err != nil {
		return nil, &DirError{Dir: dir, Code: api.CodeDirectoryNotFound, Err: err}
	} else if !fi.IsDir() {
		return nil, &DirError{Dir: dir, Code: api.CodeDirectoryNotFound, Err: errNotDir}
	}
	sources, err := config.Discover(real, getenv)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", dir, err)
	}
	key := config.KeyOf(sources)
	r := &api.Resolve{
		Dir:       real,
		DaemonKey: string(key),
		Configs:   nonNil(sources),
		Socket:    paths.Socket(key),
		Manager:   opts.Manager,
		State:     api.DaemonStopped,
	}
	info, present := readInfoIfAny(paths.Info(key))
	if present {
		r.State = api.DaemonStale
		if info.Running() {
			r.State = api.DaemonRunning
			if info.Socket != "" {
				r.Socket = info.Socket
			}
			if info.Manager != "" {
				r.Manager = info.Manager
			}
			r.SchemaHash = info.SchemaHash
		}
	}
	// Load even when the info file gave a schemaHash: a config that no
	// longer parses must be reported, not hidden behind a running daemon.
	self := opts.Self
	if self == "" {
		self, _ = os.Executable()
		if real, err := filepath.EvalSymlinks(self); err == nil {
			self = real
		}
	}
	cfg, err := config.Load(sources, self)
	if err != nil {
		var pe *config.ParseError
		if errors.As(err, &pe) {
			return nil, err
		}
		// A source that vanished between Discover and Load, or became
		// unreadable: the key is still right; the hash is unknown.
		return r, nil
	}
	if r.SchemaHash == "" {
		r.SchemaHash = string(cfg.SchemaHash())
	}
	return r, nil
}

// KeyInfo is one daemon key known on this machine, from its key record
// and/or its info file (`mcpx daemons`). Gathering it never connects to a
// socket.
type KeyInfo struct {
	DaemonKey string   `json:"daemonKey"`
	Configs   []string `json:"configs"`
	Socket    string   `json:"socket"`
	Pid       int      `json:"pid,omitempty"`
	// State is api.DaemonRunning, api.DaemonStale or api.DaemonStopped.
	State   string `json:"state"`
	Manager string `json:"manager,omitempty"`
	// SchemaHash is the running (or crashed) daemon's, from its info file.
	SchemaHash string `json:"schemaHash,omitempty"`
	// ConfigsExist is false when any of Configs is gone: nothing resolves
	// to this key any more.
	ConfigsExist bool `json:"configsExist"`
	// InfoFile and KeyRecord are the files the entry was read from; empty
	// when absent.
	InfoFile  string `json:"infoFile,omitempty"`
	KeyRecord string `json:"keyRecord,omitempty"`
}

// ListKeys gathers every key with a key record (paths.KeysDir) or an info
// file (paths.Runtime), sorted by key. Unreadable or malformed files are
// skipped rather than failing the whole list: one broken record must not
// hide the others. It never connects to a socket.
func ListKeys(paths config.Paths) ([]KeyInfo, error) {
	keys, err := knownKeys(paths)
	if err != nil {
		return nil, err
	}
	out := make([]KeyInfo, 0, len(keys))
	for _, k := range keys {
		out = append(out, keyInfo(paths, k))
	}
	return out, nil
}

// knownKeys lists the keys named by files in the keys and runtime
// directories, sorted, deduplicated.
func knownKeys(paths config.Paths) ([]config.DaemonKey, error) {
	seen := map[config.DaemonKey]bool{}
	var keys []config.DaemonKey
	for _, dir := range []string{paths.KeysDir(), paths.Runtime} {
		ents, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list daemon keys: %w", err)
		}
		for _, e := range ents {
			name := e.Name()
			if e.IsDir() || filepath.Ext(name) != ".json" {
				continue
			}
			k := config.DaemonKey(name[:len(name)-len(".json")])
			if ValidKey(k) && !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// ValidKey reports whether k has the shape of a daemon key: BuiltinKey or
// 12 lowercase hex digits. Anything else in the key or runtime directory
// is not ours.
func ValidKey(k config.DaemonKey) bool {
	if k == config.BuiltinKey {
		return true
	}
	if len(k) != 12 {
		return false
	}
	for _, c := range []byte(k) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func keyInfo(paths config.Paths, k config.DaemonKey) KeyInfo {
	ki := KeyInfo{DaemonKey: string(k), Socket: paths.Socket(k), State: api.DaemonStopped, ConfigsExist: true}
	if rec, err := config.ReadKeyRecord(paths.KeyRecord(k)); err == nil {
		ki.KeyRecord = paths.KeyRecord(k)
		ki.Configs = rec.Configs
	}
	if info, present := readInfoIfAny(paths.Info(k)); present {
		ki.InfoFile = paths.Info(k)
		ki.State = api.DaemonStale
		if info != nil {
			ki.Pid = info.Pid
			ki.Manager = info.Manager
			ki.SchemaHash = info.SchemaHash
			if info.Socket != "" {
				ki.Socket = info.Socket
			}
			if ki.Configs == nil {
				ki.Configs = info.Configs
			}
			if info.Running() {
				ki.State = api.DaemonRunning
			}
		}
	}
	ki.Configs = nonNil(ki.Configs)
	for _, c := range ki.Configs {
		if _, err := os.Stat(c); err != nil {
			ki.ConfigsExist = false
			break
		}
	}
	return ki
}

// Prune removes what dead or orphaned keys left behind and returns the
// paths it removed:
//
//   - the info file of a daemon whose process is gone;
//   - the key record and the captured environment (<key>.env) of a key
//     whose configs no longer exist and whose daemon is not running.
//
// A running daemon's files are never touched, even when its configs are
// gone (stop it first). Sockets are left alone: under systemd or launchd
// the manager owns them. A file already gone is not an error.
func Prune(paths config.Paths) ([]string, error) {
	keys, err := ListKeys(paths)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	remove := func(p string) {
		err := os.Remove(p)
		switch {
		case err == nil:
			removed = append(removed, p)
		case !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, fmt.Errorf("prune: %w", err))
		}
	}
	for _, ki := range keys {
		if ki.State == api.DaemonRunning {
			continue
		}
		k := config.DaemonKey(ki.DaemonKey)
		if ki.State == api.DaemonStale {
			remove(paths.Info(k))
		}
		if !ki.ConfigsExist {
			if ki.KeyRecord != "" {
				remove(ki.KeyRecord)
			}
			remove(paths.EnvFile(k))
			remove(paths.RuntimeKeyRecord(k))
		}
	}
	return removed, errors.Join(errs...)
}

// readInfoIfAny reads an info file. present is false when the file does
// not exist; a file that exists but cannot be read or decoded is present
// with a nil info, which callers treat as stale: the atomic writer never
// leaves a partial file, so such a file is not a live daemon's.
func readInfoIfAny(path string) (info *config.InfoFile, present bool) {
	info, err := config.ReadInfo(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		return nil, true
	}
	return info, true
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
