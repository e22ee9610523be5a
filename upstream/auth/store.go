package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/owner"
)

// Record is what mcpx keeps for one server after a login: the tokens and
// what is needed to refresh and revoke them. It holds secrets: it is
// written only to a Store, and its String method hides them so a stray
// %v never prints one.
type Record struct {
	ServerHash config.ServerHash `json:"serverHash"`
	// Server is the server's name at login (for display only).
	Server string `json:"server"`
	// Resource is the canonical URI of the MCP server (RFC 8707).
	Resource string `json:"resource"`
	Issuer   string `json:"issuer"`

	TokenEndpoint      string `json:"tokenEndpoint"`
	RevocationEndpoint string `json:"revocationEndpoint,omitempty"`

	ClientID string `json:"clientId"`
	// ClientSecret is a secret issued by dynamic registration. A secret
	// from mcpx.auth.clientSecretEnv is never stored.
	ClientSecret string `json:"clientSecret,omitempty"`
	// AuthMethod is how the client authenticates at the token endpoint:
	// none, client_secret_basic or client_secret_post.
	AuthMethod string `json:"authMethod"`

	AccessToken  string    `json:"accessToken"`
	RefreshToken string    `json:"refreshToken,omitempty"`
	TokenType    string    `json:"tokenType"`
	Scope        string    `json:"scope,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	ObtainedAt   time.Time `json:"obtainedAt"`
}

// String describes r without its secrets.
func (r Record) String() string {
	return fmt.Sprintf("token record for %s (%s, issuer %s, expires %s)", r.Server, r.ServerHash, r.Issuer, r.Expiry.Format(time.RFC3339))
}

// GoString is String, for %#v.
func (r Record) GoString() string { return r.String() }

// Store keeps Records by serverHash. Implementations are safe for
// concurrent use within a process; across processes the last writer wins.
type Store interface {
	// Name says where tokens live ("file …" or "keyring").
	Name() string
	// Load returns h's record, or nil and no error when there is none.
	Load(h config.ServerHash) (*Record, error)
	// Save writes r (keyed by r.ServerHash), replacing any older one.
	Save(r *Record) error
	// Delete forgets h's record; forgetting a missing one is no error.
	Delete(h config.ServerHash) error
}

// Locker is a Store that can serialize refreshes across processes.
type Locker interface {
	// Lock takes h's lock, waiting at most until ctx ends; unlock
	// releases it.
	Lock(ctx context.Context, h config.ServerHash) (unlock func(), err error)
}

// FileStore keeps each record in Dir/<serverHash>.json, mode 0600, in a
// directory of mode 0700. On read it refuses a file or directory that is
// not the user's own or that others may write (or, for the file, read).
type FileStore struct {
	Dir string
}

// Name implements Store.
func (s *FileStore) Name() string { return "file " + s.Dir }

func (s *FileStore) path(h config.ServerHash) (string, error) {
	if h == "" || strings.ContainsAny(string(h), `/\.`) {
		return "", fmt.Errorf("token store: bad server hash %q", h)
	}
	return filepath.Join(s.Dir, string(h)+".json"), nil
}

// ErrUnsafe marks a token file or directory that mcpx refuses to trust
// (the kind of an *owner.Error).
var ErrUnsafe = errors.New("unsafe permissions")

// owned is the rule for the store: the user's own, and no bits of deny
// for anyone else (the directory: not writable by others; a token file:
// not readable either).
func owned(what string, deny fs.FileMode) owner.Rule {
	return owner.Rule{User: os.Getuid(), Deny: deny, What: what, Kind: ErrUnsafe}
}

// Load implements Store.
func (s *FileStore) Load(h config.ServerHash) (*Record, error) {
	path, err := s.path(h)
	if err != nil {
		return nil, err
	}
	err = owned("token directory", 0o022).CheckDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("token store: %w", err)
	}
	f, err := owned("token file", 0o077).Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("token store: %w", err)
	}
	defer f.Close()
	var r Record
	if err := json.NewDecoder(f).Decode(&r); err != nil {
		// Never quote the content: it holds tokens.
		return nil, fmt.Errorf("token store: %s does not decode as a token record", path)
	}
	if r.ServerHash != h {
		return nil, fmt.Errorf("token store: %s holds the record of another server", path)
	}
	return &r, nil
}

// Save implements Store: temp file (0600) + fsync + rename.
func (s *FileStore) Save(r *Record) error {
	path, err := s.path(r.ServerHash)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	if err := owned("token directory", 0o077).CheckDir(s.Dir); err != nil {
		// A directory of ours that others may enter is closed; anything
		// else is refused.
		var refused *owner.Error
		if !errors.As(err, &refused) || refused.Problem != owner.OpenToOthers || os.Chmod(s.Dir, 0o700) != nil {
			return fmt.Errorf("token store: %w", err)
		}
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("token store: encode record: %w", err)
	}
	f, err := os.CreateTemp(s.Dir, ".tmp-"+string(r.ServerHash)+"-*")
	if err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename this fails harmlessly
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("token store: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("token store: write %s: %w", tmp, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("token store: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	return nil
}

// Delete implements Store.
func (s *FileStore) Delete(h config.ServerHash) error {
	path, err := s.path(h)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("token store: %w", err)
	}
	return nil
}

// Lock implements Locker with a flock on Dir/<serverHash>.lock.
func (s *FileStore) Lock(ctx context.Context, h config.ServerHash) (func(), error) {
	path, err := s.path(h)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("token store: %w", err)
	}
	lk := flock.New(strings.TrimSuffix(path, ".json")+".lock", flock.SetPermissions(0o600))
	ok, err := lk.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil || !ok {
		return nil, fmt.Errorf("token store: lock %s: %w", lk.Path(), errors.Join(err, ctx.Err()))
	}
	return func() { _ = lk.Unlock() }, nil
}
