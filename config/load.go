package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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
	serverBlockKeys  = []string{"auth", "callTimeout", "description", "disabled", "excludeTools", "idleTimeout", "max", "maxMessageBytes", "policy", "scope", "sharing", "startTimeout", "tools"}
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
	o.Tools = slices.Clone(o.Tools)
	o.ExcludeTools = slices.Clone(o.ExcludeTools)
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
	if len(sources) == 0 {
		return Builtin(opts.Self), nil
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	trust := opts.Trust
	if trust == nil {
		trust = TrustStoreAt(stateDir(getenv))
	}
	env := hostEnv(getenv)
	home := env.Home // where user-level servers run, resolved like every path hashed
	if real, err := filepath.EvalSymlinks(home); err == nil {
		home = real
	}
	userFiles := map[string]bool{}
	for _, nf := range hosts.UserFilesAll(env, nil) {
		if real, err := filepath.EvalSymlinks(nf.Path); err == nil {
			userFiles[real] = true
		}
	}
	c := &Config{Servers: map[string]*Server{}}
	var top optLayer
	m := merger{trusted: map[string]entry{}, untrusted: map[string]entry{}}
	stamp := sha256.New()
	var claude map[string]any // ~/.claude.json, for approvals
	claudeRead := false
	for _, src := range sources {
		name, scope := splitSource(src)
		abs, err := filepath.Abs(name)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		host := hosts.Identify(abs, env)
		if err != nil {
			if host.Format(name) == hosts.MCPX {
				return nil, fmt.Errorf("read config %s: %w", src, err)
			}
			abs = name
		}
		key := abs
		if scope != "" {
			key = abs + "#" + scope
		}
		if slices.Contains(c.Sources, key) {
			continue
		}
		c.Sources = append(c.Sources, key)
		info := Source{Path: key, Host: host.Name, Level: hosts.Project.String()}
		if userFiles[abs] || scope != "" {
			info.Level = hosts.User.String()
		}
		limit := int64(MaxConfigSize)
		if filepath.Base(abs) == ".claude.json" {
			limit = maxClaudeStateSize
		}
		var (
			b  []byte
			fi fs.FileInfo
		)
		if err == nil {
			b, fi, err = readConfigIf(abs, limit, checkOwner)
		}
		if errors.Is(err, ErrUntrustable) {
			// Another user's file is not read past its owner: it
			// contributes nothing but this note.
			info.Why = sentence(err) + " mcpx does not read it."
			info.Error = info.Why
			c.Files = append(c.Files, info)
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s (%s): not read: %s", key, host.Title, info.Why))
			fmt.Fprintf(stamp, "%s\x00foreign\x00%s\x00", key, info.Why)
			continue
		}
		if err != nil {
			if host.Format(abs) == hosts.MCPX {
				return nil, fmt.Errorf("read config %s: %w", abs, err)
			}
			info.Error = err.Error()
			c.Files = append(c.Files, info)
			c.Warnings = append(c.Warnings, fmt.Sprintf("%s (%s): not read: %v", key, host.Title, err))
			fmt.Fprintf(stamp, "%s\x00unreadable\x00", key)
			continue
		}
		if info.Level == hosts.User.String() {
			info.Trusted = true // and ours: checkOwner passed
		} else {
			info.Why = projectVerdict(trust, abs, fi, b)
			info.Trusted = info.Why == ""
		}
		fmt.Fprintf(stamp, "%s\x00%s\x00%t\x00%s\x00", key, Digest(b), info.Trusted, info.Why)
		var f *file
		if host.Format(abs) == hosts.MCPX {
			if f, err = parseFile(abs, b); err != nil {
				return nil, err
			}
			for _, e := range f.entries {
				e.server.Host = host.Name
			}
		} else {
			doc, err := decodeHostDoc(abs, b, host.Format(abs))
			if err != nil {
				info.Error = err.Error()
				c.Files = append(c.Files, info)
				c.Warnings = append(c.Warnings, fmt.Sprintf("%s (%s): not read: %v", key, host.Title, err))
				continue
			}
			ctx := &hosts.Context{Path: abs, Scope: scope, Home: env.Home}
			if info.Level == hosts.Project.String() {
				ctx.Level, ctx.Root = hosts.Project, projectRoot(abs, host)
			} else {
				ctx.Level = hosts.User
			}
			hf := host.Read(doc, ctx)
			placeProblems(hf, abs, b, host.Format(abs))
			f = hostFile(host, hf, abs, key, c, info.Trusted)
		}
		c.Files = append(c.Files, info)
		c.Warnings = append(c.Warnings, f.warnings...)
		if info.Trusted {
			top.under(f.top)
		}
		approval := hosts.ClaudeApproval{}
		if !info.Trusted && host.Name == "claude-code" && filepath.Base(abs) == ".mcp.json" && CheckTrustable(abs, fi) == nil {
			if !claudeRead {
				claudeRead = true
				claude, _ = readHostDoc(filepath.Join(env.Home, ".claude.json"), hosts.JSON)
			}
			approval = hosts.ClaudeApprovalOf(claude, filepath.Dir(abs))
		}
		dir := serverDir(abs, scope, info.Level == hosts.User.String(), host, home)
		for _, name := range slices.Sorted(maps.Keys(f.entries)) {
			e := f.entries[name]
			e.server.Dir = dir
			e.source = key
			if !info.Trusted && !approval.Approved(name) {
				e.server.Untrusted = info.Why
			}
			if by, shadowed := m.add(name, e); shadowed {
				c.Shadowed = append(c.Shadowed, Shadow{Name: name, Source: key, By: by})
			}
		}
	}
	s := builtinSettings()
	set(&s.IdleExit, top.idleExit)
	set(&s.Cache.MaxBytes, top.cacheMaxBytes)
	set(&s.Cache.MaxAge, top.cacheMaxAge)
	s.Defaults = top.over(s.Defaults)
	s.Policy = s.Defaults.Policy
	c.Settings = s
	rows, hidden := m.rows()
	c.Shadowed = append(c.Shadowed, hidden...)
	for _, r := range rows {
		e := r.entry
		e.server.Name = r.name
		e.server.Options = e.layer.over(s.Defaults)
		c.Servers[r.name] = e.server
	}
	markSelf(c, getenv)
	for _, r := range rows {
		fmt.Fprintf(stamp, "%s\x00%s\x00%s\x00", r.name, r.entry.server.Untrusted, r.entry.server.Problem)
	}
	c.Stamp = hex.EncodeToString(stamp.Sum(nil))[:32]
	return c, nil
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
