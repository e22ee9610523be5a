package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpx-dev/mcpx/config/hosts"
)

// DefaultMax is the built-in cap on instances per server pool.
const DefaultMax = 4

// DemoDescription describes the built-in demo server.
const DemoDescription = "Built-in demo server (echo, add, time, slow, delete_note)"

// builtinOptions are the defaults under every top-level mcpx block.
func builtinOptions() Options {
	return Options{
		Sharing:      SharingShared,
		Scope:        ScopeGlobal,
		Max:          DefaultMax,
		IdleTimeout:  Duration(DefaultIdleTimeout),
		CallTimeout:  Duration(DefaultCallTimeout),
		StartTimeout: Duration(DefaultStartTimeout),
		Policy:       Policy{Destructive: PolicyConfirm, Unannotated: PolicyAllow},
	}
}

func builtinSettings() Settings {
	d := builtinOptions()
	return Settings{
		IdleExit: Duration(DefaultIdleExit),
		Cache:    CacheSettings{MaxBytes: DefaultCacheBytes, MaxAge: Duration(DefaultCacheAge)},
		Policy:   d.Policy,
		Defaults: d,
	}
}

// Builtin returns the built-in default configuration: one server, "demo",
// running `<self> demo-server`, where self is the mcpxd binary.
func Builtin(self string) *Config {
	raw, _ := json.Marshal(map[string]any{"command": self, "args": []string{"demo-server"}})
	raw, _ = Canonical(raw)
	opts := builtinOptions()
	opts.Description = DemoDescription
	return &Config{
		Builtin: true,
		Servers: map[string]*Server{"demo": {
			Name:      "demo",
			Command:   self,
			Args:      []string{"demo-server"},
			Transport: TransportStdio,
			Options:   opts,
			Raw:       raw,
		}},
		Settings: builtinSettings(),
	}
}

// Top-level server maps, in the order a duplicate name is reported.
const (
	formatMCPServers = "mcpServers" // Claude Desktop, Claude Code, Cursor
	formatServers    = "servers"    // VS Code
	formatOpencode   = "mcp"        // opencode
)

// Accepted keys, sorted, for messages.
var (
	serverKeys       = []string{"args", "command", "cwd", "env", "headers", "mcpx", "transport", "type", "url"}
	opencodeKeys     = []string{"command", "enabled", "environment", "headers", "mcpx", "type", "url"}
	serverBlockKeys  = []string{"auth", "callTimeout", "description", "disabled", "excludeTools", "idleTimeout", "max", "maxMessageBytes", "policy", "roots", "scope", "sharing", "startTimeout", "tools"}
	topBlockKeys     = []string{"cache", "callTimeout", "idleExit", "idleTimeout", "max", "maxMessageBytes", "policy", "scope", "sharing", "startTimeout"}
	policyKeys       = []string{"destructive", "unannotated"}
	cacheKeys        = []string{"maxAge", "maxBytes"}
	authKeys         = []string{"clientId", "clientMetadataUrl", "clientSecretEnv", "scopes"}
	sharingValues    = []string{SharingShared, SharingExclusive}
	scopeValues      = []string{ScopeGlobal, ScopeCwd, ScopeSession, ScopeCall}
	destructiveVals  = []string{PolicyConfirm, PolicyAllow, PolicyDeny}
	unannotatedVals  = []string{PolicyAllow, PolicyConfirm}
	transportValues  = []string{"stdio", "http", "streamable-http", "sse"}
	opencodeTypeVals = []string{"local", "remote"}
)

// optLayer is one `mcpx` block as written: nil means "not set here".
type optLayer struct {
	sharing, scope, description *string
	max                         *int
	maxMessage                  *int64
	idle, call, start           *Duration
	tools, exclude              *[]string
	disabled                    *bool
	destructive, unannotated    *string
	auth                        *Auth
	roots                       *[]string
	// top-level only
	idleExit      *Duration
	cacheMaxBytes *int64
	cacheMaxAge   *Duration
}

