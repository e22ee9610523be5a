package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"testing"
	"time"
)

// `serve --http` is as private as the daemon's socket (issue #18, row 3):
// another local user, who can reach any TCP port on the machine, cannot
// call the user's tools without the serve key; a huge body, a foreign
// Origin and a taken port are each refused at once.

// stranger is another uid to run commands as (setpriv), made with useradd
// when missing. Only root can switch.
type stranger struct{ uid, gid int }

func newStranger(t *testing.T) stranger {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("running a command as another uid needs root")
	}
	for _, tool := range []string{"setpriv", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	const name = "mcpxstranger"
	u, err := user.Lookup(name)
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
			t.Fatalf("useradd %s: %v\n%s", name, err, out)
		}
		if u, err = user.Lookup(name); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if uid == os.Getuid() {
		t.Fatalf("%s has the test's own uid %d", name, uid)
	}
	return stranger{uid, gid}
}

// curl runs curl as the stranger and returns the status, the headers and
// the body.
func (s stranger) curl(t *testing.T, args ...string) (int, http.Header, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	argv := append([]string{fmt.Sprintf("--reuid=%d", s.uid), fmt.Sprintf("--regid=%d", s.gid), "--clear-groups",
		"curl", "-sS", "-i", "--max-time", "30"}, args...)
	cmd := exec.CommandContext(ctx, "setpriv", argv...)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("curl %v as uid %d: %v\n%s", args, s.uid, err, errb.String())
	}
	raw := out.String()
	head, body, _ := strings.Cut(raw, "\r\n\r\n")
	lines := strings.Split(head, "\r\n")
	var status int
	fmt.Sscanf(lines[0], "HTTP/1.1 %d", &status)
	h := http.Header{}
	for _, l := range lines[1:] {
		if k, v, ok := strings.Cut(l, ":"); ok {
			h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	return status, h, body
}

const (
	initializeBody  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}`
	initializedBody = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	echoCallBody    = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"demo.echo","arguments":{"text":"through the key"}}}`
)

func mcpPost(url string, body string, headers ...string) []string {
	args := []string{"-X", "POST", "-H", "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream"}
	for _, h := range headers {
		args = append(args, "-H", h)
	}
	return append(args, "--data-binary", body, url)
}

