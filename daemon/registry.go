package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/filestamp"
	"github.com/mcpx-dev/mcpx/search"
	"github.com/mcpx-dev/mcpx/upstream"
)

// state is one loaded config with its identities computed once. It is
// immutable; a reload replaces it whole.
type state struct {
	cfg        *config.Config
	names      []string
	hashes     map[string]config.ServerHash
	schemaHash config.SchemaHash
	// unavailable are the sources whose servers are missing (not read or
	// not parsed).
	unavailable []api.UnavailableSource
}

func newState(cfg *config.Config) *state {
	st := &state{cfg: cfg, names: cfg.Names(), hashes: map[string]config.ServerHash{}, schemaHash: cfg.SchemaHash()}
	for name, s := range cfg.Servers {
		st.hashes[name] = s.Hash()
	}
	for _, f := range cfg.Files {
		if f.Error != "" {
			st.unavailable = append(st.unavailable, api.UnavailableSource{Path: f.Path, Host: f.Host, Error: f.Error})
		}
	}
	return st
}

// server returns the named server or a 404 naming the nearest one, and
// every source whose servers are missing (the name may be one of them).
func (st *state) server(name string) (*config.Server, error) {
	if s, ok := st.cfg.Servers[name]; ok {
		return s, nil
	}
	msg := fmt.Sprintf("unknown namespace %q", name)
	for _, u := range st.unavailable {
		msg += "; " + u.Sentence()
	}
	e := apiErr(404, api.CodeUnknownNamespace, "%s", msg)
	e.body.Namespace = name
	e.body.Suggestion = search.Suggest(name, st.names)
	return nil, e
}

// byHash finds the server whose definition has hash h.
func (st *state) byHash(h config.ServerHash) (*config.Server, bool) {
	for name, sh := range st.hashes {
		if sh == h {
			return st.cfg.Servers[name], true
		}
	}
	return nil, false
}

// spec builds what upstream needs to start s: variables expanded from the
// captured environment file (never from the daemon's own environment), the
// process environment as KEY=VALUE, and the digest of the expanded
// definition. snap, when usable, supplies the protocol version that worked
// last time.
func (d *daemon) spec(ctx context.Context, st *state, s *config.Server, snap *cache.Snapshot) (upstream.Spec, error) {
	if err := runnable(s); err != nil {
		return upstream.Spec{}, err
	}
	env, gen, err := d.env.getGen(envDigestOf(ctx))
	if err != nil {
		return upstream.Spec{}, apiErr(500, api.CodeInternal, "%v", err)
	}
	key := specKey{server: s, hash: st.hashes[s.Name], env: gen}
	if snap != nil {
		key.protocol = snap.ProtocolVersion
	}
	if sp, ok := d.specs.get(key); ok {
		return sp, nil
	}
	exp, err := s.Expand(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		var unset *config.UnsetVarError
		if errors.As(err, &unset) {
			hint := " (export it in the shell that runs mcpx, then retry)"
			if strings.HasPrefix(unset.Var, "input:") {
				hint = ""
			}
			e := apiErr(422, api.CodeUnsetVariable, "%v%s", err, hint)
			e.body.Namespace = s.Name
			return upstream.Spec{}, e
		}
		return upstream.Spec{}, apiErr(422, api.CodeConfig, "%v", err)
	}
	// The server's environment: the base set and the variables its own
	// entry references, never another server's (DESIGN §2).
	own := config.ServerEnv(s, env)
	list := make([]string, 0, len(own))
	for _, k := range slices.Sorted(maps.Keys(own)) {
		list = append(list, k+"="+own[k])
	}
	sp := upstream.Spec{Server: exp, Hash: st.hashes[s.Name], Env: list, EnvDigest: envDigest(exp), Roots: rootsOf(s)}
	if snap != nil {
		sp.ProtocolVersion = snap.ProtocolVersion
	}
	sp = sp.WithLaunch()
	d.specs.put(key, sp)
	return sp, nil
}

// runnable refuses a server that may not start: one from a project file
// the user has not trusted (403 untrusted, like the policy: the daemon
// enforces it, so no client can skip it), or an entry mcpx cannot use.
func runnable(s *config.Server) error {
	switch {
	case s.Untrusted != "":
		e := apiErr(http.StatusForbidden, api.CodeUntrusted, "server %s is not allowed to start: %s", s.Name, s.Untrusted)
		e.body.Namespace = s.Name
		return e
	case s.Problem != "":
		where := " (" + s.Source + ")"
		if strings.HasPrefix(s.Problem, s.Source+":") {
			where = "" // mcpx's own files: the problem starts with FILE:LINE:COL
		}
		e := apiErr(http.StatusUnprocessableEntity, api.CodeConfig, "server %s cannot be used: %s%s", s.Name, s.Problem, where)
		e.body.Namespace = s.Name
		return e
	}
	return nil
}

