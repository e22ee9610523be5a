package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// getenv is the environment e's commands get, as a config.Getenv.
func (e *Env) getenv() config.Getenv {
	vars := map[string]string{}
	for _, kv := range e.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	return func(k string) string { return vars[k] }
}

// unixGet does GET path on a unix socket with plain net/http and returns
// the status and body.
func unixGet(t *testing.T, socket, path string) (int, []byte) {
	t.Helper()
	hc := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
	}}
	resp, err := hc.Get("http://mcpx" + path)
	if err != nil {
		t.Fatalf("GET %s on %s: %v", path, socket, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

// surface is one JSON document mcpx exposes, decoded generically.
type surface struct {
	name string
	doc  any
}

func decode(t *testing.T, name string, data []byte) surface {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s is not JSON: %v\n%s", name, err, data)
	}
	return surface{name: name, doc: v}
}

// digests walks v and collects every value of a key named daemonKey,
// schemaHash or serverHash, and every place a configHash key appears.
func digests(v any, path string, out map[string][]string, forbidden *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			p := path + "." + k
			if strings.EqualFold(k, "configHash") {
				*forbidden = append(*forbidden, p)
			}
			if s, ok := x.(string); ok && (k == "daemonKey" || k == "schemaHash" || k == "serverHash") {
				out[k] = append(out[k], p+"="+s)
			}
			digests(x, p, out, forbidden)
		}
	case []any:
		for i, x := range v {
			digests(x, fmt.Sprintf("%s[%d]", path, i), out, forbidden)
		}
	}
}

// value is the digest of a "path=value" entry.
func value(entry string) string { return entry[strings.LastIndexByte(entry, '=')+1:] }

// TestSurfacesAgree starts a daemon, gathers every JSON document mcpx
// exposes, and holds DESIGN §3: no configHash anywhere, and every
// daemonKey, schemaHash and serverHash agrees with the others and with a
// recomputation from the config files.
func TestSurfacesAgree(t *testing.T) {
	e := NewEnv(t)
	cfgPath := e.WriteFile(filepath.Join(e.Work, ".mcpx.json"), fmt.Sprintf(`{
  // the fixture twice: one server is called, the other stays unread
  "mcpServers": {
    "demo": {"command": %s},
    "other": {"command": %s, "args": ["--unused"], "mcpx": {"description": "never started"}}
  }
}`, jsonString(fixtureBin), jsonString(fixtureBin)))
	if r := e.MustOK("call", "demo.echo", "text=x"); r.Stdout != "x" {
		t.Fatalf("echo: %s", r)
	}
	want := recompute(t, e, cfgPath)
	paths, err := config.DefaultPaths(e.getenv())
	if err != nil {
		t.Fatal(err)
	}
	key := config.DaemonKey(want.key)
	info, err := config.ReadInfo(paths.Info(key))
	if err != nil {
		t.Fatal(err)
	}
	surfaces := fileSurfaces(t, paths, key)
	surfaces = append(surfaces, socketSurfaces(t, e, info.Socket)...)
	surfaces = append(surfaces, cacheSurfaces(t, paths)...)
	seen := identities(t, surfaces)
	checkIdentities(t, seen, want)
	checkStatusServerHashes(t, info.Socket, want.server)
	if t.Failed() {
		for k, v := range seen {
			t.Logf("%s: %v", k, v)
		}
	}
}

// identityTruth is what the identities must be, recomputed from the
// config files.
type identityTruth struct {
	key, schema string
	server      map[string]string // name → serverHash
	file        string            // the config file, resolved
}

func recompute(t *testing.T, e *Env, cfgPath string) identityTruth {
	t.Helper()
	cfg, err := config.LoadDir(e.Work, e.getenv(), mcpxdBin)
	if err != nil {
		t.Fatal(err)
	}
	realCfg, _ := filepath.EvalSymlinks(cfgPath)
	want := identityTruth{key: string(config.KeyOf([]string{realCfg})), schema: string(cfg.SchemaHash()), server: map[string]string{}, file: realCfg}
	if string(cfg.DaemonKey()) != want.key {
		t.Fatalf("LoadDir key %s, KeyOf %s", cfg.DaemonKey(), want.key)
	}
	for name, s := range cfg.Servers {
		want.server[name] = string(s.Hash())
	}
	return want
}

// fileSurfaces are the info file and the key records, each also checked
// against its JSON Schema in docs/schemas.
func fileSurfaces(t *testing.T, paths config.Paths, key config.DaemonKey) []surface {
	t.Helper()
	var out []surface
	for _, f := range []struct{ name, path, schema string }{
		{"info file", paths.Info(key), "info-file.schema.json"},
		{"key record", paths.KeyRecord(key), "key-record.schema.json"},
		{"runtime key record", paths.RuntimeKeyRecord(key), "key-record.schema.json"},
	} {
		data, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		out = append(out, decode(t, f.name, data))
		validateAgainst(t, f.schema, f.path)
	}
	return out
}

