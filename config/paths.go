package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/owner"
)

// Paths knows every location mcpx uses (DESIGN §4). One method per path;
// nothing else in mcpx builds these names.
type Paths struct {
	// Runtime holds the sockets, info, env and lock files: $XDG_RUNTIME_DIR/mcpx,
	// else mcpx-<uid> in the per-user temporary directory (see ResolvePaths).
	Runtime string
	State   string // $XDG_STATE_HOME/mcpx
	Cache   string // $XDG_CACHE_HOME/mcpx
	Config  string // $XDG_CONFIG_HOME/mcpx
	// Sockets, when set, is the directory of the sockets instead of
	// Runtime: a short directory, for a Runtime too long for a unix
	// socket address. ResolvePaths sets it; a Paths built by hand leaves it
	// empty and Socket computes the short directory itself.
	Sockets string
}

// ErrUnsafeDir is a runtime directory that is not a directory owned by the
// current user with mode 0700 (another user could reach the sockets).
var ErrUnsafeDir = errors.New("unsafe directory")

// maxSocketPath is the longest socket path mcpx binds; sun_path holds 108
// bytes on Linux and 104 on macOS, and 100 leaves room for both.
const maxSocketPath = 100

// longestKey is as long as a daemon key gets (12 hex digits), for the
// length checks of socket paths.
const longestKey = DaemonKey("0123456789ab")

// DefaultPaths is ResolvePaths without its note.
func DefaultPaths(getenv Getenv) (Paths, error) {
	p, _, err := ResolvePaths(getenv)
	return p, err
}

// ResolvePaths computes the paths from the environment. XDG variables that
// are unset, empty or relative are ignored (as the XDG spec says) in favour
// of the defaults under HOME ($HOME, else the OS's idea of home).
//
// The runtime directory is $XDG_RUNTIME_DIR/mcpx. Without XDG_RUNTIME_DIR
// it is mcpx-<uid> in the per-user temporary directory: on macOS the one
// confstr(_CS_DARWIN_USER_TEMP_DIR) names (what launchd gives agents as
// TMPDIR, so a shell over ssh without TMPDIR finds the same sockets as the
// agents), elsewhere $TMPDIR (default /tmp). That directory is created 0700
// and checked to be ours; a directory of that name that another user
// created first (a squatter) is not an error: a private directory with an
// unpredictable name is made beside it, recorded under State so every
// process of this user finds the same one, and note says so, once: when
// that directory is made. The short directory of sockets whose path would
// be too long (Sockets) is claimed the same way. Nothing else is created.
func ResolvePaths(getenv Getenv) (p Paths, note string, err error) {
	return resolvePaths(getenv, runtime.GOOS, userTempDir)
}

// resolvePaths is ResolvePaths for the system goos whose per-user
// temporary directory userTemp answers (tests pass darwin's).
func resolvePaths(getenv Getenv, goos string, userTemp func() (string, error)) (p Paths, note string, err error) {
	xdg := func(name string) string {
		if v := getenv(name); filepath.IsAbs(v) {
			return filepath.Clean(v)
		}
		return ""
	}
	home := getenv("HOME")
	if !filepath.IsAbs(home) {
		h, err := os.UserHomeDir()
		if err != nil {
			return Paths{}, "", fmt.Errorf("find home directory: %w", err)
		}
		home = h
	}
	pick := func(name string, def ...string) string {
		if v := xdg(name); v != "" {
			return filepath.Join(v, "mcpx")
		}
		return filepath.Join(append([]string{home}, append(def, "mcpx")...)...)
	}
	p = Paths{
		State:  pick("XDG_STATE_HOME", ".local", "state"),
		Cache:  pick("XDG_CACHE_HOME", ".cache"),
		Config: pick("XDG_CONFIG_HOME", ".config"),
	}
	var notes []string
	if rt := xdg("XDG_RUNTIME_DIR"); rt != "" {
		p.Runtime = filepath.Join(rt, "mcpx")
	} else {
		dir := filepath.Join(tempBase(goos, getenv, userTemp), "mcpx-"+strconv.Itoa(os.Getuid()))
		if p.Runtime, note, err = claimDir(dir, p.State); err != nil {
			return Paths{}, "", err
		}
		notes = appendNote(notes, note)
	}
	if len(filepath.Join(p.Runtime, string(longestKey)+".sock")) > maxSocketPath {
		if p.Sockets, note, err = claimDir(p.shortSocketDir(), p.State); err != nil {
			return Paths{}, "", err
		}
		notes = appendNote(notes, note)
	}
	return p, strings.Join(notes, "; "), nil
}

func appendNote(notes []string, note string) []string {
	if note != "" {
		notes = append(notes, note)
	}
	return notes
}

// tempBase is the per-user temporary directory the runtime directory
// lives in when XDG_RUNTIME_DIR is not set: on darwin what userTemp
// answers (confstr(_CS_DARWIN_USER_TEMP_DIR), which no variable changes),
// else, and where userTemp fails, $TMPDIR when absolute, else /tmp.
func tempBase(goos string, getenv Getenv, userTemp func() (string, error)) string {
	if goos == "darwin" {
		if dir, err := userTemp(); err == nil && filepath.IsAbs(dir) {
			return filepath.Clean(dir)
		}
	}
	if tmp := getenv("TMPDIR"); filepath.IsAbs(tmp) {
		return filepath.Clean(tmp)
	}
	return "/tmp"
}

