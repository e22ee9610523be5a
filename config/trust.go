package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/config/hosts"
	"github.com/mcpx-dev/mcpx/internal/owner"
)

// Trust (like `direnv allow`): a server from a project-level file starts
// only once the user has trusted that file's current content. A trust
// record holds the file's path and the SHA-256 of its content; any change of
// content needs trust again.

// ErrUntrustable is a file mcpx never trusts: owned by another user (other
// than root) or writable by group or others.
var ErrUntrustable = errors.New("file cannot be trusted")

// TrustStore keeps one record per trusted file under Dir
// ($XDG_STATE_HOME/mcpx/trust), named by the SHA-256 of the path. Records
// are written by temp file + rename. Safe for concurrent use by several
// processes (a record is one file).
type TrustStore struct{ Dir string }

// TrustRecord is one trusted file.
type TrustRecord struct {
	Path      string    `json:"path"`
	SHA256    string    `json:"sha256"`
	TrustedAt time.Time `json:"trustedAt"`
}

// TrustStoreAt is the store under a state directory (Paths.State).
func TrustStoreAt(state string) *TrustStore {
	return &TrustStore{Dir: filepath.Join(state, "trust")}
}

func (t *TrustStore) file(path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(t.Dir, hex.EncodeToString(sum[:16])+".json")
}

// Digest is the content digest trust records hold.
func Digest(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}

// Lookup returns the record of path, if any.
func (t *TrustStore) Lookup(path string) (TrustRecord, bool, error) {
	rec, err := readTrustRecord(t.file(path))
	if errors.Is(err, fs.ErrNotExist) {
		return TrustRecord{}, false, nil
	}
	if err != nil {
		return TrustRecord{}, false, err
	}
	if rec.Path != path {
		return TrustRecord{}, false, nil
	}
	return rec, true, nil
}

// readTrustRecord reads one record. It is the one place that decides a
// trust record may be believed: the record must be a regular file owned by
// this user and writable by nobody else; otherwise it is an error wrapping
// ErrUntrustable.
func readTrustRecord(file string) (TrustRecord, error) {
	var rec TrustRecord
	b, fi, err := readConfig(file, 1<<16)
	if err != nil {
		return rec, err
	}
	mine := owner.Rule{User: os.Getuid(), Deny: 0o022, What: "trust record", Kind: ErrUntrustable}
	if err := mine.Check(file, fi); err != nil {
		return rec, err
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return rec, fmt.Errorf("trust record %s: %w", file, err)
	}
	return rec, nil
}

// Trust records path with the digest of content. The caller has checked
// the file (CheckTrustable).
func (t *TrustStore) Trust(path string, content []byte) (TrustRecord, error) {
	rec := TrustRecord{Path: path, SHA256: Digest(content), TrustedAt: time.Now().UTC().Truncate(time.Second)}
	if err := os.MkdirAll(t.Dir, 0o700); err != nil {
		return rec, fmt.Errorf("trust %s: %w", path, err)
	}
	b, _ := json.MarshalIndent(rec, "", "  ")
	f, err := os.CreateTemp(t.Dir, ".trust-*")
	if err != nil {
		return rec, fmt.Errorf("trust %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(append(b, '\n'))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), t.file(path))
	}
	if err != nil {
		return rec, fmt.Errorf("trust %s: %w", path, err)
	}
	return rec, nil
}

// Untrust removes the record of path; false when there was none.
func (t *TrustStore) Untrust(path string) (bool, error) {
	err := os.Remove(t.file(path))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("untrust %s: %w", path, err)
	}
	return true, nil
}

// List returns every record, sorted by path. Records that cannot be
// believed are skipped.
func (t *TrustStore) List() ([]TrustRecord, error) {
	ents, err := os.ReadDir(t.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list trusted files: %w", err)
	}
	var out []TrustRecord
	for _, e := range ents {
		if filepath.Ext(e.Name()) != ".json" {
			continue
		}
		if rec, err := readTrustRecord(filepath.Join(t.Dir, e.Name())); err == nil {
			out = append(out, rec)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// CheckTrustable says why a config file can never be trusted (an
// *owner.Error of kind ErrUntrustable), or nil: it must be owned by this
// user or root, and not writable by group or others.
func CheckTrustable(path string, fi fs.FileInfo) error {
	return owner.Rule{User: os.Getuid(), Root: true, Deny: 0o022, Kind: ErrUntrustable}.Check(path, fi)
}

// checkOwner is CheckTrustable's ownership half, for user-level files.
func checkOwner(path string, fi fs.FileInfo) error {
	return owner.Rule{User: os.Getuid(), Root: true, Kind: ErrUntrustable}.Check(path, fi)
}

// TrustFile checks path and records its current content as trusted. It
// returns the resolved path.
func (t *TrustStore) TrustFile(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("trust %s: %w", path, err)
	}
	b, fi, err := readConfig(real, MaxConfigSize)
	if err != nil {
		return "", fmt.Errorf("trust %s: %w", path, err)
	}
	if err := CheckTrustable(real, fi); err != nil {
		return "", err
	}
	if _, err := t.Trust(real, b); err != nil {
		return "", err
	}
	return real, nil
}

// ProjectFiles are the sources (as Discover returns them) that are
// project-level for getenv: every one that is not a user-level file of some
// host and not a Claude Code project scope. Their servers need trust.
func ProjectFiles(sources []string, getenv Getenv) []string {
	env := hostEnv(getenv)
	user := map[string]bool{}
	for _, nf := range hosts.UserFilesAll(env, nil) {
		if real, err := filepath.EvalSymlinks(nf.Path); err == nil {
			user[real] = true
		}
	}
	var out []string
	for _, s := range sources {
		if strings.Contains(s, "#") || user[s] {
			continue
		}
		out = append(out, s)
	}
	return out
}

// ProjectFilesIn splits the project-level files among sources (as
// ProjectFiles) into those whose project directory is dir — what
// `mcpx trust DIR` trusts — and the others (a parent directory's, which
// are trusted only by their path).
func ProjectFilesIn(dir string, sources []string, getenv Getenv) (here, parents []string) {
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	env := hostEnv(getenv)
	for _, f := range ProjectFiles(sources, getenv) {
		if projectRoot(f, hosts.Identify(f, env)) == filepath.Clean(dir) {
			here = append(here, f)
		} else {
			parents = append(parents, f)
		}
	}
	return here, parents
}

// DefaultTrustStore is the trust store for getenv's XDG_STATE_HOME.
func DefaultTrustStore(getenv Getenv) *TrustStore { return TrustStoreAt(stateDir(getenv)) }
