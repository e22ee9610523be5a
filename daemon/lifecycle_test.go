package daemon

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

func TestRestartedDaemonAnswersFromCache(t *testing.T) {
	w := newWorld(t, "")
	started := filepath.Join(w.root, "started")
	w.writeConfig(fixtureConfig(started))
	d := w.start()
	d.mustOK(http.MethodPost, api.PathRefresh, api.RefreshRequest{Namespace: "fx"}, nil)
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(started)
	if err != nil || len(before) == 0 {
		t.Fatalf("the first daemon never started fx: %v", err)
	}

	d2 := w.start()
	ns := d2.namespaces()["fx"]
	if ns.State != api.StateCached || ns.Tools == 0 || ns.Live != 0 {
		t.Errorf("fx from cache: %+v", ns)
	}
	var tr api.ToolsResponse
	d2.mustOK(http.MethodGet, api.PathTools+"?ns=fx", nil, &tr)
	if len(tr.Tools) != ns.Tools {
		t.Errorf("tools from cache: %d, want %d", len(tr.Tools), ns.Tools)
	}
	var sr api.SearchResponse
	d2.mustOK(http.MethodGet, api.PathSearch+"?q=echo", nil, &sr)
	if len(sr.Results) == 0 {
		t.Error("search from cache found nothing")
	}
	var st api.Status
	d2.mustOK(http.MethodGet, api.PathStatus, nil, &st)
	if st.Live != 0 {
		t.Errorf("live = %d after discovery", st.Live)
	}
	after, _ := os.ReadFile(started)
	if string(after) != string(before) {
		t.Errorf("discovery on the restarted daemon started a server: %q → %q", before, after)
	}
}

func TestReloadKeepsUnchangedPools(t *testing.T) {
	cfgA := `{"mcpServers": {
  "a": {"command": "@FIXTURE@", "env": {"NS": "a"}},
  "b": {"command": "@FIXTURE@", "env": {"NS": "b"}}
}}`
	w := newWorld(t, cfgA)
	d := w.start()
	pid := func(ns string) string {
		t.Helper()
		_, resp, e := d.call(ns, "pid", "", false)
		if e != nil {
			t.Fatalf("pid %s: %+v", ns, e)
		}
		return text(t, resp)
	}
	pa, pb := pid("a"), pid("b")
	oldB := d.namespaces()["b"].ServerHash

	// b's definition changes, a's only in its mcpx block (not part of its
	// serverHash), and a new server c appears.
	w.writeConfig(`{"mcpServers": {
  "a": {"command": "@FIXTURE@", "env": {"NS": "a"}, "mcpx": {"description": "still a"}},
  "b": {"command": "@FIXTURE@", "env": {"NS": "b2"}},
  "c": {"command": "@FIXTURE@", "env": {"NS": "c"}}
}}`)
	eventually(t, "reload", func() bool {
		nss := d.namespaces()
		return len(nss) == 3 && nss["b"].ServerHash != oldB
	})
	if got := pid("a"); got != pa {
		t.Errorf("unchanged server a restarted: pid %s → %s", pa, got)
	}
	if got := pid("b"); got == pb {
		t.Errorf("changed server b kept pid %s", pb)
	}
	if d.namespaces()["a"].Description != "still a" {
		t.Error("a's new options not applied")
	}
	info, err := config.ReadInfo(w.paths.Info(d.key))
	if err != nil {
		t.Fatal(err)
	}
	if info.SchemaHash != string(w.config().SchemaHash()) {
		t.Errorf("info file schemaHash %s not rewritten to %s", info.SchemaHash, w.config().SchemaHash())
	}

	// A config that does not parse keeps the old one.
	w.writeConfig(`{"mcpServers": {`)
	if nss := d.namespaces(); len(nss) != 3 {
		t.Errorf("broken config replaced the old one: %v", nss)
	}
	if !strings.Contains(d.logs.String(), "keeping the previous configuration") {
		t.Error("reload failure not logged")
	}
}

func TestReloadOnSignalChannel(t *testing.T) {
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@"}}}`)
	reload := make(chan struct{})
	d := w.start(func(o *Options) { o.Reload = reload })
	w.writeConfig(`{"mcpServers": {"a": {"command": "@FIXTURE@"}, "b": {"command": "@FIXTURE@", "args": ["x"]}}}`)
	reload <- struct{}{}
	eventually(t, "reload on signal", func() bool {
		var nss api.NamespacesResponse
		st, _ := d.doNoStamp(http.MethodGet, api.PathNamespaces, &nss)
		return st == http.StatusOK && len(nss.Namespaces) == 2
	})
}

