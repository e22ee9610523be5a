// Package hosts knows the MCP configuration files of other MCP hosts
// (Claude Code, Claude Desktop, Cursor, VS Code, Windsurf, Gemini CLI, Codex,
// opencode, Zed, Cline): where each keeps its files, which keys it uses, and
// which variable syntax it expands. Each host is one small file here, a table
// mapped to one server model (Entry); adding a host is adding a file.
//
// The package is a leaf: it reads documents the caller has already decoded
// (JSONC or TOML) and never touches the file system beyond naming paths.
// A reader never guesses what another host meant: an entry it cannot map
// gets a Problem and its siblings still load.
package hosts

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Level says where a file was found.
type Level int

const (
	// Project files are found by the upward walk from the working
	// directory; their servers run only once the user trusts the file.
	Project Level = iota
	// User files live at fixed places in the user's home.
	User
)

func (l Level) String() string {
	if l == User {
		return "user"
	}
	return "project"
}

// Format is how a host's file is decoded.
type Format int

const (
	// MCPX files are read by mcpx's own strict parser (config package).
	MCPX Format = iota
	// JSON files are JSONC, read leniently entry by entry.
	JSON
	// TOML files (Codex).
	TOML
)

// Env is what the default paths depend on.
type Env struct {
	Home       string // $HOME
	ConfigHome string // $XDG_CONFIG_HOME, else ~/.config
	AppSupport string // ~/Library/Application Support (macOS), else ""
	CodexHome  string // $CODEX_HOME, else ~/.codex
}

// NewEnv builds an Env from an environment lookup.
func NewEnv(getenv func(string) string, home, goos string) Env {
	e := Env{Home: home, ConfigHome: filepath.Join(home, ".config"), CodexHome: filepath.Join(home, ".codex")}
	if v := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(v) {
		e.ConfigHome = filepath.Clean(v)
	}
	if v := getenv("CODEX_HOME"); filepath.IsAbs(v) {
		e.CodexHome = filepath.Clean(v)
	}
	if goos == "darwin" {
		e.AppSupport = filepath.Join(home, "Library", "Application Support")
	}
	return e
}

// Host is one MCP host.
type Host struct {
	// Name is how the user names the host in "hosts": [...] and how
	// `mcpx config --path` shows it.
	Name string
	// Title is the product's name.
	Title string
	// user returns the host's user-level files, in reading order.
	user func(Env) []string
	// Project are the host's project-level files, relative to each
	// directory of the upward walk.
	Project []string
	// format picks how a file of this host is decoded.
	format func(path string) Format
	// read maps a decoded document to entries.
	read func(doc map[string]any, c *Context) *File
	// ToolsKey and ExcludeToolsKey are the keys of an entry that hold
	// the host's tool filters (Entry.Tools, the tools shown; and
	// Entry.ExcludeTools, the tools hidden), as the host spells them; ""
	// when it has none. Messages about a hidden tool name them.
	ToolsKey, ExcludeToolsKey string
	// approvals, for a host that records the user's approval of a
	// project file's servers itself, says which servers of the project
	// file at path are approved (see Approvals).
	approvals func(path string, e Env, doc func(path string) map[string]any) func(name string) bool
}

// Approvals reports which servers of the project file at path the user
// approved in the host itself (Claude Code keeps its approvals of a
// .mcp.json in ~/.claude.json), or nil when the host keeps none for that
// file. doc reads one of the host's JSON files (nil when it cannot be
// read).
func (h *Host) Approvals(path string, e Env, doc func(path string) map[string]any) func(name string) bool {
	if h.approvals == nil {
		return nil
	}
	return h.approvals(path, e, doc)
}

// UserFiles are the host's user-level files for env.
func (h *Host) UserFiles(env Env) []string {
	if h.user == nil {
		return nil
	}
	return h.user(env)
}

// Format of a file of this host.
func (h *Host) Format(path string) Format { return h.format(path) }

// Read maps a decoded document of this host to entries.
func (h *Host) Read(doc map[string]any, c *Context) *File {
	if h.read == nil {
		return &File{}
	}
	return h.read(doc, c)
}