// under fills every field unset in l from u (l wins).
func (l *optLayer) under(u optLayer) {
	fill(&l.sharing, u.sharing)
	fill(&l.scope, u.scope)
	fill(&l.description, u.description)
	fill(&l.max, u.max)
	fill(&l.maxMessage, u.maxMessage)
	fill(&l.idle, u.idle)
	fill(&l.call, u.call)
	fill(&l.start, u.start)
	fill(&l.tools, u.tools)
	fill(&l.exclude, u.exclude)
	fill(&l.disabled, u.disabled)
	fill(&l.destructive, u.destructive)
	fill(&l.unannotated, u.unannotated)
	fill(&l.auth, u.auth)
	fill(&l.roots, u.roots)
	fill(&l.idleExit, u.idleExit)
	fill(&l.cacheMaxBytes, u.cacheMaxBytes)
	fill(&l.cacheMaxAge, u.cacheMaxAge)
}

func fill[T any](dst **T, src *T) {
	if *dst == nil {
		*dst = src
	}
}

func set[T any](dst *T, src *T) {
	if src != nil {
		*dst = *src
	}
}

// over returns o with every field set in l applied.
func (l optLayer) over(o Options) Options {
	set(&o.Sharing, l.sharing)
	set(&o.Scope, l.scope)
	set(&o.Description, l.description)
	set(&o.Max, l.max)
	set(&o.MaxMessageBytes, l.maxMessage)
	set(&o.IdleTimeout, l.idle)
	set(&o.CallTimeout, l.call)
	set(&o.StartTimeout, l.start)
	set(&o.Tools, l.tools)
	set(&o.ExcludeTools, l.exclude)
	set(&o.Disabled, l.disabled)
	set(&o.Policy.Destructive, l.destructive)
	set(&o.Policy.Unannotated, l.unannotated)
	if l.auth != nil {
		a := *l.auth
		a.Scopes = slices.Clone(a.Scopes)
		o.Auth = &a
	}
	set(&o.Roots, l.roots)
	o.Tools = slices.Clone(o.Tools)
	o.ExcludeTools = slices.Clone(o.ExcludeTools)
	o.Roots = slices.Clone(o.Roots)
	return o
}

// entry is one server definition in one file.
type entry struct {
	server *Server
	layer  optLayer
	source string // the source key that defined it (set by Load)
}

// file is what one source contributes.
type file struct {
	entries  map[string]entry
	top      optLayer
	warnings []string
}

// LoadOptions are what Load needs besides the sources.
type LoadOptions struct {
	// Self is the absolute path of the mcpx binary (the built-in demo).
	Self string
	// Getenv is the environment for HOME and the XDG directories (which
	// files are user-level, where the trust store is); nil: os.Getenv.
	Getenv Getenv
	// Trust is the trust store; nil: the one under $XDG_STATE_HOME/mcpx.
	Trust *TrustStore
}

// Load is LoadWith with the process's environment.
func Load(sources []string, self string) (*Config, error) {
	return LoadWith(sources, LoadOptions{Self: self})
}

// LoadWith reads and merges the sources (nearest first). With no sources it
// returns the built-in default (see Builtin). Each source is resolved
// through symlinks, so Config.Sources always holds resolved paths.
//
// Each source is read by its host's reader (package hosts): mcpx's own
// format (.mcpx.json, .mcpx/config.json, .mcp.json, the user config.json,
// any file no host claims) by mcpx's parser, every other host's file
// leniently: a host file that does not parse is a warning and loses only
// its own servers. In every file, an entry mcpx cannot use is listed with
// its Problem (with a warning) and its siblings load.
//
// Trust: servers from a project-level file (not a user-level file of any
// host) carry Untrusted unless the file's current content is in the trust
// store (or Claude Code's approval in ~/.claude.json covers a .mcp.json
// server); top-level mcpx blocks of untrusted files are not applied.
//
// Merging: the nearest file that defines a server name supplies the whole
// entry; an entry with "mcpx": {"disabled": true} (or a host's own disabled
// or enabled: false) removes the name, inherited definitions included.
// Untrusted means inert: an entry of an untrusted file (or a top-level
// block) never replaces, disables or changes a trusted file's entry; it is
// listed as a row of its own (see merger.rows). A file owned by another
// user is not read at all: its Source says so and it has no servers.
// Top-level `mcpx` blocks merge per key, nearer first. A server's effective
// Options are its own block over the merged top-level block over the
// built-in defaults.
//
// Errors (mcpx's own files only) are *ParseError (file:line:col) for
// malformed JSONC, a top-level shape that is not mcpx's (a server map that
// is not an object, a name in two maps), and an unknown key or a value not
// accepted inside any `mcpx` block; errors.Is tells the kind (ErrSyntax,
// ErrType, ErrInvalidValue, ErrUnknownKey). A server entry mcpx cannot use
// (not an object, a value of the wrong type, neither command nor url, a
// transport that does not fit, an unknown ${...} form) is not an error: the
// server's Problem says "FILE:LINE:COL: what". Unknown keys in a server
// entry are only warnings (Config.Warnings).
func LoadWith(sources []string, opts LoadOptions) (*Config, error) {
	return loadWith(sources, opts, nil)
}

