package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Annotation keys are exact: a case-variant readOnlyHint beside
// destructiveHint does not make a destructive tool read-only (issue #13
// item 11).
func TestCaseVariantAnnotationsNeedConfirmation(t *testing.T) {
	e := NewEnv(t)
	tools := `[{"name":"wipe","description":"wipes","inputSchema":{"type":"object"},` +
		`"annotations":{"destructiveHint":true,"ReadOnlyHint":true}}]`
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "fx": {"command": %s, "env": {"FIXTURE_RAW_TOOLS": %s}}
}}`, jsonString(fixtureBin), jsonString(tools)))
	r := e.Mcpx("call", "fx.wipe")
	if r.Code != 4 || !strings.Contains(r.Stderr, "--yes") {
		t.Fatalf("want exit 4 naming --yes\n%s", r)
	}
	if r := e.MustOK("call", "--yes", "fx.wipe"); !strings.Contains(r.Stdout, "ran wipe") {
		t.Fatalf("confirmed call:\n%s", r)
	}
}

// An info file left by a daemon that died names a pid the kernel may have
// given to another process: `mcpx stop` must leave that process alone and
// `status` must not call it running (item 1).
func TestStopLeavesAReusedPidAlone(t *testing.T) {
	e := NewEnv(t)
	sleep := exec.Command("sleep", "120")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleep.Process.Kill()
	exited := make(chan struct{})
	go func() { sleep.Wait(); close(exited) }()
	pid := sleep.Process.Pid
	// No config anywhere: the built-in default's key.
	info, _ := json.Marshal(map[string]any{
		"daemonKey": "builtin", "socket": filepath.Join(e.Run, "mcpx", "builtin.sock"), "pid": pid,
		"manager": "direct", "configs": []string{}, "version": "dev", "startedAt": time.Now().UTC(),
	})
	if err := os.MkdirAll(filepath.Join(e.Run, "mcpx"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.Run, "mcpx", "builtin.json"), info, 0o600); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Service struct {
			State string `json:"state"`
		} `json:"service"`
	}
	e.JSON(&st, "status")
	if st.Service.State == "running" {
		t.Fatalf("status calls pid %d (a sleep) the running daemon", pid)
	}
	e.MustOK("stop")
	select {
	case <-exited:
		t.Fatalf("mcpx stop killed the unrelated process %d", pid)
	case <-time.After(500 * time.Millisecond):
	}
}

// daemonPids lists the marked processes that are mcpx daemons.
func (e *Env) daemonPids() []string {
	var out []string
	for _, c := range e.MarkedCmdlines() {
		if strings.Contains(c, "daemon --key") {
			out = append(out, c)
		}
	}
	return out
}

// Deleting the socket file under a live daemon must not start a second
// daemon: the live one binds its path again (item 13).
func TestDeletedSocketDoesNotSpawnASecondDaemon(t *testing.T) {
	e := NewEnv(t)
	e.MustOK("call", "demo.echo", "text=one")
	if got := e.daemonPids(); len(got) != 1 {
		t.Fatalf("daemons after the first call: %q", got)
	}
	sock := filepath.Join(e.Run, "mcpx", "builtin.sock")
	if err := os.Remove(sock); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if r := e.MustOK("call", "demo.echo", fmt.Sprintf("text=%d", i)); r.Stdout != fmt.Sprint(i) {
			t.Fatalf("call after deleting the socket:\n%s", r)
		}
	}
	if got := e.daemonPids(); len(got) != 1 {
		t.Fatalf("daemons after deleting the socket: %q, want 1", got)
	}
}

// A key record decides which command a daemon runs: a keys directory that
// belongs to another user is refused, with one sentence (item 2).
func TestForeignKeysDirIsRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to chown a directory to another user")
	}
	e := NewEnv(t)
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {"fx": {"command": %s}}}`, jsonString(fixtureBin)))
	keys := filepath.Join(e.Home, ".local", "state", "mcpx", "keys")
	if err := os.MkdirAll(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(keys, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	r := e.Mcpx("call", "fx.echo", "text=x")
	if r.Code != 4 || !strings.Contains(r.Stderr, keys) || !strings.Contains(r.Stderr, "owned by uid 65534") ||
		strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 {
		t.Fatalf("want exit 4 and one sentence naming %s\n%s", keys, r)
	}
	if got := e.daemonPids(); len(got) != 0 {
		t.Fatalf("a daemon started: %q", got)
	}
}

// A schema cache another user wrote cannot make a destructive tool look
// read-only: its refs are refused and the tool's own annotations are read
// again (item 2).
func TestForeignSchemaCacheIsNotTrusted(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to chown a directory to another user")
	}
	e := NewEnv(t)
	// ${FX_TOOLS} is not expanded in the server's hash, so both tool lists
	// below share one cache entry.
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "fx": {"command": %s, "env": {"FIXTURE_RAW_TOOLS": "${FX_TOOLS}"}}
}}`, jsonString(fixtureBin)))
	tool := func(ann string) string {
		return `[{"name":"wipe","inputSchema":{"type":"object"},"annotations":` + ann + `}]`
	}
	// What the other user's cache says: read-only.
	e.Set("FX_TOOLS", tool(`{"readOnlyHint":true}`))
	e.MustOK("refresh", "fx")
	e.MustOK("stop")
	schemas := filepath.Join(e.Home, ".cache", "mcpx", "schemas")
	filepath.Walk(schemas, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, 65534, 65534) })
	// What the server really says now: destructive.
	e.Set("FX_TOOLS", tool(`{"destructiveHint":true}`))
	r := e.Mcpx("call", "fx.wipe")
	if r.Code != 4 || !strings.Contains(r.Stderr, "--yes") {
		t.Fatalf("a foreign schema cache decided the policy: want exit 4 naming --yes\n%s", r)
	}
}

// A ${TOKEN} expanded into a URL's path, query or userinfo, or a header,
// never shows: not in ls, refresh or call errors, not in the daemon's log,
// not in the cache (item 7).
func TestExpandedSecretsAreRedacted(t *testing.T) {
	e := NewEnv(t)
	const token = "tok-9f8e7d6c5b4a3210"
	e.Set("TOKEN", token)
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), `{"mcpServers": {
  "remote": {"url": "http://u:${TOKEN}@127.0.0.1:1/mcp/${TOKEN}?key=${TOKEN}", "headers": {"Authorization": "Bearer ${TOKEN}"}}
}}`)
	var outputs []Result
	outputs = append(outputs, e.Mcpx("refresh"), e.Mcpx("--json", "refresh"), e.Mcpx("ls"), e.Mcpx("--json", "ls"),
		e.Mcpx("call", "remote.anything"), e.Mcpx("--json", "call", "remote.anything"))
	shown := false
	for _, r := range outputs {
		if strings.Contains(r.Stdout+r.Stderr, token) {
			t.Errorf("the token shows:\n%s", r)
		}
		shown = shown || strings.Contains(r.Stdout+r.Stderr, "127.0.0.1:1")
	}
	if !shown {
		t.Errorf("no output names the server's address, so nothing was tested:\n%v", outputs)
	}
	e.MustOK("stop")
	for _, dir := range []string{filepath.Join(e.Home, ".local", "state", "mcpx"), filepath.Join(e.Home, ".cache", "mcpx"), filepath.Join(e.Run, "mcpx")} {
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err != nil || !fi.Mode().IsRegular() || strings.HasSuffix(p, ".env") {
				return nil // the captured environment is the one place values live (0600, runtime dir)
			}
			if b, _ := os.ReadFile(p); strings.Contains(string(b), token) {
				t.Errorf("%s holds the token:\n%s", p, b)
			}
			return nil
		})
	}
}

// The shell's XDG_STATE_HOME and XDG_CACHE_HOME (set in a profile, not in
// the user manager) reach a daemon that systemd starts: the key record it
// needs and the cache it fills are the shell's (item 6).
func TestSystemdDaemonUsesTheShellsStateAndCache(t *testing.T) {
	e, m := newSystemdEnv(t)
	state, cache := filepath.Join(e.Root, "shell-state"), filepath.Join(e.Root, "shell-cache")
	e.Set("XDG_STATE_HOME", state)
	e.Set("XDG_CACHE_HOME", cache)
	if v := m.Getenv("XDG_STATE_HOME"); v == state {
		t.Fatalf("the user manager already has the shell's XDG_STATE_HOME")
	}
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {"fx": {"command": %s}}}`, jsonString(fixtureBin)))
	if r := e.MustOK("call", "fx.echo", "text=hi"); r.Stdout != "hi" {
		t.Fatalf("call under systemd:\n%s", r)
	}
	var st statusDoc
	e.JSON(&st, "status")
	if st.Manager != "systemd" || st.Service.State != "running" {
		t.Fatalf("not served by systemd: %+v", st)
	}
	e.MustOK("refresh", "fx")
	refs, _ := filepath.Glob(filepath.Join(cache, "mcpx", "schemas", "*.json"))
	if len(refs) == 0 {
		t.Fatalf("the daemon did not fill the shell's cache %s", cache)
	}
}