// The formats of hosts whose every file has one. Functions, not a closure
// over the format: the compiler lays out a Host whose fields are all
// constants and functions, where a closure is built at init.
func jsonFormat(string) Format { return JSON }
func tomlFormat(string) Format { return TOML }
func mcpxFormat(string) Format { return MCPX }

// All hosts, in the order their user-level files are read (after mcpx's
// own user file).
var All = []*Host{mcpxHost, claudeCode, claudeDesktop, cursor, vscode, windsurf, gemini, codex, opencode, zed, cline}

// Names of every host, in order.
func Names() []string {
	out := make([]string, len(All))
	for i, h := range All {
		out[i] = h.Name
	}
	return out
}

// ByName finds a host.
func ByName(name string) *Host {
	for _, h := range All {
		if h.Name == name {
			return h
		}
	}
	return nil
}

// ProjectFiles are the project-level names looked for in each directory of
// the walk, in order, each with its host. enabled filters hosts (nil: all).
func ProjectFiles(enabled func(*Host) bool) []NamedFile {
	var out []NamedFile
	for _, h := range projectOrder {
		if enabled != nil && !enabled(h) {
			continue
		}
		for _, p := range h.Project {
			out = append(out, NamedFile{Path: p, Host: h})
		}
	}
	return out
}

// projectOrder is the order of the project files in one directory (DESIGN
// §2): mcpx's own, Claude Code's .mcp.json, then the other hosts'.
var projectOrder = []*Host{mcpxHost, claudeCode, cursor, vscode, gemini, opencode, codex, zed}

// NamedFile is a path with its host.
type NamedFile struct {
	Path string
	Host *Host
}

// UserFilesAll are every host's user-level files, in reading order.
func UserFilesAll(env Env, enabled func(*Host) bool) []NamedFile {
	var out []NamedFile
	for _, h := range All {
		if enabled != nil && !enabled(h) {
			continue
		}
		for _, p := range h.UserFiles(env) {
			out = append(out, NamedFile{Path: p, Host: h})
		}
	}
	return out
}

// Identify names the host of a file from its path: the host whose project
// name or user file the path ends with. A fragment ("#dir", Claude Code's
// per-project scope) is ignored. Unknown paths are mcpx's own format.
func Identify(path string, env Env) *Host {
	path, _, _ = strings.Cut(path, "#")
	for _, h := range All {
		for _, u := range h.UserFiles(env) {
			if u == path {
				return h
			}
		}
	}
	best, bestLen := mcpxHost, 0
	for _, h := range All {
		for _, p := range h.Project {
			if strings.HasSuffix(path, string(filepath.Separator)+p) && len(p) > bestLen {
				best, bestLen = h, len(p)
			}
		}
		for _, s := range suffixesOf(h.Name) {
			if strings.HasSuffix(path, s) && len(s) > bestLen {
				best, bestLen = h, len(s)
			}
		}
	}
	if bestLen == 0 && strings.HasSuffix(path, ".toml") {
		return codex
	}
	return best
}

// hostSuffixes identify a host's user files at places other than the
// default ones (a --config pointing at a copy, another XDG_CONFIG_HOME).
// A table the compiler lays out, not a map: a package-level map is built
// at the start of every mcpx process.
var hostSuffixes = [...]struct {
	host     string
	suffixes []string
}{
	{"claude-code", []string{"/.claude.json"}},
	{"claude-desktop", []string{"/claude_desktop_config.json"}},
	{"vscode", []string{"/Code/User/mcp.json", "/Code/User/settings.json"}},
	{"windsurf", []string{"/windsurf/mcp_config.json"}},
	{"opencode", []string{"/opencode/opencode.json", "/opencode/opencode.jsonc"}},
	{"zed", []string{"/zed/settings.json"}},
	{"cline", []string{"/cline_mcp_settings.json"}},
}

// suffixesOf is host's hostSuffixes.
func suffixesOf(host string) []string {
	for _, h := range hostSuffixes {
		if h.host == host {
			return h.suffixes
		}
	}
	return nil
}

// Context is what a reader knows about the file it reads.
type Context struct {
	Path  string // the file
	Level Level
	// Root is the workspace folder of a project file (the directory the
	// walk found it in); "" for user files.
	Root string
	// Home is the user's home directory.
	Home string
	// Scope is Claude Code's per-project scope of ~/.claude.json: the
	// project directory whose mcpServers are wanted ("" for the top-level
	// user scope).
	Scope string
}