// loadWith is LoadWith within a load (lc may be nil).
func loadWith(sources []string, opts LoadOptions, lc *loadCtx) (*Config, error) {
	if len(sources) == 0 {
		return Builtin(opts.Self), nil
	}
	l := newLoader(opts, lc)
	for _, src := range sources {
		if err := l.load(src); err != nil {
			return nil, err
		}
	}
	return l.finish(), nil
}

// loader is one LoadWith: the sources read so far, merged.
type loader struct {
	getenv    Getenv
	trust     *TrustStore
	env       hosts.Env
	home      string          // where user-level servers run, resolved like every path hashed
	userFiles map[string]bool // every host's user-level files, resolved
	hostDocs  map[string]map[string]any
	c         *Config
	top       optLayer
	m         merger
	stamp     hash.Hash
	lc        *loadCtx // reads, parses and records what the load looked at (may be nil)
}

func newLoader(opts LoadOptions, lc *loadCtx) *loader {
	l := &loader{lc: lc, getenv: opts.Getenv, trust: opts.Trust, userFiles: map[string]bool{}, hostDocs: map[string]map[string]any{},
		c: &Config{Servers: map[string]*Server{}}, m: merger{trusted: map[string]entry{}, untrusted: map[string]entry{}}, stamp: sha256.New()}
	if l.getenv == nil {
		l.getenv = os.Getenv
	}
	if l.trust == nil {
		l.trust = TrustStoreAt(stateDir(l.getenv))
	}
	l.env = hostEnv(l.getenv)
	l.home = l.env.Home
	lc.look(l.home)
	if real, err := filepath.EvalSymlinks(l.home); err == nil {
		l.home = real
	}
	for _, nf := range hosts.UserFilesAll(l.env, nil) {
		lc.look(nf.Path)
		if real, err := filepath.EvalSymlinks(nf.Path); err == nil {
			l.userFiles[real] = true
		}
	}
	return l
}

// source is one source being loaded.
type source struct {
	key, path, scope string // path resolved; key is path#scope for a scope
	host             *hosts.Host
	info             Source
	content          []byte
	fi               fs.FileInfo
}

// load reads, parses and merges one source. Only mcpx's own files fail the
// load; anything wrong with another host's file is a warning.
func (l *loader) load(src string) error {
	s, err := l.open(src)
	if s == nil || err != nil {
		return err
	}
	var f *file
	if s.host.Format(s.path) == hosts.MCPX {
		d, err := l.lc.parse(s.path, s.content)
		if err == nil {
			f, err = parseDoc(d)
		}
		if err != nil {
			return err
		}
		for _, e := range f.entries {
			e.server.Host = s.host.Name
		}
	} else if f = l.hostFile(s); f == nil {
		return nil
	}
	l.c.Files = append(l.c.Files, s.info)
	l.c.Warnings = append(l.c.Warnings, f.warnings...)
	if s.info.Trusted {
		l.top.under(f.top)
	}
	l.merge(s, f)
	return nil
}

