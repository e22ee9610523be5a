package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// fixtureBin is the mcpx-fixture MCP server, built once by TestMain.
var fixtureBin string

func TestMain(m *testing.M) {
	if sock := os.Getenv(peerClientEnv); sock != "" {
		peerClient(sock)
		return
	}
	dir, err := os.MkdirTemp("", "mcpx-daemon-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if fixtureBin, err = testkit.Build(dir, testkit.Fixture); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// world is a temporary HOME/XDG tree with one project config.
type world struct {
	t       testing.TB
	root    string
	project string // directory holding .mcpx.json
	cfgPath string
	env     map[string]string // the daemon's own environment
	paths   config.Paths
	sock    string // socket path instead of paths.Socket
	// wrapLn, when set, wraps the listener start hands to Run.
	wrapLn func(net.Listener) net.Listener
}

func newWorld(t testing.TB, cfgJSON string) *world {
	t.Helper()
	root := t.TempDir()
	w := &world{t: t, root: root, project: filepath.Join(root, "project")}
	w.env = map[string]string{
		"HOME":            filepath.Join(root, "home"),
		"XDG_RUNTIME_DIR": filepath.Join(root, "run"),
		"XDG_STATE_HOME":  filepath.Join(root, "state"),
		"XDG_CACHE_HOME":  filepath.Join(root, "cache"),
		"XDG_CONFIG_HOME": filepath.Join(root, "config"),
		"PATH":            os.Getenv("PATH"),
	}
	for _, d := range []string{w.project, w.env["HOME"]} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(w.env["XDG_RUNTIME_DIR"], 0o700); err != nil {
		t.Fatal(err)
	}
	var err error
	if w.paths, err = config.DefaultPaths(w.getenv); err != nil {
		t.Fatal(err)
	}
	if err := w.paths.EnsureRuntime(); err != nil {
		t.Fatal(err)
	}
	w.cfgPath = filepath.Join(w.project, ".mcpx.json")
	w.writeConfig(cfgJSON)
	return w
}

func (w *world) getenv(k string) string { return w.env[k] }

// writeConfig replaces the project config; @FIXTURE@ in it is replaced by
// the fixture binary's path.
func (w *world) writeConfig(cfgJSON string) {
	w.t.Helper()
	cfgJSON = strings.ReplaceAll(cfgJSON, "@FIXTURE@", fixtureBin)
	if err := os.WriteFile(w.cfgPath, []byte(cfgJSON), 0o644); err != nil {
		w.t.Fatal(err)
	}
	// The project file is the user's own: trusted, as `mcpx trust` would.
	if _, err := config.TrustStoreAt(w.paths.State).TrustFile(w.cfgPath); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) config() *config.Config {
	w.t.Helper()
	cfg, err := w.load()
	if err != nil {
		w.t.Fatal(err)
	}
	return cfg
}

func (w *world) load() (*config.Config, error) {
	return config.LoadWith([]string{w.cfgPath}, config.LoadOptions{Self: fixtureBin, Getenv: w.getenv})
}

// daemon is one Run in a goroutine and a client for it.
type testDaemon struct {
	t      testing.TB
	w      *world
	key    config.DaemonKey
	sock   string
	http   *http.Client
	cancel context.CancelFunc
	done   chan error
	logs   *syncBuffer
}

type runOpt func(*Options)

// start runs a daemon for the world's config, with the captured
// environment file written as a client would.
func (w *world) start(opts ...runOpt) *testDaemon {
	w.t.Helper()
	cfg := w.config()
	key := cfg.DaemonKey()
	captured := config.CaptureEnv(cfg, w.getenv)
	for k, v := range w.env {
		if strings.HasPrefix(k, "FIXTURE_") || strings.HasPrefix(k, "TEST_") {
			captured[k] = v
		}
	}
	if _, err := config.WriteEnvFile(w.paths.EnvFile(key), captured); err != nil {
		w.t.Fatal(err)
	}
	if err := w.paths.EnsureSocketDir(key); err != nil {
		w.t.Fatal(err)
	}
	sock := w.paths.Socket(key)
	if w.sock != "" {
		sock = w.sock
	}
	ln, err := bind(sock)
	if err != nil {
		w.t.Fatal(err)
	}
	if w.wrapLn != nil {
		ln = w.wrapLn(ln)
	}
	d := &testDaemon{t: w.t, w: w, key: key, sock: sock, done: make(chan error, 1), logs: &syncBuffer{}}
	o := Options{
		Key: key, Config: cfg, Paths: w.paths, Manager: "direct", Self: fixtureBin,
		Getenv: w.getenv, Log: d.logs, ShutdownGrace: 5 * time.Second,
	}
	for _, f := range opts {
		f(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d.cancel = cancel
	go func() { d.done <- Run(ctx, ln, o) }()
	d.http = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dl net.Dialer
			return dl.DialContext(ctx, "unix", sock)
		},
	}}
	w.t.Cleanup(func() { d.stop() })
	return d
}

// stop cancels Run and waits for it.
func (d *testDaemon) stop() error {
	d.cancel()
	select {
	case err := <-d.done:
		d.done <- err // later stops see the same result
		if d.t.Failed() {
			d.t.Logf("daemon log:\n%s", d.logs.String())
		}
		return err
	case <-time.After(30 * time.Second):
		d.t.Fatalf("daemon did not stop; log:\n%s", d.logs.String())
		return nil
	}
}

// do sends a request; body may be nil. It decodes a 200 answer into out,
// or any other answer into *api.Error, and returns the status.
func (d *testDaemon) do(method, path string, body any, out any) (int, *api.Error) {
	d.t.Helper()
	var rd io.Reader
	if body != nil {
		if s, ok := body.(string); ok {
			rd = strings.NewReader(s)
		} else {
			b, err := json.Marshal(body)
			if err != nil {
				d.t.Fatal(err)
			}
			rd = bytes.NewReader(b)
		}
	}
	req, err := http.NewRequest(method, "http://mcpx"+path, rd)
	if err != nil {
		d.t.Fatal(err)
	}
	// As a client does: the stamp of the config it loads now (a config
	// that does not load sends one no daemon holds).
	stamp := "unloadable"
	if cfg, err := d.w.load(); err == nil {
		stamp = cfg.Stamp
	}
	req.Header.Set(api.HeaderConfigStamp, stamp)
	resp, err := d.http.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v\nlog:\n%s", method, path, err, d.logs.String())
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		d.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		var e api.Error
		if err := json.Unmarshal(data, &e); err != nil {
			d.t.Fatalf("%s %s: status %d, body %q", method, path, resp.StatusCode, data)
		}
		return resp.StatusCode, &e
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = data
		return resp.StatusCode, nil
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			d.t.Fatalf("%s %s: decode %q: %v", method, path, data, err)
		}
	}
	return resp.StatusCode, nil
}

