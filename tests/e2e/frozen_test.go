package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A frozen daemon (SIGSTOP) no longer makes commands wait minutes in
// silence (issue 18, row 12): after a few seconds without an answer, and
// without an answer to a health check, the command says on stderr which
// daemon, that its process is stopped, and what to do; ls gives up at its
// own short bound (exit 3); a call waits on and is answered once the
// daemon is continued; status says the process is stopped.
func TestFrozenDaemonIsReported(t *testing.T) {
	e := NewEnv(t)
	e.MustOK("call", "demo.echo", "text=warm")
	var st struct {
		Service struct{ Pid int } `json:"service"`
	}
	e.JSON(&st, "status")
	pid := st.Service.Pid
	if pid <= 0 {
		t.Fatalf("no daemon pid in status: %+v", st)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	who := fmt.Sprintf("the daemon (pid %d) has not answered", pid)

	r := e.Mcpx("ls")
	if r.Code != 3 || !strings.Contains(r.Stderr, who) || !strings.Contains(r.Stderr, "is stopped") ||
		!strings.Contains(r.Stderr, fmt.Sprintf("kill -CONT %d", pid)) || !strings.Contains(r.Stderr, "mcpx stop") ||
		!strings.Contains(r.Stderr, "did not answer within 15s") {
		t.Errorf("ls against a stopped daemon: want the notice and exit 3:\n%s", r)
	}
	r = e.Mcpx("--json", "ls")
	var doc struct{ Error struct{ Code string } }
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 3 || doc.Error.Code != "daemon_unavailable" {
		t.Errorf("ls --json against a stopped daemon:\n%s", r)
	}
	if r := e.Mcpx("status"); !strings.Contains(r.Stdout, fmt.Sprintf("its process (pid %d) is stopped", pid)) {
		t.Errorf("status does not say the daemon is stopped:\n%s", r)
	}

	// A call waits on, says why, and is answered once the daemon runs.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, mcpxBin, "call", "demo.echo", "text=resumed")
	cmd.Dir, cmd.Env = e.Work, e.Environ()
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var notice string
	for sc.Scan() {
		if strings.Contains(sc.Text(), who) {
			notice = sc.Text()
			break
		}
	}
	if !strings.Contains(notice, "Waiting up to") {
		t.Errorf("the call's notice: %q", notice)
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		t.Logf("stderr: %s", sc.Text())
	}
	if err := cmd.Wait(); err != nil || strings.TrimSpace(out.String()) != "resumed" {
		t.Errorf("the call after SIGCONT: %v, stdout %q", err, out.String())
	}
}
