package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/godbus/dbus/v5"
	"github.com/zalando/go-keyring"

	"github.com/mcpx-dev/mcpx/config"
)

// keyringService is the service name of mcpx's keyring items; the account
// is the serverHash (and, for a split record, serverHash.part<i>).
const keyringService = "mcpx"

// maxItem bounds the secret mcpx puts in one keyring item. go-keyring
// writes a Keychain item by sending `add-generic-password … -w
// go-keyring-base64:<secret in base64>` to `security -i` and refuses a
// line over 4,096 bytes, so a record of a 2,000-byte access token and a
// 1,000-byte refresh token does not fit in one item. 2,048 bytes are 2,732
// in base64, which leaves room for the rest of the line (long service and
// account names included). A record longer than this is split (splitRecord).
const maxItem = 2048

// splitPrefix starts the main item of a record split over several items:
// "mcpx-split:v1:<parts>:<sha256 of the whole record, hex>".
const splitPrefix = "mcpx-split:v1:"

// maxParts bounds the parts of one record (a 64 KiB record), so a corrupt
// header cannot make Load read without end.
const maxParts = 32

// secrets is the keyring API KeyringStore uses: go-keyring's, or a test's.
// Get of a missing item returns keyring.ErrNotFound.
type secrets interface {
	Get(service, account string) (string, error)
	Set(service, account, secret string) error
	Delete(service, account string) error
}

// goKeyring is the OS keyring through go-keyring.
type goKeyring struct{}

func (goKeyring) Get(service, account string) (string, error) {
	return keyring.Get(service, account)
}

func (goKeyring) Set(service, account, secret string) error {
	return keyring.Set(service, account, secret)
}

func (goKeyring) Delete(service, account string) error {
	return keyring.Delete(service, account)
}

// KeyringStore keeps records in the OS keyring (the Secret Service on
// Linux, the Keychain on macOS) through go-keyring, one item per
// serverHash holding the record's JSON; a record longer than maxItem bytes
// is split over several items, so no token is too large for the Keychain's
// command line. A keyring that does not answer within Timeout (a locked
// collection waiting on a prompt nobody sees) fails the operation instead
// of hanging it. Refreshes are serialized across processes with the lock
// files of a FileStore over LockDir.
type KeyringStore struct {
	LockDir string
	Timeout time.Duration // 0: 10 s
	// Secrets is the keyring (nil: the OS keyring through go-keyring).
	Secrets secrets
}

// Name implements Store.
func (k *KeyringStore) Name() string { return "keyring" }

// errKeyringTimeout is a keyring that did not answer in time.
var errKeyringTimeout = errors.New("the keyring did not answer in time")

func (k *KeyringStore) do(fn func(secrets) error) error {
	t := k.Timeout
	if t <= 0 {
		t = 10 * time.Second
	}
	var s secrets = goKeyring{}
	if k.Secrets != nil {
		s = k.Secrets
	}
	done := make(chan error, 1)
	go func() { done <- fn(s) }()
	select {
	case err := <-done:
		return err
	case <-time.After(t):
		return fmt.Errorf("%w (%s)", errKeyringTimeout, t)
	}
}

func partAccount(h config.ServerHash, i int) string { return fmt.Sprintf("%s.part%d", h, i) }

// splitRecord cuts data into parts of at most maxItem bytes, never inside
// a UTF-8 sequence (a keyring may store text).
func splitRecord(data []byte) [][]byte {
	var parts [][]byte
	for len(data) > maxItem {
		n := maxItem
		for n > maxItem-utf8.UTFMax && !utf8.RuneStart(data[n]) {
			n--
		}
		parts = append(parts, data[:n])
		data = data[n:]
	}
	return append(parts, data)
}

// splitHeader parses a main item: the number of parts and their digest,
// ok false when the item holds a whole record.
func splitHeader(item string) (parts int, digest string, ok bool, err error) {
	rest, ok := strings.CutPrefix(item, splitPrefix)
	if !ok {
		return 0, "", false, nil
	}
	n, digest, _ := strings.Cut(rest, ":")
	parts, err = strconv.Atoi(n)
	if err != nil || parts < 1 || parts > maxParts || len(digest) != sha256.Size*2 {
		return 0, "", true, errors.New("malformed split header")
	}
	return parts, digest, true, nil
}