// Input is a VS Code input variable (`inputs`), asked of the user.
type Input struct {
	ID          string
	Description string
	Password    bool
}

// File is what a reader found in one file.
type File struct {
	Entries []Entry
	Inputs  []Input
	// Warnings about the file as a whole (a server map of the wrong type).
	Warnings []string
}

// Entry is one server in the one model every host maps to. Strings are in
// mcpx's variable syntax (${VAR}, ${VAR:-default}, ${input:ID}, $${ for a
// literal "${"): the host's own forms are translated by its reader.
type Entry struct {
	Name         string
	Command      string
	Args         []string
	Env          map[string]string
	Cwd          string
	URL          string
	Transport    string // "stdio", "http" or "sse"
	Headers      map[string]string
	Disabled     bool
	Tools        []string
	ExcludeTools []string
	Description  string
	// StartTimeout and CallTimeout are the host's own timeouts, when it
	// has them (0: mcpx's defaults).
	StartTimeout time.Duration
	CallTimeout  time.Duration
	// Ignored are keys of the entry mcpx does not use, sorted.
	Ignored []string
	// Problem, when set, is why mcpx cannot use the entry (one sentence
	// without the server's name); the entry still shadows lower ones.
	Problem string
	// At are the keys from the document's root to the entry
	// (["mcpServers", NAME]); ProblemAt the key of the entry the Problem is
	// about ("" for the entry as a whole). The config package turns them
	// into FILE:LINE:COL.
	At        []string
	ProblemAt string
}

// under prefixes the place of every entry with the keys of the object the
// reader was given (a Claude Code project, VS Code's "mcp" settings).
func (f *File) under(keys ...string) *File {
	for i := range f.Entries {
		f.Entries[i].At = append(slices.Clone(keys), f.Entries[i].At...)
	}
	return f
}

// Transports.
const (
	Stdio = "stdio"
	HTTP  = "http"
	SSE   = "sse"
)

// entryReader reads one entry object, remembering which keys were used and
// the first problem, with the key read last when it was found (a reader's
// checks follow the read of the key they check).
type entryReader struct {
	name      string
	m         map[string]any
	used      map[string]bool
	problem   string
	problemAt string
	last      string
	vars      varStyle
	c         *Context
}

func newEntry(name string, v any, vars varStyle, c *Context) (*entryReader, bool) {
	m, ok := v.(map[string]any)
	r := &entryReader{name: name, m: m, used: map[string]bool{}, vars: vars, c: c}
	if !ok {
		r.problem = "the entry is not an object"
	}
	return r, ok
}

// fail records the first problem, about the key read last.
func (r *entryReader) fail(format string, args ...any) {
	if r.problem == "" {
		r.problem = fmt.Sprintf(format, args...)
		r.problemAt = r.last
	}
}

// failEntry records the first problem, about the entry as a whole.
func (r *entryReader) failEntry(format string, args ...any) {
	r.last = ""
	r.fail(format, args...)
}

func (r *entryReader) has(key string) bool {
	v, ok := r.m[key]
	return ok && v != nil
}

func (r *entryReader) raw(key string) (any, bool) {
	v, ok := r.m[key]
	r.used[key] = true
	r.last = key
	return v, ok && v != nil
}

// str reads a string value (translated).
func (r *entryReader) str(key string) string {
	v, ok := r.raw(key)
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		r.fail("%q must be a string", key)
		return ""
	}
	return r.tr(key, s)
}

// plain reads a string value without translating variables.
func (r *entryReader) plain(key string) string {
	v, ok := r.raw(key)
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		r.fail("%q must be a string", key)
	}
	return s
}

func (r *entryReader) tr(key, s string) string {
	out, err := r.vars.translate(s, r.c)
	if err != nil {
		r.fail("%s: %v", key, err)
	}
	return out
}

func (r *entryReader) strs(key string) []string {
	v, ok := r.raw(key)
	if !ok {
		return nil
	}
	return r.strList(key, v)
}

