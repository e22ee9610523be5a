package daemon

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

func shortTimeouts(o *Options) {
	o.ReadTimeout = 300 * time.Millisecond
	o.IdleTimeout = 300 * time.Millisecond
}

// stall opens a connection that sends headers announcing a body it never
// sends.
func stall(t *testing.T, sock string) net.Conn {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, "POST "+api.PathCall+" HTTP/1.1\r\nHost: mcpx\r\nContent-Length: 100\r\n\r\n{"); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestStalledRequestIsClosed(t *testing.T) {
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@"}}}`)
	d := w.start(shortTimeouts)
	c := stall(t, d.sock)
	// The server gives up on the body: the connection ends (with or without
	// an error answer) long before this generous bound.
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("stalled connection was not closed by the daemon: %v", err)
	}
	// An idle keep-alive connection is closed too.
	idle, err := net.Dial("unix", d.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	io.WriteString(idle, "GET "+api.PathHealth+" HTTP/1.1\r\nHost: mcpx\r\n\r\n")
	idle.SetReadDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.ReadAll(idle); err != nil {
		t.Fatalf("idle keep-alive connection was not closed: %v", err)
	}
}

func TestStalledRequestDoesNotBlockIdleExit(t *testing.T) {
	w := newWorld(t, `{"mcpx": {"idleExit": "300ms"}, "mcpServers": {"a": {"command": "@FIXTURE@"}}}`)
	d := w.start(shortTimeouts)
	stall(t, d.sock)
	select {
	case err := <-d.done:
		d.done <- err
		if err != nil {
			t.Fatalf("idle exit returned %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("a stalled request kept the daemon from its idle exit; log:\n%s", d.logs.String())
	}
}

func TestConnectionsBeyondTheCapWait(t *testing.T) {
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@"}}}`)
	d := w.start(shortTimeouts, func(o *Options) { o.MaxConns = 2 })
	stall(t, d.sock)
	stall(t, d.sock)
	// Both slots are taken by stalled clients: this request waits for one
	// of them to be closed, and is answered, not refused.
	d.mustOK(http.MethodGet, api.PathHealth, nil, nil)
	// A call longer than every timeout is not cut off.
	if _, r, e := d.call("a", "slow", `{"seconds":1}`, false); e != nil {
		t.Fatalf("a call longer than the read and idle timeouts failed: %+v", e)
	} else if r == nil {
		t.Fatal("no response")
	}
}