// Load implements Store.
func (k *KeyringStore) Load(h config.ServerHash) (*Record, error) {
	var data []byte
	missing := false
	err := k.do(func(s secrets) error {
		item, err := s.Get(keyringService, string(h))
		if errors.Is(err, keyring.ErrNotFound) {
			missing = true
			return nil
		}
		if err != nil {
			return err
		}
		n, digest, split, err := splitHeader(item)
		if err != nil || !split {
			data = []byte(item)
			return err
		}
		var b strings.Builder
		for i := 1; i <= n; i++ {
			part, err := s.Get(keyringService, partAccount(h, i))
			if errors.Is(err, keyring.ErrNotFound) {
				return fmt.Errorf("part %d of %d is missing", i, n)
			}
			if err != nil {
				return fmt.Errorf("part %d of %d: %w", i, n, err)
			}
			b.WriteString(part)
		}
		sum := sha256.Sum256([]byte(b.String()))
		if hex.EncodeToString(sum[:]) != digest {
			return errors.New("its parts do not add up (written meanwhile?)")
		}
		data = []byte(b.String())
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("token keyring: read %s: %w", h, err)
	}
	if missing {
		return nil, nil
	}
	var r Record
	if json.Unmarshal(data, &r) != nil || r.ServerHash != h {
		return nil, fmt.Errorf("token keyring: the item of %s does not hold a token record", h)
	}
	return &r, nil
}

// Save implements Store. A split record's parts are written before the
// item that names them, and parts left over from a longer record are
// removed after it, so a reader sees the old record or the new one (or a
// digest mismatch, never a mix taken for a record).
func (k *KeyringStore) Save(r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("token keyring: encode record: %w", err)
	}
	parts := splitRecord(b)
	if len(parts) > maxParts {
		return fmt.Errorf("token keyring: write %s: the record is %d bytes, more than %d", r.ServerHash, len(b), maxParts*maxItem)
	}
	err = k.do(func(s secrets) error {
		old := 0
		if item, err := s.Get(keyringService, string(r.ServerHash)); err == nil {
			old, _, _, _ = splitHeader(item)
		}
		main := string(b)
		if len(parts) > 1 {
			for i, p := range parts {
				if err := s.Set(keyringService, partAccount(r.ServerHash, i+1), string(p)); err != nil {
					return fmt.Errorf("part %d of %d: %w", i+1, len(parts), err)
				}
			}
			sum := sha256.Sum256(b)
			main = fmt.Sprintf("%s%d:%s", splitPrefix, len(parts), hex.EncodeToString(sum[:]))
		}
		if err := s.Set(keyringService, string(r.ServerHash), main); err != nil {
			return err
		}
		kept := len(parts) // a whole record keeps no part
		if kept == 1 {
			kept = 0
		}
		for i := kept + 1; i <= old; i++ {
			_ = s.Delete(keyringService, partAccount(r.ServerHash, i)) // best effort: nothing names it now
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("token keyring: write %s: %w", r.ServerHash, err)
	}
	return nil
}

// Delete implements Store.
func (k *KeyringStore) Delete(h config.ServerHash) error {
	err := k.do(func(s secrets) error {
		if item, err := s.Get(keyringService, string(h)); err == nil {
			if n, _, split, _ := splitHeader(item); split {
				for i := 1; i <= n; i++ {
					if err := s.Delete(keyringService, partAccount(h, i)); err != nil && !errors.Is(err, keyring.ErrNotFound) {
						return err
					}
				}
			}
		}
		return s.Delete(keyringService, string(h))
	})
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
	err := k.do(func(s secrets) error {
		_, err := s.Get(keyringService, "probe-"+fmt.Sprint(os.Getpid()))
		return err
	})
	if err == nil || errors.Is(err, keyring.ErrNotFound) {
		return nil
	}
	return err
}