func TestIdleExit(t *testing.T) {
	w := newWorld(t, `{"mcpx": {"idleExit": "300ms"}, "mcpServers": {"a": {"command": "@FIXTURE@", "mcpx": {"idleTimeout": "200ms"}}}}`)
	d := w.start()
	d.mustOK(http.MethodGet, api.PathHealth, nil, nil)
	if _, _, e := d.call("a", "echo", `{"text":"x"}`, false); e != nil {
		t.Fatal(e)
	}
	select {
	case err := <-d.done:
		if err != nil {
			t.Fatalf("idle exit returned %v", err)
		}
		d.done <- err
	case <-time.After(20 * time.Second):
		t.Fatal("daemon did not exit when idle")
	}
	if !strings.Contains(d.logs.String(), "idle for") {
		t.Errorf("log does not say why it stopped:\n%s", d.logs.String())
	}
	if _, err := os.Stat(w.paths.Info(d.key)); !os.IsNotExist(err) {
		t.Errorf("info file left after exit: %v", err)
	}
}

func TestInfoFile(t *testing.T) {
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@"}}}`)
	d := w.start()
	d.mustOK(http.MethodGet, api.PathHealth, nil, nil)
	path := w.paths.Info(d.key)
	info, err := config.ReadInfo(path)
	if err != nil {
		t.Fatal(err)
	}
	want := config.InfoFile{DaemonKey: string(d.key), SchemaHash: string(w.config().SchemaHash()), Socket: d.sock,
		Pid: os.Getpid(), Manager: "direct", Configs: []string{w.cfgPath}}
	if info.DaemonKey != want.DaemonKey || info.SchemaHash != want.SchemaHash || info.Socket != want.Socket ||
		info.Pid != want.Pid || info.Manager != want.Manager || len(info.Configs) != 1 || info.Configs[0] != want.Configs[0] ||
		info.StartedAt.IsZero() || info.Version == "" || !info.Running() {
		t.Errorf("info = %+v, want %+v", info, want)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("info file mode: %v %v", fi.Mode(), err)
	}
	if fi, err := os.Stat(d.sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode: %v %v", fi.Mode(), err)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("info file after exit: %v", err)
	}
}

// An info file removed right after a request's check, with no request
// after it (`mcpx status` and `mcpx stop` send none), is written again by
// the socket watch (#18 row 11).
func TestInfoFileRestoredWithoutARequest(t *testing.T) {
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@"}}}`)
	d := w.start(func(o *Options) { o.SocketCheck = 50 * time.Millisecond })
	d.mustOK(http.MethodGet, api.PathHealth, nil, nil)
	path := w.paths.Info(d.key)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the removed info file to be written again", func() bool {
		info, err := config.ReadInfo(path)
		return err == nil && info.Pid == os.Getpid() && info.Socket == d.sock
	})
	if !strings.Contains(d.logs.String(), "was removed; rewrote it") {
		t.Errorf("the log does not say the info file was rewritten:\n%s", d.logs.String())
	}
}

func TestShutdownRoute(t *testing.T) {
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@"}}}`)
	d := w.start()
	// A request to replace another build (one that already handed its
	// socket to this daemon) leaves this one running.
	d.mustOK(http.MethodPost, api.PathShutdown, api.ShutdownRequest{Binary: "/old/mcpxd:1:2"}, nil)
	select {
	case err := <-d.done:
		t.Fatalf("a shutdown naming another build stopped the daemon: %v", err)
	case <-time.After(500 * time.Millisecond):
	}
	d.mustOK(http.MethodGet, api.PathHealth, nil, nil)
	d.mustOK(http.MethodPost, api.PathShutdown, nil, nil)
	select {
	case err := <-d.done:
		d.done <- err
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("shutdown did not stop the daemon")
	}
	if _, err := net.Dial("unix", d.sock); err == nil {
		t.Error("socket still answers after shutdown")
	}
}