func TestServeHTTPIsPrivate(t *testing.T) {
	other := newStranger(t)
	e := NewEnv(t)
	e.MustOK("refresh")
	addr := freeAddr(t)
	cmd := startServe(t, e, "--http", addr)
	key := serveKeyOf(t, e)
	url := "http://" + addr + "/mcp"
	keyFile := e.Home + "/.local/state/mcpx/serve.key"
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("serve key file: %v %v, want mode 0600", fi.Mode(), err)
	}

	// Without the key: 401, one line saying where the key is. The
	// initialize and the call both.
	for _, body := range []string{initializeBody, echoCallBody} {
		status, h, text := other.curl(t, mcpPost(url, body)...)
		if status != http.StatusUnauthorized || !strings.Contains(text, keyFile) || strings.Count(strings.TrimSpace(text), "\n") != 0 ||
			!strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
			t.Fatalf("without the key: %d %v %q", status, h, text)
		}
		if strings.Contains(text, key) {
			t.Fatal("the 401 tells the key")
		}
	}
	// A wrong key, in either place, and the /mcp/NS endpoint: the same.
	for _, args := range [][]string{
		mcpPost(url, initializeBody, "Authorization: Bearer "+strings.Repeat("x", len(key))),
		mcpPost(url+"?key=nope", initializeBody),
		mcpPost(url+"/demo", initializeBody),
	} {
		if status, _, text := other.curl(t, args...); status != http.StatusUnauthorized {
			t.Fatalf("curl %v: %d %s", args, status, text)
		}
	}

	// With the key (which the user would have to give away), it works:
	// initialize, then the call on that session.
	status, h, text := other.curl(t, mcpPost(url, initializeBody, "Authorization: Bearer "+key)...)
	session := h.Get("Mcp-Session-Id")
	if status != http.StatusOK || session == "" || !strings.Contains(text, `"serverInfo"`) {
		t.Fatalf("initialize with the key: %d %v %s", status, h, text)
	}
	other.curl(t, mcpPost(url, initializedBody, "Authorization: Bearer "+key, "Mcp-Session-Id: "+session)...)
	status, _, text = other.curl(t, mcpPost(url+"?key="+key, echoCallBody, "Mcp-Session-Id: "+session)...)
	if status != http.StatusOK || !strings.Contains(text, "through the key") {
		t.Fatalf("tools/call with the key: %d %s", status, text)
	}

	// A foreign Origin (a web page the user visits) is refused, even with
	// the key; a page on a loopback address is not.
	status, _, text = other.curl(t, mcpPost(url, initializeBody, "Authorization: Bearer "+key, "Origin: https://evil.example")...)
	if status != http.StatusForbidden || !strings.Contains(text, "evil.example") {
		t.Fatalf("foreign Origin: %d %s", status, text)
	}
	if status, _, text = other.curl(t, mcpPost(url, initializeBody, "Authorization: Bearer "+key, "Origin: http://localhost:5173")...); status != http.StatusOK {
		t.Fatalf("loopback Origin: %d %s", status, text)
	}

	// 300 MB bodies, with the key: 413, whether the length is announced
	// or not, and serve's memory does not grow by them.
	before := vmRSS(t, cmd.Process.Pid)
	for _, chunked := range []bool{false, true} {
		const size = 300 << 20
		var body io.Reader = io.LimitReader(zeros{}, size)
		req, _ := http.NewRequest(http.MethodPost, url, body)
		if !chunked {
			req.ContentLength = size
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			// serve may close the connection while the rest is sent.
			var ne net.Error
			if !errors.As(err, &ne) && !strings.Contains(err.Error(), "reset") && !strings.Contains(err.Error(), "broken pipe") {
				t.Fatalf("300 MB POST (chunked %v): %v", chunked, err)
			}
			t.Logf("300 MB POST (chunked %v): %v", chunked, err)
			continue
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("300 MB POST (chunked %v): %d %s", chunked, resp.StatusCode, msg)
		}
	}
	after := vmRSS(t, cmd.Process.Pid)
	t.Logf("serve RSS %d KiB before two 300 MB POSTs, %d KiB after", before, after)
	if after > before+8<<10 { // the body bound is 4 MiB
		t.Fatalf("serve's RSS grew from %d to %d KiB with refused bodies", before, after)
	}
}

// TestServeNoKey: --no-key serves without the key, and says what that
// means.
func TestServeNoKey(t *testing.T) {
	e := NewEnv(t)
	addr := freeAddr(t)
	c := exec.Command(mcpxBin, "serve", "--http", addr, "--no-key")
	c.Dir, c.Env = e.Work, e.Environ()
	stderr := &bytes.Buffer{}
	c.Stderr = stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { c.Process.Signal(os.Interrupt); c.Wait() }()
	var resp *http.Response
	deadline := time.Now().Add(30 * time.Second)
	for {
		var err error
		resp, err = http.Post("http://"+addr+"/mcp", "application/json", strings.NewReader(initializeBody))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "serverInfo") {
		t.Fatalf("--no-key initialize: %d %s", resp.StatusCode, body)
	}
	c.Process.Signal(os.Interrupt)
	c.Wait()
	if !strings.Contains(stderr.String(), "WARNING: --no-key") {
		t.Errorf("no warning: %s", stderr.String())
	}
	if _, err := os.Stat(e.Home + "/.local/state/mcpx/serve.key"); err == nil {
		t.Error("--no-key made a key")
	}
}

// TestServeTakenPort: a port already in use ends serve with exit 3 and a
// sentence naming it, instead of a hang.
func TestServeTakenPort(t *testing.T) {
	e := NewEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	start := time.Now()
	r := e.Mcpx("serve", "--http", addr) // bounded by Mcpx's own timeout
	t.Logf("serve on a taken port ended after %s", time.Since(start))
	if r.Code != 3 || !strings.Contains(r.Stderr, addr) || !strings.Contains(r.Stderr, "taken") {
		t.Fatalf("%s", r)
	}
}

// vmRSS reads a process's resident set in KiB.
func vmRSS(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	t.Fatalf("no VmRSS for %d", pid)
	return 0
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
