package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/zalando/go-keyring"

	"github.com/mcpx-dev/mcpx/config"
)

// keyringService is the service name of mcpx's keyring items; the account
// is the serverHash.
const keyringService = "mcpx"

// KeyringStore keeps records in the OS keyring (the Secret Service on
// Linux, the Keychain on macOS) through go-keyring, one item per
// serverHash holding the record's JSON. A keyring that does not answer
// within Timeout (a locked collection waiting on a prompt nobody sees)
// fails the operation instead of hanging it. Refreshes are serialized
// across processes with the lock files of a FileStore over LockDir.
type KeyringStore struct {
	LockDir string
	Timeout time.Duration // 0: 10 s
}

// Name implements Store.
func (k *KeyringStore) Name() string { return "keyring" }

// errKeyringTimeout is a keyring that did not answer in time.
var errKeyringTimeout = errors.New("the keyring did not answer in time")

func (k *KeyringStore) do(fn func() error) error {
	t := k.Timeout
	if t <= 0 {
		t = 10 * time.Second
	}
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(t):
		return fmt.Errorf("%w (%s)", errKeyringTimeout, t)
	}
}

// Load implements Store.
func (k *KeyringStore) Load(h config.ServerHash) (*Record, error) {
	var secret string
	err := k.do(func() error {
		var err error
		secret, err = keyring.Get(keyringService, string(h))
		return err
	})
	if errors.Is(err, keyring.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("token keyring: read %s: %w", h, err)
	}
	var r Record
	if json.Unmarshal([]byte(secret), &r) != nil || r.ServerHash != h {
		return nil, fmt.Errorf("token keyring: the item of %s does not hold a token record", h)
	}
	return &r, nil
}

// Save implements Store.
func (k *KeyringStore) Save(r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("token keyring: encode record: %w", err)
	}
	if err := k.do(func() error { return keyring.Set(keyringService, string(r.ServerHash), string(b)) }); err != nil {
		return fmt.Errorf("token keyring: write %s: %w", r.ServerHash, err)
	}
	return nil
}

// Delete implements Store.
func (k *KeyringStore) Delete(h config.ServerHash) error {
	err := k.do(func() error { return keyring.Delete(keyringService, string(h)) })
	if err != nil && !errors.Is(err, keyring.ErrNotFound) {
		return fmt.Errorf("token keyring: delete %s: %w", h, err)
	}
	return nil
}

// Lock implements Locker.
func (k *KeyringStore) Lock(ctx context.Context, h config.ServerHash) (func(), error) {
	return (&FileStore{Dir: k.LockDir}).Lock(ctx, h)
}

// StoreEnv names the variable that picks the token store: "file",
// "keyring" or "auto" (the default: the keyring when one answers, else the
// file store).
const StoreEnv = "MCPX_TOKEN_STORE"

// OpenStore returns the token store for the daemon: per StoreEnv (read
// with getenv), the OS keyring or a FileStore over dir. In auto mode the
// choice is made at first use, quickly and without ever starting a bus: on
// Linux the keyring is used only when a session bus already runs and a
// Secret Service answers on it; logf says which was chosen and why.
func OpenStore(getenv func(string) string, dir string, logf func(string, ...any)) (Store, error) {
	file := &FileStore{Dir: dir}
	switch mode := getenv(StoreEnv); mode {
	case "file":
		return file, nil
	case "keyring":
		return &KeyringStore{LockDir: dir}, nil
	case "", "auto":
		return &autoStore{file: file, logf: logf}, nil
	default:
		return nil, fmt.Errorf("%s=%q: want file, keyring or auto", StoreEnv, mode)
	}
}

// autoStore is the keyring when one is reachable, else the file store,
// decided at first use.
type autoStore struct {
	file *FileStore
	logf func(string, ...any)
	once sync.Once
	s    Store
}

func (a *autoStore) store() Store {
	a.once.Do(func() {
		if err := probeKeyring(); err != nil {
			if a.logf != nil {
				a.logf("auth: tokens in files under %s (no keyring: %v)", a.file.Dir, err)
			}
			a.s = a.file
			return
		}
		if a.logf != nil {
			a.logf("auth: tokens in the keyring")
		}
		a.s = &KeyringStore{LockDir: a.file.Dir}
	})
	return a.s
}

func (a *autoStore) Name() string                              { return a.store().Name() }
func (a *autoStore) Load(h config.ServerHash) (*Record, error) { return a.store().Load(h) }
func (a *autoStore) Save(r *Record) error                      { return a.store().Save(r) }
func (a *autoStore) Delete(h config.ServerHash) error          { return a.store().Delete(h) }
func (a *autoStore) Lock(ctx context.Context, h config.ServerHash) (func(), error) {
	return a.file.Lock(ctx, h)
}

// probeKeyring reports whether a keyring answers: a lookup of an item that
// does not exist must say "not found" within a few seconds. On Linux a
// session bus must already run (DBUS_SESSION_BUS_ADDRESS, or the bus
// socket in XDG_RUNTIME_DIR): none is ever launched.
func probeKeyring() error {
	switch runtime.GOOS {
	case "darwin":
	case "linux", "freebsd", "openbsd", "netbsd", "dragonfly":
		conn, err := dbus.SessionBusPrivateNoAutoStartup()
		if err != nil {
			return fmt.Errorf("no session bus: %w", err)
		}
		conn.Close()
	default:
		return fmt.Errorf("no keyring support on %s", runtime.GOOS)
	}
	k := &KeyringStore{Timeout: 3 * time.Second}
	err := k.do(func() error {
		_, err := keyring.Get(keyringService, "probe-"+fmt.Sprint(os.Getpid()))
		return err
	})
	if err == nil || errors.Is(err, keyring.ErrNotFound) {
		return nil
	}
	return err
}
