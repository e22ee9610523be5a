package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/mcpx-dev/mcpx/config/hosts"
	"github.com/mcpx-dev/mcpx/internal/owner"
)

// Getenv looks up a variable; os.Getenv-shaped so tests can inject one.
type Getenv func(string) string

// ErrNoConfigFile is MCPX_CONFIG naming a file that does not exist (wrapped
// together with fs.ErrNotExist).
var ErrNoConfigFile = errors.New("config file not found")

// Discover returns the config sources for dir, nearest first,
// symlink-resolved and deduplicated (DESIGN §2):
//
//  1. MCPX_CONFIG set (via getenv): exactly that file, which must exist; a
//     relative value is taken relative to dir.
//  2. From dir up to /: in each directory mcpx's own .mcpx.json and
//     .mcpx/config.json, Claude Code's .mcp.json, then the other hosts'
//     project files (.cursor/mcp.json, .vscode/mcp.json,
//     .gemini/settings.json, opencode.json[c], .codex/config.toml,
//     .zed/settings.json); every readable regular file is a source.
//  3. $XDG_CONFIG_HOME/mcpx/config.json (default ~/.config/mcpx/config.json),
//     then every host's user-level files (package hosts). Claude Code's
//     ~/.claude.json contributes, before its user scope, the local scope of
//     each project directory at or above dir, nearest first, as the source
//     "~/.claude.json#<project dir>".
//
// The "hosts" list of the user config file limits which hosts' files are
// read (default all). dir itself is resolved through symlinks first, so a
// directory reached through a link has the same sources (and DaemonKey) as
// its target. An empty result means "use the built-in default".
func Discover(dir string, getenv Getenv) ([]string, error) {
	return discover(dir, getenv, nil)
}

// discover is Discover within a load (lc may be nil).
func discover(dir string, getenv Getenv, lc *loadCtx) ([]string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("discover config for %s: %w", dir, err)
	}
	lc.look(abs)
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("discover config for %s: %w", dir, err)
	}
	if explicit := getenv("MCPX_CONFIG"); explicit != "" {
		if !filepath.IsAbs(explicit) {
			explicit = filepath.Join(real, explicit)
		}
		lc.look(explicit)
		p, err := CheckConfigFile(explicit)
		if err != nil {
			return nil, fmt.Errorf("config file %s (MCPX_CONFIG) %w", explicit, err)
		}
		return []string{p}, nil
	}
	env := hostEnv(getenv)
	userCfg := filepath.Join(env.ConfigHome, "mcpx", "config.json")
	enabled, err := enabledHosts(userCfg, lc)
	if err != nil {
		return nil, err
	}
	var out []string
	seen := map[string]bool{}
	add := func(candidate string) {
		if p, ok := lc.readable(candidate); ok && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	project := hosts.ProjectFiles(enabled)
	for d := real; ; d = filepath.Dir(d) {
		for _, nf := range project {
			add(filepath.Join(d, nf.Path))
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	add(userCfg)
	for _, nf := range hosts.UserFilesAll(env, enabled) {
		if nf.Host.Name == "mcpx" {
			continue
		}
		if p, ok := lc.readable(nf.Path); ok && nf.Host.Name == "claude-code" && !seen[p] {
			// Claude Code keys projects by the directory it ran in,
			// which may be reached through a symlink.
			scopes := claudeScopes(p, abs, lc)
			if abs != real {
				scopes = append(scopes, claudeScopes(p, real, lc)...)
			}
			for _, scope := range scopes {
				if !seen[p+"#"+scope] {
					seen[p+"#"+scope] = true
					out = append(out, p+"#"+scope)
				}
			}
		}
		add(nf.Path)
	}
	return out, nil
}

// claudeScopes reads ~/.claude.json for the project directories whose
// local scope applies in dir. An unreadable file has none (Load reports it).
func claudeScopes(path, dir string, lc *loadCtx) []string {
	doc, err := readHostDoc(path, hosts.JSON, lc)
	if err != nil {
		return nil
	}
	return hosts.ClaudeScopes(doc, dir)
}

// hostEnv is the hosts' view of the environment.
func hostEnv(getenv Getenv) hosts.Env {
	home := getenv("HOME")
	if !filepath.IsAbs(home) {
		if h, err := os.UserHomeDir(); err == nil {
			home = h
		}
	}
	return hosts.NewEnv(getenv, filepath.Clean(home), runtime.GOOS)
}

// enabledHosts reads the "hosts" list of the user config file: which hosts'
// files mcpx reads (nil: all). mcpx's own files are always read.
func enabledHosts(userCfg string, lc *loadCtx) (func(*hosts.Host) bool, error) {
	b, _, err := lc.read(userCfg, MaxConfigSize, checkOwner)
	if err != nil {
		return nil, nil // a missing, unreadable or foreign file: Load reports it
	}
	d, err := lc.parse(userCfg, b)
	if err != nil {
		return nil, nil // Load reports the syntax error
	}
	for _, m := range d.root.members {
		if m.name != "hosts" || isNull(d, m.val) {
			continue
		}
		names, err := d.strList(m.val, "", "hosts")
		if err != nil {
			return nil, err
		}
		for i, n := range names {
			if hosts.ByName(n) == nil {
				return nil, d.notAccepted(m.val.elems[i], "", "hosts", n, hosts.Names())
			}
		}
		return func(h *hosts.Host) bool { return h.Name == "mcpx" || slices.Contains(names, h.Name) }, nil
	}
	return nil, nil
}

// CheckConfigFile checks the one file a user named as the config
// (MCPX_CONFIG, --config) and returns its symlink-resolved path. Its error
// reads after the name ("… does not exist", "… is a FIFO (named pipe),
// not a regular file; …") and wraps the kind: ErrNoConfigFile with
// fs.ErrNotExist, or ErrNotRegular (a FIFO would hang or feed mcpx, a
// device or a directory holds no config).
func CheckConfigFile(p string) (string, error) {
	unreadable := func(err error) error {
		return &configFileError{msg: "cannot be read: " + err.Error(), kinds: []error{err}}
	}
	missing := &configFileError{msg: "does not exist", kinds: []error{ErrNoConfigFile, fs.ErrNotExist}}
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return "", missing
	} else if err != nil {
		return "", unreadable(err)
	}
	real, err := filepath.EvalSymlinks(p)
	if errors.Is(err, fs.ErrNotExist) {
		missing.msg = "is a symlink to a file that does not exist"
		return "", missing
	} else if err != nil {
		return "", unreadable(err)
	}
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", unreadable(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", unreadable(err)
	}
	if !fi.Mode().IsRegular() {
		return "", &configFileError{msg: "is " + owner.FileKind(fi.Mode()) + ", not a regular file; mcpx reads its config only from regular files",
			kinds: []error{ErrNotRegular}}
	}
	return real, nil
}