func TestResolve(t *testing.T) {
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@"}}}`)
	// The daemon's own overrides must not leak into answers about other
	// directories.
	w.env["MCPX_SOCKET"] = filepath.Join(w.root, "override.sock")
	w.env["MCPX_CONFIG"] = w.cfgPath
	d := w.start()

	other := filepath.Join(w.root, "other", "deep")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	otherCfg := filepath.Join(w.root, "other", ".mcp.json")
	if err := os.WriteFile(otherCfg, []byte(`{"mcpServers": {"o": {"command": "x"}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var res api.Resolve
	d.mustOK(http.MethodGet, api.PathResolve+"?dir="+q(other), nil, &res)
	key := config.KeyOf([]string{otherCfg})
	if res.Dir != other || res.DaemonKey != string(key) || len(res.Configs) != 1 || res.Configs[0] != otherCfg ||
		res.Socket != w.paths.Socket(key) || res.State != api.DaemonStopped || res.SchemaHash == "" {
		t.Errorf("resolve other = %+v (key %s)", res, key)
	}

	d.mustOK(http.MethodGet, api.PathResolve+"?dir="+q(w.project), nil, &res)
	if res.DaemonKey != string(d.key) || res.Socket != d.sock || res.State != api.DaemonRunning || res.Manager != "direct" {
		t.Errorf("resolve own = %+v", res)
	}

	for _, c := range []struct {
		dir, code string
		status    int
	}{
		{"relative/dir", api.CodeDirectoryNotAbsolute, http.StatusBadRequest},
		{filepath.Join(w.root, "missing"), api.CodeDirectoryNotFound, http.StatusBadRequest},
		{otherCfg, api.CodeDirectoryNotFound, http.StatusBadRequest},
	} {
		if code, e := d.do(http.MethodGet, api.PathResolve+"?dir="+q(c.dir), nil, nil); code != c.status || e.Code != c.code {
			t.Errorf("resolve %s: %d %+v", c.dir, code, e)
		}
	}

	if err := os.WriteFile(otherCfg, []byte("{\n  \"mcpServers\": {,\n}"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, e := d.do(http.MethodGet, api.PathResolve+"?dir="+q(other), nil, nil)
	if code != http.StatusUnprocessableEntity || e.Code != api.CodeConfig || !strings.Contains(e.Error, otherCfg+":2:") {
		t.Errorf("resolve broken config: %d %+v", code, e)
	}
}

func TestSdNotify(t *testing.T) {
	dir := t.TempDir()
	addr := &net.UnixAddr{Name: filepath.Join(dir, "notify"), Net: "unixgram"}
	conn, err := net.ListenUnixgram("unixgram", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", addr.Name)

	msgs := make(chan string, 100)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				close(msgs)
				return
			}
			msgs <- string(buf[:n])
		}
	}()
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@"}}}`)
	d := w.start()
	next := func(want string) string {
		t.Helper()
		timeout := time.After(20 * time.Second)
		for {
			select {
			case m := <-msgs:
				if strings.Contains(m, want) {
					return m
				}
			case <-timeout:
				t.Fatalf("no sd_notify message with %q", want)
			}
		}
	}
	ready := next("READY=1")
	if !strings.Contains(ready, "STATUS=1 servers, 0 live, 0 calls") {
		t.Errorf("ready message = %q", ready)
	}
	if _, _, e := d.call("a", "echo", `{"text":"x"}`, false); e != nil {
		t.Fatal(e)
	}
	next("STATUS=1 servers, 1 live, 1 calls")
	d.stop()
	next("STOPPING=1")
	// The stop may last as long as a call in flight may: systemd is told,
	// beyond its TimeoutStopSec.
	ext := next("EXTEND_TIMEOUT_USEC=")
	usec, err := strconv.ParseInt(strings.TrimPrefix(ext, "EXTEND_TIMEOUT_USEC="), 10, 64)
	if want := config.DefaultStartTimeout + config.DefaultCallTimeout; err != nil || time.Duration(usec)*time.Microsecond < want {
		t.Errorf("%q: want at least startTimeout + callTimeout (%s)", ext, want)
	}
}

// A call that timed out on a server stuck in the tool gets its instance
// replaced, which the namespaces and the STATUS= line count.
func TestHungReplacementCounted(t *testing.T) {
	dir := t.TempDir()
	addr := &net.UnixAddr{Name: filepath.Join(dir, "notify"), Net: "unixgram"}
	conn, err := net.ListenUnixgram("unixgram", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	t.Setenv("NOTIFY_SOCKET", addr.Name)
	statuses := make(chan string, 100)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			statuses <- string(buf[:n])
		}
	}()
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@", "env": {"FIXTURE_HANG_TOOL": "time"}, "mcpx": {"callTimeout": "1s"}}}}`)
	d := w.start()
	if code, _, e := d.call("a", "time", "", false); e == nil || code != http.StatusGatewayTimeout {
		t.Fatalf("the hung call: %d %+v, want a timeout", code, e)
	}
	eventually(t, "the replacement to be counted", func() bool {
		var nss api.NamespacesResponse
		d.mustOK(http.MethodGet, api.PathNamespaces, nil, &nss)
		return len(nss.Namespaces) == 1 && nss.Namespaces[0].Replaced == 1
	})
	if _, resp, e := d.call("a", "echo", `{"text":"fresh"}`, false); e != nil || text(t, resp) != "fresh" {
		t.Fatalf("the call after: %+v", e)
	}
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m := <-statuses:
			if strings.Contains(m, "STATUS=") && strings.Contains(m, ", 1 hung replaced") {
				return
			}
		case <-timeout:
			t.Fatal("no STATUS= line counting the replaced instance")
		}
	}
}

