package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// peerClientEnv makes the test binary a client that GETs /v1/health on the
// socket it names and prints "STATUS CODE".
const peerClientEnv = "MCPX_TEST_PEER_CLIENT"

func peerClient(sock string) {
	c := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}
	resp, err := c.Get("http://mcpx" + api.PathHealth)
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	defer resp.Body.Close()
	var e api.Error
	b, _ := io.ReadAll(resp.Body)
	_ = json.Unmarshal(b, &e)
	fmt.Println(resp.StatusCode, e.Code)
	os.Exit(0)
}

// TestOtherUIDRefused connects as another user (root only): even with a
// socket anyone may open, the peer check refuses a different uid.
func TestOtherUIDRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to connect as another uid")
	}
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@"}}}`)
	open, err := os.MkdirTemp("", "mcpx-peer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(open) })
	bin := filepath.Join(open, "client")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	w.sock = filepath.Join(open, "d.sock")
	d := w.start()
	if err := os.Chmod(w.sock, 0o666); err != nil {
		t.Fatal(err)
	}

	run := func(uid uint32) string {
		cmd := exec.Command(bin, "-test.run=^$")
		cmd.Env = []string{peerClientEnv + "=" + w.sock}
		cmd.Dir = open
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("client as uid %d: %v\n%s", uid, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := run(65534); got != "403 "+api.CodeForbidden {
		t.Errorf("other uid: %q, want 403 forbidden", got)
	}
	if got := run(0); got != "200" {
		t.Errorf("own uid: %q, want 200", got)
	}
	if !strings.Contains(d.logs.String(), "uid 65534 is not the daemon's uid 0") {
		t.Errorf("refusal not logged:\n%s", d.logs.String())
	}
}

// TestRefusedPeerIsNotActivity: requests from another uid are answered 403
// and do not reset the idle timer.
func TestRefusedPeerIsNotActivity(t *testing.T) {
	d := &daemon{log: log.New(io.Discard, "", 0)}
	h := d.handler()
	ctx := context.WithValue(context.Background(), peerKey{}, peer{uid: os.Getuid() + 1})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, api.PathHealth, nil).WithContext(ctx))
	if rec.Code != http.StatusForbidden {
		t.Fatalf("other uid: %d", rec.Code)
	}
	if d.lastActive.Load() != 0 || d.inflight.Load() != 0 {
		t.Errorf("a refused request counted as activity (lastActive %d, inflight %d)", d.lastActive.Load(), d.inflight.Load())
	}
}