// specKey is what a built upstream.Spec depends on: the server definition
// (a reload makes a new one), its hash, the captured environment's
// generation and the protocol version the snapshot remembers.
type specKey struct {
	server   *config.Server
	hash     config.ServerHash
	env      uint64
	protocol string
}

// specCache keeps built specs: expanding variables, sorting the
// environment and hashing the definition is done once per key, not per
// call. Safe for concurrent use; callers must not modify a Spec's slices.
type specCache struct {
	mu sync.Mutex
	m  map[specKey]upstream.Spec
}

func (c *specCache) get(k specKey) (upstream.Spec, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sp, ok := c.m[k]
	return sp, ok
}

func (c *specCache) put(k specKey, sp upstream.Spec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= 256 { // old generations and definitions go
		c.m = map[specKey]upstream.Spec{}
	}
	c.m[k] = sp
}

// envDigest is the SHA-256 of the expanded definition's canonical JSON,
// without the mcpx block (options do not change what runs).
func envDigest(exp *config.Server) string {
	c := *exp
	c.Options = config.Options{}
	b, err := json.Marshal(&c) // struct fields in order, map keys sorted
	if err != nil {
		panic(fmt.Sprintf("daemon: encode server %s: %v", exp.Name, err)) // strings and maps only
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// envFile is the captured caller environment (DESIGN §2), re-read when the
// file changes. Safe for concurrent use.
//
// A request names the environment its client wrote to the file
// (api.HeaderEnvDigest, carried on its context: withEnvDigest): when that
// is the one read last, the values are used without a stat of the file
// (one per call was 4-6 % of the daemon's CPU in a call loop). A request
// that names another, or none (an older client, curl, the daemon's own
// work), has the file stat'ed and read again if it changed. The CLI writes
// the file before it sends a request, so a call always runs with the
// environment its command captured, or a newer one written since.
type envFile struct {
	path string

	mu     sync.Mutex
	stamp  filestamp.Stamp
	vals   map[string]string
	digest string // config.EnvDigest(vals)
	gen    uint64 // counts reads that replaced vals
}

// get returns the current values; callers must not modify the map.
func (e *envFile) get() (map[string]string, error) {
	vals, _, err := e.getGen("")
	return vals, err
}

// getGen returns the values for a request that names digest ("" for
// none), with their generation, which changes whenever the file was read
// anew.
func (e *envFile) getGen(digest string) (map[string]string, uint64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.vals != nil && digest != "" && digest == e.digest {
		return e.vals, e.gen, nil
	}
	st, err := filestamp.Of(e.path)
	if err != nil {
		return nil, 0, fmt.Errorf("read environment file %s: %w", e.path, err)
	}
	if e.vals != nil && st == e.stamp {
		return e.vals, e.gen, nil
	}
	vals, err := config.ReadEnvFile(e.path)
	if err != nil {
		return nil, 0, err
	}
	if vals == nil {
		vals = map[string]string{}
	}
	e.vals, e.stamp, e.digest = vals, st, config.EnvDigest(vals)
	e.gen++
	return vals, e.gen, nil
}

// envDigestKey carries, on a request's context, the environment digest
// its client named (api.HeaderEnvDigest).
type envDigestKey struct{}

func withEnvDigest(ctx context.Context, digest string) context.Context {
	return context.WithValue(ctx, envDigestKey{}, digest)
}

// envDigestOf is the digest ctx's request named, or "".
func envDigestOf(ctx context.Context) string {
	d, _ := ctx.Value(envDigestKey{}).(string)
	return d
}

// rootsOf is what s offers its server as roots: its mcpx.roots as file
// URIs, each named after its last element.
func rootsOf(s *config.Server) []upstream.Root {
	dirs := s.RootDirs()
	if len(dirs) == 0 {
		return nil
	}
	out := make([]upstream.Root, 0, len(dirs))
	for _, dir := range dirs {
		out = append(out, upstream.Root{URI: (&url.URL{Scheme: "file", Path: dir}).String(), Name: filepath.Base(dir)})
	}
	return out
}