// open resolves and reads src, and decides its trust. It returns nil (and
// no error) for a source that adds nothing: seen already, another user's,
// or another host's file that cannot be read.
func (l *loader) open(src string) (*source, error) {
	name, scope := splitSource(src)
	abs, err := filepath.Abs(name)
	if err == nil {
		l.lc.look(abs)
		abs, err = filepath.EvalSymlinks(abs)
	}
	host := hosts.Identify(abs, l.env)
	if err != nil {
		if host.Format(name) == hosts.MCPX {
			return nil, fmt.Errorf("read config %s: %w", src, err)
		}
		abs = name
	}
	s := &source{key: abs, path: abs, scope: scope, host: host}
	if scope != "" {
		s.key = abs + "#" + scope
	}
	if slices.Contains(l.c.Sources, s.key) {
		return nil, nil
	}
	l.c.Sources = append(l.c.Sources, s.key)
	s.info = Source{Path: s.key, Host: host.Name, Level: hosts.Project.String()}
	if l.userFiles[abs] || scope != "" {
		s.info.Level = hosts.User.String()
	}
	if err == nil {
		s.content, s.fi, err = l.lc.read(abs, sizeLimit(abs), checkOwner)
	}
	if err != nil {
		return nil, l.unread(s, err)
	}
	if s.info.Level == hosts.User.String() {
		s.info.Trusted = true // and ours: checkOwner passed
	} else {
		l.lc.look(l.trust.file(abs))
		s.info.Why = projectVerdict(l.trust, abs, s.fi, s.content)
		s.info.Trusted = s.info.Why == ""
	}
	fmt.Fprintf(l.stamp, "%s\x00%s\x00%t\x00%s\x00", s.key, Digest(s.content), s.info.Trusted, s.info.Why)
	return s, nil
}

// sizeLimit is how large a config file may be: ~/.claude.json also holds
// Claude Code's own state.
func sizeLimit(path string) int64 {
	if filepath.Base(path) == ".claude.json" {
		return maxClaudeStateSize
	}
	return MaxConfigSize
}

// unread records a source that could not be read: the error of one of
// mcpx's own files, else a note. Another user's file is not read past its
// owner: it contributes nothing but the note.
func (l *loader) unread(s *source, err error) error {
	if errors.Is(err, ErrUntrustable) {
		s.info.Why = sentence(err) + " mcpx does not read it."
		s.info.Error = s.info.Why
		l.c.Files = append(l.c.Files, s.info)
		l.c.Warnings = append(l.c.Warnings, fmt.Sprintf("%s (%s): not read: %s", s.key, s.host.Title, s.info.Why))
		fmt.Fprintf(l.stamp, "%s\x00foreign\x00%s\x00", s.key, s.info.Why)
		return nil
	}
	if s.host.Format(s.path) == hosts.MCPX {
		return fmt.Errorf("read config %s: %w", s.path, err)
	}
	l.skip(s, err)
	fmt.Fprintf(l.stamp, "%s\x00unreadable\x00", s.key)
	return nil
}

// skip lists another host's source that cannot be used, with why.
func (l *loader) skip(s *source, err error) {
	s.info.Error = err.Error()
	l.c.Files = append(l.c.Files, s.info)
	l.c.Warnings = append(l.c.Warnings, fmt.Sprintf("%s (%s): not read: %v", s.key, s.host.Title, err))
}

// hostFile reads another host's file by that host's reader; nil when it
// does not decode (a warning).
func (l *loader) hostFile(s *source) *file {
	format := s.host.Format(s.path)
	doc, err := decodeHostDoc(s.path, s.content, format)
	if err != nil {
		l.skip(s, err)
		return nil
	}
	ctx := &hosts.Context{Path: s.path, Scope: s.scope, Home: l.env.Home, Level: hosts.User}
	if s.info.Level == hosts.Project.String() {
		ctx.Level, ctx.Root = hosts.Project, projectRoot(s.path, s.host)
	}
	hf := s.host.Read(doc, ctx)
	placeProblems(hf, s.path, s.content, format)
	return hostFile(s.host, hf, s.path, s.key, l.c, s.info.Trusted)
}