func (r *entryReader) strList(key string, v any) []string {
	list, ok := v.([]any)
	if !ok {
		r.fail("%q must be an array of strings", key)
		return nil
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			r.fail("%s[%d] must be a string", key, i)
			return nil
		}
		out = append(out, r.tr(key, s))
	}
	return out
}

// plainList reads an array of strings without translating (tool names).
func (r *entryReader) plainList(key string) []string {
	v, ok := r.raw(key)
	if !ok {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		r.fail("%q must be an array of strings", key)
		return nil
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, ok := e.(string)
		if !ok {
			r.fail("%s[%d] must be a string", key, i)
			return nil
		}
		out = append(out, s)
	}
	return out
}

func (r *entryReader) strMap(key string) map[string]string {
	v, ok := r.raw(key)
	if !ok {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		r.fail("%q must be an object of strings", key)
		return nil
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		switch e := e.(type) {
		case string:
			out[k] = r.tr(key+"."+k, e)
		case bool, int64, float64:
			out[k] = fmt.Sprint(e) // TOML and JSON numbers in env blocks
		default:
			r.fail("%s.%s must be a string", key, k)
		}
	}
	return out
}

// number reads a positive number of unit (time.Second, time.Millisecond)
// as a duration; 0 when absent.
func (r *entryReader) number(key string, unit time.Duration) time.Duration {
	v, ok := r.raw(key)
	if !ok {
		return 0
	}
	var f float64
	switch v := v.(type) {
	case float64:
		f = v
	case int64:
		f = float64(v)
	default:
		r.fail("%q must be a number", key)
		return 0
	}
	if f <= 0 {
		r.fail("%q must be positive", key)
		return 0
	}
	return time.Duration(f * float64(unit))
}

func (r *entryReader) boolean(key string) (val, set bool) {
	v, ok := r.raw(key)
	if !ok {
		return false, false
	}
	b, ok := v.(bool)
	if !ok {
		r.fail("%q must be true or false", key)
		return false, false
	}
	return b, true
}

// ignore marks keys as known and meaningless to mcpx (still listed as
// ignored).
func (r *entryReader) ignoredKeys() []string {
	var out []string
	for k := range r.m {
		if !r.used[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// entry finishes the entry: transport from command/url, problem, ignored.
func (r *entryReader) entry(e Entry) Entry {
	e.Name = r.name
	if r.m != nil {
		e.Ignored = r.ignoredKeys()
	}
	r.last = "" // what follows is about the entry as a whole
	if r.problem == "" && !e.Disabled {
		switch {
		case e.Command != "" && e.URL != "":
			r.fail("has both a command and a URL")
		case e.Command != "":
			if e.Transport != "" && e.Transport != Stdio {
				r.fail("transport %s needs a URL, not a command", e.Transport)
			}
			e.Transport = Stdio
		case e.URL != "":
			if e.Transport == Stdio {
				r.fail("transport stdio needs a command, not a URL")
			}
			if e.Transport == "" {
				e.Transport = HTTP
			}
			if !strings.HasPrefix(e.URL, "http://") && !strings.HasPrefix(e.URL, "https://") && !strings.HasPrefix(e.URL, "${") {
				r.fail("URL %q is not http:// or https://", e.URL)
			}
		default:
			r.fail("has neither a command nor a URL mcpx can use")
		}
	}
	e.Problem, e.ProblemAt = r.problem, r.problemAt
	return e
}

// transport maps a host's "type" value; ok false for values mcpx cannot use.
func transportOf(t string) (string, bool) {
	switch strings.ToLower(t) {
	case "stdio", "local":
		return Stdio, true
	case "http", "streamable-http", "streamablehttp", "streamable_http", "remote":
		return HTTP, true
	case "sse":
		return SSE, true
	}
	return "", false
}

// serverMap reads the object of servers under key; a missing key is no
// servers, a wrong type a file warning.
func serverMap(doc map[string]any, key string, f *File, c *Context) map[string]any {
	v, ok := doc[key]
	if !ok || v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		f.Warnings = append(f.Warnings, fmt.Sprintf("%s: %q is not an object of servers; ignored", c.Path, key))
		return nil
	}
	return m
}

// sortedNames are the keys of m, sorted.
func sortedNames(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