// A server message over mcpx.maxMessageBytes fails that call with an error
// naming the limit, without the daemon holding it whole; the next call gets
// a fresh instance (item 3).
func TestOversizedServerMessageFailsTheCall(t *testing.T) {
	e := NewEnv(t)
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "fx": {"command": %s, "mcpx": {"maxMessageBytes": 1048576}}
}}`, jsonString(fixtureBin)))
	if r := e.MustOK("call", "fx.huge", "bytes=1000"); len(r.Stdout) < 1000 {
		t.Fatalf("small result:\n%s", r)
	}
	r := e.Mcpx("call", "fx.huge", "bytes=80000000")
	if r.Code != 3 || !strings.Contains(r.Stderr, "maxMessageBytes") {
		t.Fatalf("want exit 3 naming maxMessageBytes\n%s", r)
	}
	if r := e.MustOK("call", "fx.echo", "text=after"); r.Stdout != "after" {
		t.Fatalf("call after the oversized message:\n%s", r)
	}
	// The daemon never held the 80 MB message: its peak resident memory
	// stays far below it.
	pid := daemonPid(t, e)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var hwm int
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &hwm)
		}
	}
	if hwm == 0 || hwm > 60*1024 {
		t.Fatalf("daemon peak RSS %d kB, want well under the 80 MB message", hwm)
	}
}

// daemonPid is the pid of the one running daemon of e.
func daemonPid(t *testing.T, e *Env) int {
	t.Helper()
	for _, pid := range e.Marked() {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.Contains(string(b), "daemon\x00--key") {
			return pid
		}
	}
	t.Fatalf("no daemon running: %q", e.MarkedCmdlines())
	return 0
}

// A server that exits after each answer: every call succeeds, the request
// that meets an instance already gone is sent again to a fresh one (item 5).
func TestServerExitingAfterEachAnswer(t *testing.T) {
	e := NewEnv(t)
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "once": {"command": %s, "env": {"FIXTURE_EXIT_AFTER_CALL": "1"}}
}}`, jsonString(fixtureBin)))
	for i := range 50 {
		r := e.Mcpx("call", "once.echo", fmt.Sprintf("text=%d", i))
		if r.Code != 0 || r.Stdout != fmt.Sprint(i) {
			t.Fatalf("call %d of 50:\n%s", i+1, r)
		}
	}
}

