package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	hostfmt "github.com/mcpx-dev/mcpx/config/hosts"
	"github.com/mcpx-dev/mcpx/internal/owner"
)

func TestRoute(t *testing.T) {
	for path, want := range map[string]string{"/mcp": "", "/mcp/": "", "/mcp/github": "github", "/mcp/my%20ns/": "my ns"} {
		if ns, ok := route(path); !ok || ns != want {
			t.Errorf("route(%q) = %q %v, want %q", path, ns, ok, want)
		}
	}
	for _, path := range []string{"/", "/mcpx", "/sse", "/mcp/a/b", "/mcp//"} {
		if ns, ok := route(path); ok {
			t.Errorf("route(%q) = %q, want no route", path, ns)
		}
	}
}

func TestLoopbackOrigin(t *testing.T) {
	for _, o := range []string{"http://localhost:5173", "http://127.0.0.1", "https://[::1]:8443", "http://127.9.9.9:1"} {
		if !loopbackOrigin(o) {
			t.Errorf("%s refused", o)
		}
	}
	for _, o := range []string{"https://evil.example", "http://localhost.evil.example", "null", "file://", "http://10.0.0.1", "http://127.0.0.1.nip.io"} {
		if loopbackOrigin(o) {
			t.Errorf("%s accepted", o)
		}
	}
}

func TestKeyChecker(t *testing.T) {
	k := newKeyChecker("s3cret-key-of-some-length")
	req := func(header, query string) *http.Request {
		r := httptest.NewRequest("POST", "/mcp"+query, nil)
		if header != "" {
			r.Header.Set("Authorization", header)
		}
		return r
	}
	for _, r := range []*http.Request{req("Bearer s3cret-key-of-some-length", ""), req("bearer s3cret-key-of-some-length", ""),
		req("", "?key=s3cret-key-of-some-length")} {
		if !k.ok(r) {
			t.Errorf("%v %s refused", r.Header, r.URL)
		}
	}
	for _, r := range []*http.Request{req("", ""), req("Bearer ", ""), req("Bearer s3cret", ""), req("Basic s3cret-key-of-some-length", ""),
		req("", "?key="), req("", "?key=s3cret-key-of-some-lengthX"), req("Bearer wrong", "?key=s3cret-key-of-some-length")} {
		if k.ok(r) {
			t.Errorf("%v %s accepted", r.Header, r.URL)
		}
	}
	if newKeyChecker("").ok(req("", "")) {
		t.Error("an empty key matched a request without one")
	}
}

func TestServeKeyFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "mcpx")
	path := filepath.Join(dir, "serve.key")
	k1, err := serveKey(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 || len(k1) < 40 {
		t.Fatalf("key %q, file %v %v", k1, fi.Mode(), err)
	}
	if k2, err := serveKey(path); err != nil || k2 != k1 {
		t.Fatalf("second read %q %v, want the same key", k2, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("left behind: %v", ents)
	}
	// A key others could write (or read) is refused, never used.
	os.Chmod(path, 0o666)
	if _, err := serveKey(path); !errors.Is(err, owner.ErrUnsafe) {
		t.Fatalf("a 0666 key: %v", err)
	}
	os.Remove(path)
	os.Symlink("/etc/hostname", path)
	if _, err := serveKey(path); !errors.Is(err, owner.ErrUnsafe) {
		t.Fatalf("a symlinked key: %v", err)
	}
}

// The gate in front of every path: Origin, key, body bound, route.
func TestHTTPGate(t *testing.T) {
	s := &mcpxServer{opts: Options{HTTP: "127.0.0.1:1"}, cat: &catalog{served: []string{"a"}}}
	h := &httpHandler{s: s, key: newKeyChecker("the-key-0123456789"), keyPath: "/k/serve.key", maxBody: 16}
	do := func(path, origin, auth string, body io.Reader) (int, string) {
		r := httptest.NewRequest("POST", path, body)
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	const key = "Bearer the-key-0123456789"
	if code, body := do("/mcp", "", "", strings.NewReader("{}")); code != 401 || !strings.Contains(body, "/k/serve.key") {
		t.Errorf("no key: %d %s", code, body)
	}
	if code, _ := do("/mcp", "https://evil.example", key, strings.NewReader("{}")); code != 403 {
		t.Errorf("foreign origin: %d", code)
	}
	if code, _ := do("/mcp", "", key, strings.NewReader(strings.Repeat("x", 17))); code != 413 {
		t.Errorf("17 bytes over a bound of 16: %d", code)
	}
	// Chunked (no length): read up to the bound and refused.
	if code, _ := do("/mcp", "", key, io.MultiReader(strings.NewReader(strings.Repeat("x", 10)), strings.NewReader(strings.Repeat("y", 10)))); code != 413 {
		t.Errorf("20 bytes without a length: %d", code)
	}
	if code, body := do("/mcp/b", "", key, strings.NewReader("{}")); code != 404 || !strings.Contains(body, `"b"`) || !strings.Contains(body, "served: a") {
		t.Errorf("unknown namespace: %d %s", code, body)
	}
	if code, _ := do("/other", "", key, nil); code != 404 {
		t.Errorf("other path: %d", code)
	}
}

// Each host's snippet, read back by mcpx's own reader for that host
// (config/hosts), names the same stdio command or URL and key header.
func TestPrintConfigReadsBack(t *testing.T) {
	key := func() (string, error) { return "k3y", nil }
	for _, h := range hostNames() {
		reader := hostfmt.ByName(h)
		if reader == nil {
			t.Fatalf("config/hosts has no %s", h)
		}
		for _, p := range []printRequest{
			{host: h, args: []string{"--ns", "github"}, ns: "github", key: key},
			{host: h, args: []string{"--http", "127.0.0.1:8765", "--ns", "github"}, http: "127.0.0.1:8765", ns: "github", key: key},
			{host: h, args: []string{"--http", "127.0.0.1:8765"}, http: "127.0.0.1:8765", key: key},
		} {
			out, err := printConfig(p)
			if h == "claude-desktop" && p.http != "" {
				if err == nil {
					t.Errorf("%s with --http: %s", h, out)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s %v: %v", h, p.args, err)
			}
			doc := map[string]any{}
			if h == "codex" {
				err = toml.Unmarshal([]byte(out), &doc)
			} else {
				err = json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &doc)
			}
			if err != nil {
				t.Fatalf("%s %v: %v\n%s", h, p.args, err, out)
			}
			f := reader.Read(doc, &hostfmt.Context{Path: "/x/" + h, Level: hostfmt.User, Home: "/home/u"})
			if len(f.Entries) != 1 {
				t.Fatalf("%s %v: %d entries\n%s", h, p.args, len(f.Entries), out)
			}
			e := f.Entries[0]
			wantName := "mcpx"
			if p.ns != "" {
				wantName = p.ns
			}
			if e.Name != wantName || e.Problem != "" {
				t.Errorf("%s %v: entry %+v", h, p.args, e)
			}
			if p.http == "" {
				if e.Command != "mcpx" || strings.Join(e.Args, " ") != "serve "+strings.Join(p.args, " ") {
					t.Errorf("%s %v: runs %s %v", h, p.args, e.Command, e.Args)
				}
				continue
			}
			wantURL := "http://127.0.0.1:8765/mcp"
			if p.ns != "" {
				wantURL += "/" + p.ns
			}
			if e.URL != wantURL || e.Transport != hostfmt.HTTP || e.Headers["Authorization"] != "Bearer k3y" {
				t.Errorf("%s %v: url %s transport %s headers %v\n%s", h, p.args, e.URL, e.Transport, e.Headers, out)
			}
			if !strings.Contains(out, "mcpx serve --http 127.0.0.1:8765") {
				t.Errorf("%s %v: the snippet does not say what to run:\n%s", h, p.args, out)
			}
		}
	}
	if _, err := printConfig(printRequest{host: "cursor", http: "127.0.0.1:0"}); err == nil {
		t.Error("--print-config with port 0 accepted")
	}
}

func TestMainPrintConfigMakesTheKey(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	var out, errb bytes.Buffer
	if code := Main(context.Background(), []string{"--print-config", "vscode", "--http", "127.0.0.1:8765"}, nil, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	key, err := os.ReadFile(filepath.Join(state, "mcpx", "serve.key"))
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		t.Fatal("no key made")
	}
	if !strings.Contains(out.String(), "Bearer "+strings.TrimSpace(string(key))) {
		t.Errorf("snippet without the key:\n%s", out.String())
	}
	out.Reset()
	if code := Main(context.Background(), []string{"--print-config", "vscode", "--http", "127.0.0.1:8765", "--no-key"}, nil, &out, &errb); code != 0 ||
		strings.Contains(out.String(), "Authorization") {
		t.Errorf("--no-key snippet (exit %d):\n%s", code, out.String())
	}
}
