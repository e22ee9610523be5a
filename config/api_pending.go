package config

// PENDING: these are the declared signatures of package config. The config
// helper implements them in their own files and deletes this file. Callers in
// other packages code against exactly these signatures.

import (
	"time"
)

// Getenv looks up a variable; os.Getenv-shaped so tests can inject one.
type Getenv func(string) string

// ParseError is a config file that does not parse. Error() is
// "FILE:LINE:COL: message".
type ParseError struct {
	File string
	Line int
	Col  int
	Msg  string
}

func (e *ParseError) Error() string { panic("pending") }

// Discover returns the config sources for dir, nearest first,
// symlink-resolved (DESIGN §2 search order). MCPX_CONFIG (via getenv) selects
// exactly one file. An empty result means "use the built-in default".
func Discover(dir string, getenv Getenv) ([]string, error) { panic("pending") }

// Load reads and merges the sources (nearest first). With no sources it
// returns the built-in default: one server "demo" running `<self> demo-server`,
// where self is the given absolute path of the mcpx binary.
// Errors: *ParseError for malformed JSONC, or an error naming the file for a
// bad value or an unknown key inside an `mcpx` block (with the nearest
// accepted key).
func Load(sources []string, self string) (*Config, error) { panic("pending") }

// LoadDir is Discover + Load.
func LoadDir(dir string, getenv Getenv, self string) (*Config, error) { panic("pending") }

// KeyOf computes the DaemonKey of a list of sources (BuiltinKey when empty).
func KeyOf(sources []string) DaemonKey { panic("pending") }

// DaemonKey of the config (KeyOf(c.Sources)).
func (c *Config) DaemonKey() DaemonKey { panic("pending") }

// SchemaHash of the config.
func (c *Config) SchemaHash() SchemaHash { panic("pending") }

// Names returns the server names, sorted.
func (c *Config) Names() []string { panic("pending") }

// Vars returns every ${VAR} the config references, sorted, deduplicated.
func (c *Config) Vars() []string { panic("pending") }

// Hash is the ServerHash of the server's definition as written.
func (s *Server) Hash() ServerHash { panic("pending") }

// Vars returns the variables the server references.
func (s *Server) Vars() []string { panic("pending") }

// Expand returns a copy with every ${VAR} replaced from lookup. An unset
// variable is an *UnsetVarError naming it and the server.
func (s *Server) Expand(lookup func(string) (string, bool)) (*Server, error) { panic("pending") }

// UnsetVarError is a ${VAR} the caller's environment does not define.
type UnsetVarError struct {
	Server string
	Var    string
}

func (e *UnsetVarError) Error() string { panic("pending") }

// ToolAllowed applies tools/excludeTools (names, globs, /regexps/).
func (o Options) ToolAllowed(name string) bool { panic("pending") }

// D returns the duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// Nearest returns the candidate closest to s by edit distance, or "" when
// nothing is reasonably close. Used for unknown keys, namespaces and tools.
func Nearest(s string, candidates []string) string { panic("pending") }

// Paths knows every location mcpx uses (DESIGN §4). One function per path.
type Paths struct {
	Runtime string // <XDG_RUNTIME_DIR>/mcpx or $TMPDIR/mcpx-<uid>
	State   string // $XDG_STATE_HOME/mcpx
	Cache   string // $XDG_CACHE_HOME/mcpx
	Config  string // $XDG_CONFIG_HOME/mcpx
}

// DefaultPaths computes the paths from the environment. It does not create
// anything except, when XDG_RUNTIME_DIR is unset, the $TMPDIR/mcpx-<uid>
// directory (0700, owner-checked).
func DefaultPaths(getenv Getenv) (Paths, error) { panic("pending") }

func (p Paths) Socket(k DaemonKey) string    { panic("pending") }
func (p Paths) Info(k DaemonKey) string      { panic("pending") }
func (p Paths) EnvFile(k DaemonKey) string   { panic("pending") }
func (p Paths) Lock(k DaemonKey) string      { panic("pending") }
func (p Paths) KeyRecord(k DaemonKey) string { panic("pending") }
func (p Paths) Log(k DaemonKey) string       { panic("pending") }
func (p Paths) KeysDir() string              { panic("pending") }
func (p Paths) CAS() string                  { panic("pending") }
func (p Paths) Schemas() string              { panic("pending") }

// CaptureEnv returns what a daemon needs from the caller's environment:
// every variable the config references (that is set) plus PATH, HOME, LANG.
func CaptureEnv(c *Config, getenv Getenv) map[string]string { panic("pending") }

// WriteEnvFile writes the captured environment (0600, atomically) unless the
// file already holds exactly these values; it reports whether it wrote.
func WriteEnvFile(path string, env map[string]string) (bool, error) { panic("pending") }

// ReadEnvFile reads a file written by WriteEnvFile; a missing file is an
// empty map and no error.
func ReadEnvFile(path string) (map[string]string, error) { panic("pending") }