// socketSurfaces are the daemon's routes and the CLI's --json documents.
func socketSurfaces(t *testing.T, e *Env, socket string) []surface {
	t.Helper()
	var out []surface
	for _, route := range []string{api.PathStatus, api.PathResolve + "?dir=" + url.QueryEscape(e.Work), api.PathNamespaces} {
		code, body := unixGet(t, socket, route)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", route, code, body)
		}
		out = append(out, decode(t, "GET "+route, body))
	}
	for _, args := range [][]string{{"status"}, {"daemons"}, {"resolve"}, {"ls"}} {
		r := e.MustOK(append([]string{"--json"}, args...)...)
		out = append(out, decode(t, "mcpx --json "+strings.Join(args, " "), []byte(r.Stdout)))
	}
	return out
}

// cacheSurfaces are the schema refs (each named by the serverHash it
// holds) and the snapshots they point to.
func cacheSurfaces(t *testing.T, paths config.Paths) []surface {
	t.Helper()
	refs, _ := filepath.Glob(filepath.Join(paths.Schemas(), "*.json"))
	if len(refs) == 0 {
		t.Fatalf("no schema refs under %s", paths.Schemas())
	}
	store, err := cache.OpenStore(paths.CAS())
	if err != nil {
		t.Fatal(err)
	}
	var out []surface
	for _, p := range refs {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, decode(t, "cache ref "+filepath.Base(p), data))
		var ref cache.Ref
		if err := json.Unmarshal(data, &ref); err != nil {
			t.Fatal(err)
		}
		if filepath.Base(p) != string(ref.ServerHash)+".json" {
			t.Errorf("cache ref %s names serverHash %s", p, ref.ServerHash)
		}
		snap, err := store.Get(ref.Digest)
		if err != nil {
			t.Fatalf("snapshot of %s: %v", p, err)
		}
		out = append(out, decode(t, "snapshot "+ref.Digest.Short(), snap))
	}
	return out
}

// identities collects every identity of the surfaces by name ("daemonKey"
// → "SURFACE.path=value" entries); a configHash anywhere is an error.
func identities(t *testing.T, surfaces []surface) map[string][]string {
	t.Helper()
	seen := map[string][]string{}
	for _, s := range surfaces {
		found := map[string][]string{}
		var forbidden []string
		digests(s.doc, "", found, &forbidden)
		for _, p := range forbidden {
			t.Errorf("%s carries configHash at %s", s.name, p)
		}
		for k, entries := range found {
			for _, en := range entries {
				seen[k] = append(seen[k], s.name+en)
			}
		}
	}
	return seen
}

// checkIdentities: every identity agrees with the truth, and every surface
// that should name the key and the schema hash does.
func checkIdentities(t *testing.T, seen map[string][]string, want identityTruth) {
	t.Helper()
	for _, en := range seen["daemonKey"] {
		if value(en) != want.key {
			t.Errorf("daemonKey %s, want %s (recomputed from %s)", en, want.key, want.file)
		}
	}
	for _, en := range seen["schemaHash"] {
		if value(en) != want.schema {
			t.Errorf("schemaHash %s, want %s (recomputed)", en, want.schema)
		}
	}
	for _, en := range seen["serverHash"] {
		if !slices.Contains(slices.Collect(maps.Values(want.server)), value(en)) {
			t.Errorf("serverHash %s is no server's Hash() (%v)", en, want.server)
		}
	}
	for id, names := range map[string][]string{
		"daemonKey":  {"info file", "key record", "GET /v1/status", "mcpx --json status", "mcpx --json daemons", "mcpx --json resolve"},
		"schemaHash": {"info file", "GET /v1/status", "mcpx --json resolve"},
	} {
		for _, name := range names {
			if !slices.ContainsFunc(seen[id], func(en string) bool { return strings.HasPrefix(en, name+".") }) {
				t.Errorf("%s has no %s", name, id)
			}
		}
	}
}

// checkStatusServerHashes: /v1/status names each namespace with its own
// server's hash, not just any.
func checkStatusServerHashes(t *testing.T, socket string, want map[string]string) {
	t.Helper()
	var st api.Status
	_, body := unixGet(t, socket, api.PathStatus)
	json.Unmarshal(body, &st)
	var got []string
	for _, ns := range st.Namespaces {
		got = append(got, ns.Name)
		if ns.ServerHash != want[ns.Name] {
			t.Errorf("/v1/status namespace %s: serverHash %s, want %s", ns.Name, ns.ServerHash, want[ns.Name])
		}
	}
	sort.Strings(got)
	if strings.Join(got, ",") != "demo,other" {
		t.Errorf("/v1/status namespaces %v", got)
	}
}

