package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
		if r := e.MustOK("call", "demo.echo", fmt.Sprintf("text=%d", i)); r.Stdout != fmt.Sprintf("%d\n", i) {
			t.Fatalf("call after deleting the socket:\n%s", r)
		}
	}
	if got := e.daemonPids(); len(got) != 1 {
		t.Fatalf("daemons after deleting the socket: %q, want 1", got)
	}
}
