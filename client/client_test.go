package client

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// newTestClient returns a client for an empty directory (the built-in
// config) whose socket is a listener the test serves by hand.
func newTestClient(t *testing.T) (*Client, net.Listener) {
	t.Helper()
	base, env := hermeticTree(t, "work")
	env["MCPX_SOCKET"] = filepath.Join(base, "d.sock")
	ln, err := net.Listen("unix", env["MCPX_SOCKET"])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	c, err := New(Options{Dir: filepath.Join(base, "work"), Getenv: func(k string) string { return env[k] }, Self: "/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	return c, ln
}

// readRequest reads one whole HTTP request from conn.
func readRequest(t *testing.T, conn net.Conn) {
	req, err := http.ReadRequest(bufio.NewReader(conn))
	if err != nil {
		t.Errorf("read request: %v", err)
		return
	}
	io.Copy(io.Discard, req.Body)
}

// serve accepts connections and hands each to handle, counting them.
func serve(ln net.Listener, handle func(n int64, conn net.Conn)) *atomic.Int64 {
	var count atomic.Int64
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			handle(count.Add(1), conn)
		}
	}()
	return &count
}

// A call the daemon read and then dropped without an answer may have run:
// it is reported, never sent a second time.
func TestCallReadThenDroppedIsNotRetried(t *testing.T) {
	c, ln := newTestClient(t)
	count := serve(ln, func(_ int64, conn net.Conn) {
		readRequest(t, conn)
		conn.Close() // EOF for the client, after the request was read
	})
	_, err := c.Call(context.Background(), api.CallRequest{Namespace: "demo", Tool: "delete_note"})
	if !errors.Is(err, ErrDaemonUnavailable) {
		t.Fatalf("Call error = %v, want ErrDaemonUnavailable", err)
	}
	if n := count.Load(); n != 1 {
		t.Fatalf("the call was sent %d times, want 1", n)
	}
}

// A GET is repeated after the same failure: reading state twice is harmless.
func TestGetReadThenDroppedIsRetried(t *testing.T) {
	c, ln := newTestClient(t)
	count := serve(ln, func(n int64, conn net.Conn) {
		readRequest(t, conn)
		if n == 1 {
			conn.Close()
			return
		}
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
		conn.Close()
	})
	if _, err := c.Health(context.Background()); err != nil {
		t.Fatalf("Health: %v", err)
	}
	if n := count.Load(); n != 2 {
		t.Fatalf("health was sent %d times, want 2", n)
	}
}

// A call on a connection the daemon reset without reading it (a listener
// closed with the connection still queued) did not run: it is sent again.
func TestCallResetUnreadIsRetried(t *testing.T) {
	c, ln := newTestClient(t)
	count := serve(ln, func(n int64, conn net.Conn) {
		if n == 1 {
			// Wait for the request, leave it unread and close: the
			// client's read fails with a reset.
			conn.Read(make([]byte, 1))
			conn.Close()
			return
		}
		readRequest(t, conn)
		io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}")
		conn.Close()
	})
	if _, err := c.Call(context.Background(), api.CallRequest{Namespace: "demo", Tool: "echo"}); err != nil {
		t.Fatalf("Call: %v", err)
	}
	if n := count.Load(); n != 2 {
		t.Fatalf("the call was sent %d times, want 2", n)
	}
}
