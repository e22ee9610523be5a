package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
	serverBlockKeys  = []string{"callTimeout", "description", "disabled", "excludeTools", "idleTimeout", "max", "policy", "scope", "sharing", "startTimeout", "tools"}
	topBlockKeys     = []string{"cache", "callTimeout", "idleExit", "idleTimeout", "max", "policy", "scope", "sharing", "startTimeout"}
	policyKeys       = []string{"destructive", "unannotated"}
	cacheKeys        = []string{"maxAge", "maxBytes"}
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
	idle, call, start           *Duration
	tools, exclude              *[]string
	disabled                    *bool
	destructive, unannotated    *string
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
	fill(&l.idle, u.idle)
	fill(&l.call, u.call)
	fill(&l.start, u.start)
	fill(&l.tools, u.tools)
	fill(&l.exclude, u.exclude)
	fill(&l.disabled, u.disabled)
	fill(&l.destructive, u.destructive)
	fill(&l.unannotated, u.unannotated)
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
	set(&o.IdleTimeout, l.idle)
	set(&o.CallTimeout, l.call)
	set(&o.StartTimeout, l.start)
	set(&o.Tools, l.tools)
	set(&o.ExcludeTools, l.exclude)
	set(&o.Disabled, l.disabled)
	set(&o.Policy.Destructive, l.destructive)
	set(&o.Policy.Unannotated, l.unannotated)
	o.Tools = slices.Clone(o.Tools)
	o.ExcludeTools = slices.Clone(o.ExcludeTools)
	return o
}

// entry is one server definition in one file.
type entry struct {
	server *Server
	layer  optLayer
}

// file is what one source contributes.
type file struct {
	entries  map[string]entry
	top      optLayer
	warnings []string
}

// Load reads and merges the sources (nearest first). With no sources it
// returns the built-in default (see Builtin). Each source is resolved
// through symlinks, so Config.Sources always holds resolved paths.
//
// Merging: the nearest file that defines a server name supplies the whole
// entry; an entry with "mcpx": {"disabled": true} (or opencode's
// "enabled": false) removes the name, inherited definitions included.
// Top-level `mcpx` blocks merge per key, nearer first. A server's effective
// Options are its own block over the merged top-level block over the
// built-in defaults.
//
// Errors are *ParseError (file:line:col) for malformed JSONC, a value of the
// wrong type, a value not accepted, a server with neither command nor url,
// and an unknown key inside any `mcpx` block; errors.Is tells the kind
// (ErrSyntax, ErrType, ErrInvalidValue, ErrUnknownKey). Unknown keys in a
// server entry are only warnings (Config.Warnings).
func Load(sources []string, self string) (*Config, error) {
	if len(sources) == 0 {
		return Builtin(self), nil
	}
	c := &Config{Servers: map[string]*Server{}}
	var top optLayer
	won := map[string]entry{}
	for _, src := range sources {
		abs, err := filepath.Abs(src)
		if err == nil {
			abs, err = filepath.EvalSymlinks(abs)
		}
		if err != nil {
			return nil, fmt.Errorf("read config %s: %w", src, err)
		}
		if slices.Contains(c.Sources, abs) {
			continue
		}
		b, err := os.ReadFile(abs)
		if err != nil {
			return nil, fmt.Errorf("read config %s: %w", abs, err)
		}
		f, err := parseFile(abs, b)
		if err != nil {
			return nil, err
		}
		c.Sources = append(c.Sources, abs)
		c.Warnings = append(c.Warnings, f.warnings...)
		top.under(f.top)
		for name, e := range f.entries {
			if _, nearer := won[name]; !nearer {
				won[name] = e
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
	for name, e := range won {
		if e.layer.disabled != nil && *e.layer.disabled {
			continue
		}
		e.server.Options = e.layer.over(s.Defaults)
		c.Servers[name] = e.server
	}
	return c, nil
}
