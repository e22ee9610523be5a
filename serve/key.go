package serve

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/owner"
)

// The serve key: `mcpx serve --http` listens on a TCP port, which every
// local user can reach, where the daemon's socket admits its owner alone.
// So every HTTP request must carry the key (Authorization: Bearer KEY, or
// ?key=KEY in the URL as Jupyter's token), which only the user can read:
// State/serve.key, 0600, made on first use and kept, so that a host's
// config written once (--print-config) keeps working.

// keyBytes is the key's entropy: 256 bits.
const keyBytes = 32

// serveKey reads the key at path, making it first when there is none. The
// file and its directory must be the user's and writable by nobody else
// (internal/owner).
func serveKey(path string) (string, error) {
	dir := filepath.Dir(path)
	if err := owner.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("serve key %s: %w", path, err)
	}
	b, err := owner.ReadFile(path, 4096)
	if errors.Is(err, fs.ErrNotExist) {
		if err := makeKey(path); err != nil {
			return "", err
		}
		b, err = owner.ReadFile(path, 4096)
	}
	if err != nil {
		return "", fmt.Errorf("serve key %s: %w", path, err)
	}
	key := strings.TrimSpace(string(b))
	if len(key) < 16 {
		return "", fmt.Errorf("serve key %s: shorter than 16 characters; delete it and a new one is made", path)
	}
	return key, nil
}

// makeKey writes a new random key to path unless one is there: written to
// a temporary file and linked into place, so that two serves starting at
// once agree on one key and nobody reads a half-written one.
func makeKey(path string) error {
	raw := make([]byte, keyBytes)
	if _, err := rand.Read(raw); err != nil {
		return fmt.Errorf("make serve key: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".serve.key-*")
	if err != nil {
		return fmt.Errorf("make serve key %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(base64.RawURLEncoding.EncodeToString(raw) + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o600)
	}
	if err == nil {
		if err = os.Link(tmp.Name(), path); errors.Is(err, fs.ErrExist) {
			err = nil // another serve made it first
		}
	}
	if err != nil {
		return fmt.Errorf("make serve key %s: %w", path, err)
	}
	return nil
}

// keyChecker checks the key a request carries in constant time (the
// digests of both are compared, so not even the length leaks).
type keyChecker struct{ want [sha256.Size]byte }

func newKeyChecker(key string) *keyChecker { return &keyChecker{want: sha256.Sum256([]byte(key))} }

// ok reports whether r carries the key, as a bearer token or ?key=.
func (k *keyChecker) ok(r *http.Request) bool {
	got, found := "", false
	if a := r.Header.Get("Authorization"); a != "" {
		scheme, token, _ := strings.Cut(a, " ")
		if strings.EqualFold(scheme, "Bearer") {
			got, found = strings.TrimSpace(token), true
		}
	}
	if !found {
		got, found = r.URL.Query().Get("key"), r.URL.Query().Has("key")
	}
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], k.want[:]) == 1 && found
}