// validateAgainst validates the JSON file at path against docs/schemas/name.
func validateAgainst(t *testing.T, name, path string) {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sch, err := c.Compile(filepath.Join(repoRoot, "docs", "schemas", name))
	if err != nil {
		t.Fatalf("compile %s: %v", name, err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	if err := sch.Validate(doc); err != nil {
		t.Errorf("%s does not match %s: %v", path, name, err)
	}
}

// TestOverridesDoNotLeakIntoResolve: a daemon started with MCPX_SOCKET and
// MCPX_CONFIG set answers /v1/resolve for an unrelated directory with that
// directory's own key, configs and socket.
func TestOverridesDoNotLeakIntoResolve(t *testing.T) {
	e := NewEnv(t)
	own := e.WriteFile("own/.mcpx.json", fmt.Sprintf(`{"mcpServers": {"demo": {"command": %s}}}`, jsonString(fixtureBin)))
	override := filepath.Join(e.Root, "override.sock")
	e.Set("MCPX_CONFIG", own)
	e.Set("MCPX_SOCKET", override)
	e.MustOK("call", "demo.echo", "text=x")

	unrelated := filepath.Join(e.Root, "elsewhere", "deep")
	otherCfg := e.WriteFile("elsewhere/.mcp.json", fmt.Sprintf(`{"mcpServers": {"b": {"command": %s, "args": ["b"]}}}`, jsonString(fixtureBin)))
	if err := os.MkdirAll(unrelated, 0o755); err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(e.Root, "bare")
	os.MkdirAll(bare, 0o755)

	// Paths as the daemon sees them, minus the overrides.
	plain := e.getenv()
	paths, err := config.DefaultPaths(plain)
	if err != nil {
		t.Fatal(err)
	}
	ownKey := config.KeyOf([]string{own})
	info, err := config.ReadInfo(paths.Info(ownKey))
	if err != nil {
		t.Fatalf("info file of the override daemon: %v", err)
	}
	if info.Socket != override {
		t.Errorf("info file socket %s, want the override %s", info.Socket, override)
	}

	otherKey := config.KeyOf([]string{otherCfg})
	for dir, want := range map[string]api.Resolve{
		unrelated: {DaemonKey: string(otherKey), Configs: []string{otherCfg}, Socket: paths.Socket(otherKey), State: api.DaemonStopped},
		bare:      {DaemonKey: string(config.BuiltinKey), Configs: []string{}, Socket: paths.Socket(config.BuiltinKey), State: api.DaemonStopped},
		e.Work:    {DaemonKey: string(config.BuiltinKey), Configs: []string{}, Socket: paths.Socket(config.BuiltinKey), State: api.DaemonStopped},
	} {
		code, body := unixGet(t, override, api.PathResolve+"?dir="+url.QueryEscape(dir))
		if code != http.StatusOK {
			t.Fatalf("resolve %s: %d %s", dir, code, body)
		}
		var got api.Resolve
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if got.DaemonKey != want.DaemonKey || !slices.Equal(got.Configs, want.Configs) || got.Socket != want.Socket || got.State != want.State {
			t.Errorf("/v1/resolve %s = %+v\nwant key %s configs %v socket %s state %s", dir, got, want.DaemonKey, want.Configs, want.Socket, want.State)
		}
		// The CLI, with the same overrides in its environment, agrees.
		var cli api.Resolve
		e.JSON(&cli, "resolve", dir)
		if cli.DaemonKey != got.DaemonKey || cli.Socket != got.Socket || !slices.Equal(cli.Configs, got.Configs) || cli.SchemaHash != got.SchemaHash {
			t.Errorf("mcpx resolve %s = %+v, /v1/resolve = %+v", dir, cli, got)
		}
	}

	// The daemon's own key, asked by path: its override socket, running.
	code, body := unixGet(t, override, api.PathResolve+"?dir="+url.QueryEscape(filepath.Dir(own)))
	var self api.Resolve
	json.Unmarshal(body, &self)
	if code != http.StatusOK || self.State != api.DaemonRunning {
		t.Errorf("resolve of the config's own directory: %d %s", code, body)
	}

	// Errors are typed: relative → 400 directory_not_absolute, missing →
	// 400 directory_not_found, a broken config → 422 naming file:line:col.
	// (A syntax error: an unusable entry alone would only be that entry's
	// problem.)
	broken := e.WriteFile("broken/.mcp.json", "{\n  \"mcpServers\": {\n    \"x\": {\"command\": \"x\",,}\n  }\n}\n")
	for _, c := range []struct {
		dir    string
		status int
		code   string
		in     string
	}{
		{"relative/dir", 400, api.CodeDirectoryNotAbsolute, ""},
		{filepath.Join(e.Root, "missing"), 400, api.CodeDirectoryNotFound, ""},
		{filepath.Dir(broken), 422, api.CodeConfig, broken + ":3:"},
	} {
		status, body := unixGet(t, override, api.PathResolve+"?dir="+url.QueryEscape(c.dir))
		var ae api.Error
		json.Unmarshal(body, &ae)
		if status != c.status || ae.Code != c.code || !strings.Contains(ae.Error, c.in) {
			t.Errorf("resolve %s: %d %s, want %d %s containing %q", c.dir, status, body, c.status, c.code, c.in)
		}
	}
}