// mustOK is do that fails the test on any non-200 answer.
func (d *testDaemon) mustOK(method, path string, body any, out any) {
	d.t.Helper()
	if code, e := d.do(method, path, body, out); e != nil {
		d.t.Fatalf("%s %s: %d %+v", method, path, code, *e)
	}
}

func (d *testDaemon) call(ns, tool string, args string, confirmed bool) (int, *api.CallResponse, *api.Error) {
	d.t.Helper()
	req := api.CallRequest{Namespace: ns, Tool: tool, Confirmed: confirmed}
	if args != "" {
		req.Arguments = json.RawMessage(args)
	}
	var resp api.CallResponse
	code, e := d.do(http.MethodPost, api.PathCall, req, &resp)
	if e != nil {
		return code, nil, e
	}
	return code, &resp, nil
}

// text is the first text content of a call result.
func text(t *testing.T, r *api.CallResponse) string {
	t.Helper()
	var res struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Content) == 0 {
		t.Fatalf("result %s: %v", r.Result, err)
	}
	return res.Content[0].Text
}

func (d *testDaemon) namespaces() map[string]api.Namespace {
	d.t.Helper()
	var resp api.NamespacesResponse
	d.mustOK(http.MethodGet, api.PathNamespaces, nil, &resp)
	out := map[string]api.Namespace{}
	for _, ns := range resp.Namespaces {
		out[ns.Name] = ns
	}
	return out
}

// eventually polls cond until it holds (bounded at a generous 20 s).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, what, cond)
}

func q(v string) string { return url.QueryEscape(v) }

// syncBuffer is a goroutine-safe log sink.
type syncBuffer = testkit.SyncBuffer

var errTestPeer = errors.New("no credentials")

// doNoStamp is a GET without a config stamp (a client that does not
// send one): the daemon answers from the config it holds.
func (d *testDaemon) doNoStamp(method, path string, out any) (int, error) {
	req, err := http.NewRequest(method, "http://mcpx"+path, nil)
	if err != nil {
		return 0, err
	}
	resp, err := d.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, nil
	}
	return resp.StatusCode, json.NewDecoder(resp.Body).Decode(out)
}