// merge adds the entries of f, read from s, nearest first.
func (l *loader) merge(s *source, f *file) {
	approved := func(string) bool { return false }
	if !s.info.Trusted && CheckTrustable(s.path, s.fi) == nil {
		if a := s.host.Approvals(s.path, l.env, l.hostDoc); a != nil {
			approved = a
		}
	}
	dir := serverDir(s.path, s.scope, s.info.Level == hosts.User.String(), s.host, l.home)
	for _, name := range slices.Sorted(maps.Keys(f.entries)) {
		e := f.entries[name]
		e.server.Dir = dir
		e.source = s.key
		if !s.info.Trusted && !approved(name) {
			e.server.Untrusted = s.info.Why
		}
		if by, shadowed := l.m.add(name, e); shadowed {
			l.c.Shadowed = append(l.c.Shadowed, Shadow{Name: name, Source: s.key, By: by})
		}
	}
}

// hostDoc is a host's JSON file, decoded once per load (nil when it
// cannot be read).
func (l *loader) hostDoc(path string) map[string]any {
	doc, ok := l.hostDocs[path]
	if !ok {
		doc, _ = readHostDoc(path, hosts.JSON, l.lc)
		l.hostDocs[path] = doc
	}
	return doc
}

// finish applies the merged top-level block and the defaults, and stamps
// the result.
func (l *loader) finish() *Config {
	c := l.c
	s := builtinSettings()
	set(&s.IdleExit, l.top.idleExit)
	set(&s.Cache.MaxBytes, l.top.cacheMaxBytes)
	set(&s.Cache.MaxAge, l.top.cacheMaxAge)
	s.Defaults = l.top.over(s.Defaults)
	s.Policy = s.Defaults.Policy
	c.Settings = s
	rows, hidden := l.m.rows()
	c.Shadowed = append(c.Shadowed, hidden...)
	for _, r := range rows {
		e := r.entry
		e.server.Name = r.name
		e.server.Options = e.layer.over(s.Defaults)
		e.server.own = e.layer
		c.Servers[r.name] = e.server
	}
	markSelf(c, l.getenv, l.lc)
	for _, r := range rows {
		fmt.Fprintf(l.stamp, "%s\x00%s\x00%s\x00", r.name, r.entry.server.Untrusted, r.entry.server.Problem)
	}
	c.Stamp = hex.EncodeToString(l.stamp.Sum(nil))[:32]
	return c
}

// projectVerdict says why servers of a project-level file may not start
// (one sentence naming `mcpx trust`), or "" when the user trusted exactly
// this content.
func projectVerdict(trust *TrustStore, path string, fi fs.FileInfo, content []byte) string {
	if err := CheckTrustable(path, fi); err != nil {
		return sentence(err) + " mcpx never trusts such a file."
	}
	rec, ok, err := trust.Lookup(path)
	switch {
	case err != nil:
		return sentence(err) + fmt.Sprintf(" Run `mcpx trust %s` to record it again.", path)
	case !ok:
		return fmt.Sprintf("%s is not trusted yet: read it, then run `mcpx trust %s`.", path, path)
	case rec.SHA256 != Digest(content):
		return fmt.Sprintf("%s changed since you trusted it: read it, then run `mcpx trust %s`.", path, path)
	}
	return ""
}

// sentence is err's text ending in a period.
func sentence(err error) string {
	s := err.Error()
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// serverDir is where the servers of a source run when their entries name
// no cwd (DESIGN §2): the project of a Claude Code local scope, $HOME for a
// user-level file, else the file's project directory.
func serverDir(path, scope string, user bool, h *hosts.Host, home string) string {
	switch {
	case scope != "":
		return scope
	case user:
		return home
	}
	return projectRoot(path, h)
}

// projectRoot is the workspace folder of a project-level host file: the
// directory the walk found it in (the parent of .vscode, .cursor, ...).
func projectRoot(path string, h *hosts.Host) string {
	for _, p := range h.Project {
		if strings.HasSuffix(path, string(filepath.Separator)+p) {
			return strings.TrimSuffix(path, string(filepath.Separator)+p)
		}
	}
	return filepath.Dir(path)
}

// stateDir is $XDG_STATE_HOME/mcpx (default ~/.local/state/mcpx), as
// DefaultPaths computes it, without creating anything.
func stateDir(getenv Getenv) string {
	if v := getenv("XDG_STATE_HOME"); filepath.IsAbs(v) {
		return filepath.Join(filepath.Clean(v), "mcpx")
	}
	return filepath.Join(hostEnv(getenv).Home, ".local", "state", "mcpx")
}