// configFileError is what is wrong with a named config file, as a phrase
// that follows its name, with the kinds it is (errors.Is).
type configFileError struct {
	msg   string
	kinds []error
}

func (e *configFileError) Error() string   { return e.msg }
func (e *configFileError) Unwrap() []error { return e.kinds }

// readableFile resolves p through symlinks and reports whether it is a
// regular file this process can open. The open is non-blocking, so a FIFO
// never hangs discovery.
func readableFile(p string) (string, bool) {
	// One lstat answers "no such file" for most candidates; resolving
	// symlinks stats every component of the path.
	if _, err := os.Lstat(p); err != nil {
		return "", false
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	return real, true
}

// splitSource separates a source's file from its fragment (Claude Code's
// project scope).
func splitSource(src string) (file, scope string) {
	file, scope, _ = strings.Cut(src, "#")
	return file, scope
}

// LoadDir is Discover + Load, with getenv's HOME and XDG directories. Each
// file is read and parsed once.
func LoadDir(dir string, getenv Getenv, self string) (*Config, error) {
	return loadDir(dir, self, newLoadCtx(getenv, false))
}

// loadDir is LoadDir within the load lc (with lc's getenv).
func loadDir(dir, self string, lc *loadCtx) (*Config, error) {
	sources, err := discover(dir, lc.getenv, lc)
	if err != nil {
		return nil, err
	}
	return loadWith(sources, LoadOptions{Self: self, Getenv: lc.getenv}, lc)
}

// readHostDoc decodes a host's file: JSONC or TOML into a generic document.
// Errors are *ParseError with file:line:col. A file owned by another user
// is not read (an error wrapping ErrUntrustable): its Claude Code approvals
// and project scopes are not the user's.
func readHostDoc(path string, format hosts.Format, lc *loadCtx) (map[string]any, error) {
	limit := int64(MaxConfigSize)
	if filepath.Base(path) == ".claude.json" {
		limit = maxClaudeStateSize
	}
	b, _, err := lc.read(path, limit, checkOwner)
	if err != nil {
		return nil, err
	}
	return decodeHostDoc(path, b, format)
}

// docMemo keeps the last few decoded host documents by content digest, so
// a large ~/.claude.json read by Discover (its project scopes), by Load (the
// user scope, each local scope) and for Claude's approvals is decoded once
// per process. Readers never modify a document.
var docMemo struct {
	sync.Mutex
	keys []string
	docs map[string]map[string]any
}

const docMemoSize = 4

func decodeHostDoc(path string, b []byte, format hosts.Format) (map[string]any, error) {
	key := fmt.Sprintf("%d:%s:%s", format, path, Digest(b))
	docMemo.Lock()
	doc, ok := docMemo.docs[key]
	docMemo.Unlock()
	if ok {
		return doc, nil
	}
	doc, err := decodeHostDocUncached(path, b, format)
	if err != nil {
		return nil, err
	}
	docMemo.Lock()
	defer docMemo.Unlock()
	if docMemo.docs == nil {
		docMemo.docs = map[string]map[string]any{}
	}
	if _, ok := docMemo.docs[key]; !ok {
		docMemo.docs[key] = doc
		docMemo.keys = append(docMemo.keys, key)
		if len(docMemo.keys) > docMemoSize {
			delete(docMemo.docs, docMemo.keys[0])
			docMemo.keys = docMemo.keys[1:]
		}
	}
	return doc, nil
}

func decodeHostDocUncached(path string, b []byte, format hosts.Format) (map[string]any, error) {
	if format == hosts.TOML {
		return decodeTOML(path, b)
	}
	d, err := standardJSON(path, b)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := json.Unmarshal(d.clean, &doc); err != nil {
		return nil, d.errAt(0, ErrSyntax, "%v", err)
	}
	return doc, nil
}

// UserConfigFile is mcpx's own user-level file,
// $XDG_CONFIG_HOME/mcpx/config.json (default ~/.config/mcpx/config.json).
func UserConfigFile(getenv Getenv) string {
	return filepath.Join(hostEnv(getenv).ConfigHome, "mcpx", "config.json")
}

// SourceHost names the host whose file a source is ("mcpx" for mcpx's own
// format).
func SourceHost(source string, getenv Getenv) string {
	return hosts.Identify(source, hostEnv(getenv)).Name
}

// HostNames are the hosts mcpx reads, in order.
func HostNames() []string { return hosts.Names() }