// A call in flight at SIGTERM finishes within its own callTimeout, though
// that is longer than the shutdown grace.
func TestShutdownWaitsForCallsLongerThanTheGrace(t *testing.T) {
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@", "mcpx": {"callTimeout": "30s"}}}}`)
	d := w.start() // ShutdownGrace 5s
	d.mustOK(http.MethodPost, api.PathRefresh, nil, nil)
	got := make(chan *api.Error, 1)
	var resp *api.CallResponse
	go func() {
		var e *api.Error
		_, resp, e = d.call("a", "slow", `{"seconds":7}`, false)
		got <- e
	}()
	eventually(t, "the call in flight", func() bool {
		var st api.Status
		d.mustOK(http.MethodGet, api.PathStatus, nil, &st)
		return st.Calls == 1
	})
	d.cancel() // SIGTERM
	if e := <-got; e != nil {
		t.Fatalf("a call longer than the shutdown grace failed on shutdown: %+v", e)
	}
	if s := text(t, resp); s != "slept 7 seconds" {
		t.Errorf("slow = %q", s)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
}

func TestListChangedRefetches(t *testing.T) {
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@"}}}`)
	d := w.start()
	if _, _, e := d.call("a", "add_tool", `{"name":"brand_new"}`, false); e != nil {
		t.Fatal(e)
	}
	eventually(t, "the new tool in the cache", func() bool {
		var tr api.ToolsResponse
		d.mustOK(http.MethodGet, api.PathTools+"?ns=a", nil, &tr)
		for _, tool := range tr.Tools {
			if tool.Name == "brand_new" {
				return true
			}
		}
		return false
	})
}

func TestShutdownLetsCallsInFlightFinish(t *testing.T) {
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@"}}}`)
	d := w.start()
	d.mustOK(http.MethodPost, api.PathRefresh, nil, nil)
	type result struct {
		resp *api.CallResponse
		e    *api.Error
	}
	got := make(chan result, 1)
	go func() {
		_, resp, e := d.call("a", "slow", `{"seconds":0.5}`, false)
		got <- result{resp, e}
	}()
	eventually(t, "the call in flight", func() bool {
		var st api.Status
		d.mustOK(http.MethodGet, api.PathStatus, nil, &st)
		return st.Calls == 1
	})
	d.cancel() // SIGTERM
	r := <-got
	if r.e != nil {
		t.Fatalf("call in flight failed on shutdown: %+v", r.e)
	}
	if s := text(t, r.resp); !strings.HasPrefix(s, "slept") {
		t.Errorf("slow = %q", s)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
}

func TestBindRemovesOnlyStaleSockets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	ln, err := bind(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bind(path); !errors.Is(err, errSocketInUse) {
		t.Fatalf("bind over a live socket: %v", err)
	}
	// A socket file nobody serves (a crashed daemon) is replaced.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	ln, err = bind(path)
	if err != nil {
		t.Fatalf("bind over a stale socket: %v", err)
	}
	ln.Close()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := bind(path); err == nil {
		t.Fatal("bind replaced a regular file")
	}
}

func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{fmt.Errorf("daemon k: %w: bad", ErrConfig), 2},
		{&config.ParseError{File: "f", Line: 1, Col: 2, Msg: "x", Err: config.ErrSyntax}, 2},
		{errors.New("bind: address in use"), 1},
	} {
		if got := ExitCode(c.err); got != c.want {
			t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

func TestMainBindsAndExits(t *testing.T) {
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@"}}}`)
	for k, v := range w.env {
		t.Setenv(k, v)
	}
	// Without a key record the daemon cannot know its configs: exit 2.
	err := Main(context.Background(), "0123456789ab")
	if ExitCode(err) != 2 {
		t.Fatalf("Main without key record: %v (exit %d)", err, ExitCode(err))
	}

	cfg := w.config()
	key := cfg.DaemonKey()
	if err := os.MkdirAll(w.paths.KeysDir(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := config.WriteJSONAtomic(w.paths.KeyRecord(key), config.KeyRecord{DaemonKey: string(key), Configs: cfg.Sources}, 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(w.root, "override.sock")
	t.Setenv("MCPX_SOCKET", sock)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Main(ctx, key) }()
	eventually(t, "Main to write its info file", func() bool {
		info, err := config.ReadInfo(w.paths.Info(key))
		return err == nil && info.Socket == sock && info.Manager == "direct"
	})
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket: %v %v", fi, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Main: %v", err)
	}
	if _, err := os.Stat(sock); !os.IsNotExist(err) {
		t.Errorf("socket left behind: %v", err)
	}
}

func TestServersGetTheCapturedEnvironmentOnly(t *testing.T) {
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@", "env": {"FROM_VAR": "${TEST_TOKEN}"}}}}`)
	w.env["TEST_TOKEN"] = "captured-1"
	// The daemon's own environment has other values: never used.
	t.Setenv("TEST_TOKEN", "daemon-own")
	t.Setenv("MCPX_TEST_DAEMON_ONLY", "leak")
	d := w.start()
	env := func(name string) string {
		t.Helper()
		_, resp, e := d.call("a", "env", `{"name":"`+name+`"}`, false)
		if e != nil {
			t.Fatalf("env %s: %+v", name, e)
		}
		return text(t, resp)
	}
	if got := env("FROM_VAR"); got != "captured-1" {
		t.Errorf("${TEST_TOKEN} expanded to %q, want the captured value", got)
	}
	if got := env("MCPX_TEST_DAEMON_ONLY"); got != "" {
		t.Errorf("the daemon's own environment leaked into the server: %q", got)
	}
	// The client captures a new value: the file is read again and the
	// server restarted with it.
	captured := config.CaptureEnv(w.config(), w.getenv)
	captured["TEST_TOKEN"] = "captured-2"
	if _, err := config.WriteEnvFile(w.paths.EnvFile(d.key), captured); err != nil {
		t.Fatal(err)
	}
	if got := env("FROM_VAR"); got != "captured-2" {
		t.Errorf("after the env file changed, ${TEST_TOKEN} = %q", got)
	}
}

// The daemon itself refuses the servers of an untrusted project file
// (nothing a client does can start them) and lists them as untrusted.
func TestDaemonEnforcesTrust(t *testing.T) {
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@"}}}`)
	if _, err := config.TrustStoreAt(w.paths.State).Untrust(w.cfgPath); err != nil {
		t.Fatal(err)
	}
	d := w.start()
	for _, req := range []struct{ method, path string }{
		{http.MethodGet, api.PathSchema + "?ns=a"},
		{http.MethodPost, api.PathRefresh},
	} {
		var body any
		if req.method == http.MethodPost {
			body = api.RefreshRequest{Namespace: "a"}
		}
		status, e := d.do(req.method, req.path, body, nil)
		if status != http.StatusForbidden || e == nil || e.Code != api.CodeUntrusted {
			t.Errorf("%s %s: %d %+v", req.method, req.path, status, e)
		}
	}
	status, _, e := d.call("a", "echo", `{"text": "x"}`, true)
	if status != http.StatusForbidden || e == nil || e.Code != api.CodeUntrusted {
		t.Fatalf("call: %d %+v", status, e)
	}
	if ns := d.namespaces()["a"]; ns.State != api.StateUntrusted || ns.Live != 0 {
		t.Errorf("namespace: %+v", ns)
	}
	// Trusting it applies on the next request (the stamp changed).
	if _, err := config.TrustStoreAt(w.paths.State).TrustFile(w.cfgPath); err != nil {
		t.Fatal(err)
	}
	if status, _, e := d.call("a", "echo", `{"text": "x"}`, true); status != http.StatusOK {
		t.Fatalf("call after trust: %d %+v", status, e)
	}
}