// kill -9 of a daemon with live stdio servers leaves none behind, even
// servers that keep running after their stdin closes: the parent-death
// signal ends them, and the next daemon for the key reaps what escaped it
// (a grandchild in a server's process group) (item 4).
func TestServersDoNotOutliveAKilledDaemon(t *testing.T) {
	e := NewEnv(t)
	marker := strings.TrimPrefix(e.Marker, "MCPX_E2E_MARKER=")
	var servers []string
	for i := range 4 {
		servers = append(servers, fmt.Sprintf(`"fx%d": {"command": %s, "env": {"MCPX_E2E_MARKER": %q, "FX_N": "%d", "FIXTURE_LINGER": "1"}}`, i, jsonString(fixtureBin), marker, i))
	}
	servers = append(servers, fmt.Sprintf(`"wrapped": {"command": "sh", "args": ["-c", %s], "env": {"MCPX_E2E_MARKER": %q}}`,
		jsonString("sleep 300 & exec "+fixtureBin), marker))
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), `{"mcpServers": {`+strings.Join(servers, ",\n")+`}}`)
	for _, ns := range []string{"fx0", "fx1", "fx2", "fx3", "wrapped"} {
		e.MustOK("call", ns+".echo", "text=x")
	}
	count := func(what string) int {
		n := 0
		for _, c := range e.MarkedCmdlines() {
			if strings.Contains(c, what) {
				n++
			}
		}
		return n
	}
	if n := count(fixtureBin); n != 5 {
		t.Fatalf("%d servers live, want 5: %q", n, e.MarkedCmdlines())
	}
	if n := count("sleep 300"); n != 1 {
		t.Fatalf("the wrapped server's grandchild is not running: %q", e.MarkedCmdlines())
	}
	pid := daemonPid(t, e)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for count(fixtureBin) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("servers outlived the killed daemon: %q", e.MarkedCmdlines())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The next daemon for the key reaps the grandchild.
	e.MustOK("call", "fx0.echo", "text=y")
	deadline = time.Now().Add(60 * time.Second)
	for count("sleep 300") > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the next daemon did not reap what the killed one left: %q", e.MarkedCmdlines())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