// EnsureRuntime creates the runtime directory (0700) if needed and checks
// that it is a directory owned by this user with mode 0700, and does the
// same for the directory of the sockets when it is another one (see
// Socket). Safe to call repeatedly and from several processes.
func (p Paths) EnsureRuntime() error {
	if err := ensurePrivateDir(p.Runtime); err != nil {
		return err
	}
	if dir := filepath.Dir(p.Socket(longestKey)); dir != p.Runtime {
		return ensurePrivateDir(dir)
	}
	return nil
}

// EnsureSocketDir ensures the directory that holds Socket(k), with the same
// checks as EnsureRuntime.
func (p Paths) EnsureSocketDir(k DaemonKey) error {
	return ensurePrivateDir(filepath.Dir(p.Socket(k)))
}

// ensurePrivateDir creates dir 0700 (parents as needed) and checks it: a
// real directory (not a symlink), owned by us, mode exactly 0700.
func ensurePrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create runtime directory %s: %w", dir, err)
	}
	return checkPrivateDir(dir)
}

// checkPrivateDir checks that dir is a real directory (not a symlink),
// owned by us, of mode exactly 0700.
func checkPrivateDir(dir string) error {
	err := owner.Rule{User: os.Getuid(), Exact: 0o700, What: "runtime directory", Kind: ErrUnsafeDir}.CheckDir(dir)
	var refused *owner.Error
	if err != nil && !errors.As(err, &refused) {
		return fmt.Errorf("check runtime directory %s: %w", dir, err)
	}
	return err
}

// Socket is Runtime/<k>.sock, or Sockets/<k>.sock when Sockets is set.
// A Paths without Sockets whose Runtime/<k>.sock is longer than 100 bytes
// (too long for a unix socket address on every platform) uses
// /tmp/mcpx-<uid>-<h>/<k>.sock, h being the first 8 hex digits of SHA-256
// of Runtime, so each runtime directory keeps its own short directory.
func (p Paths) Socket(k DaemonKey) string {
	if p.Sockets != "" {
		return filepath.Join(p.Sockets, string(k)+".sock")
	}
	s := filepath.Join(p.Runtime, string(k)+".sock")
	if len(s) <= maxSocketPath {
		return s
	}
	return filepath.Join(p.shortSocketDir(), string(k)+".sock")
}

func (p Paths) shortSocketDir() string {
	sum := sha256.Sum256([]byte(p.Runtime))
	return filepath.Join("/tmp", "mcpx-"+strconv.Itoa(os.Getuid())+"-"+hex.EncodeToString(sum[:])[:8])
}

// Info is the daemon's info file, Runtime/<k>.json.
func (p Paths) Info(k DaemonKey) string { return filepath.Join(p.Runtime, string(k)+".json") }

// EnvFile is the captured caller environment, Runtime/<k>.env.
func (p Paths) EnvFile(k DaemonKey) string { return filepath.Join(p.Runtime, string(k)+".env") }

// Lock is the direct manager's start lock, Runtime/<k>.lock.
func (p Paths) Lock(k DaemonKey) string { return filepath.Join(p.Runtime, string(k)+".lock") }

// Alive is the file a daemon holds a flock on for its whole life,
// Runtime/<k>.alive: while it is locked a daemon for k is running, whether
// or not its socket file still exists.
func (p Paths) Alive(k DaemonKey) string { return filepath.Join(p.Runtime, string(k)+".alive") }

// RuntimeKeyRecord is the copy of the key record the client writes beside
// the socket, Runtime/<k>.key (JSON): a daemon started by systemd or
// launchd does not see the shell's XDG_STATE_HOME or XDG_CACHE_HOME, but
// it does see the runtime directory (%t), and this record names the state
// and cache directories the client used.
func (p Paths) RuntimeKeyRecord(k DaemonKey) string {
	return filepath.Join(p.Runtime, string(k)+".key")
}

// Children records the process groups of a daemon's stdio servers,
// Runtime/<k>.children, so the next daemon for k reaps what a crashed one
// left.
func (p Paths) Children(k DaemonKey) string { return filepath.Join(p.Runtime, string(k)+".children") }

// ServeRecords holds one record per running `mcpx serve --http`,
// Runtime/serve/<pid>.json (ServeRecord): where it listens, so that a
// config entry pointing at it is known to be mcpx itself.
func (p Paths) ServeRecords() string { return filepath.Join(p.Runtime, "serve") }

// KeysDir holds the key records, State/keys.
func (p Paths) KeysDir() string { return filepath.Join(p.State, "keys") }

// KeyRecord is State/keys/<k>.json.
func (p Paths) KeyRecord(k DaemonKey) string { return filepath.Join(p.KeysDir(), string(k)+".json") }

// Log is the daemon's log file when not under systemd, State/<k>.log.
func (p Paths) Log(k DaemonKey) string { return filepath.Join(p.State, string(k)+".log") }

// CAS is the content-addressed store, Cache/cas.
func (p Paths) CAS() string { return filepath.Join(p.Cache, "cas") }

// Schemas holds the schema refs, Cache/schemas.
func (p Paths) Schemas() string { return filepath.Join(p.Cache, "schemas") }

// ConfigFile is the user-wide config, Config/config.json (the last entry of
// the search order).
func (p Paths) ConfigFile() string { return filepath.Join(p.Config, "config.json") }

// AuthDir holds the OAuth token files when no keyring is used, State/auth
// (0700; one 0600 file per serverHash).
func (p Paths) AuthDir() string { return filepath.Join(p.State, "auth") }

// Snapshots holds the configuration snapshots (Snapshots), Runtime/snapshots.
func (p Paths) Snapshots() string { return filepath.Join(p.Runtime, "snapshots") }

// ServeKey is the key every request to `mcpx serve --http` carries,
// State/serve.key (0600; made on first use).
func (p Paths) ServeKey() string { return filepath.Join(p.State, "serve.key") }
