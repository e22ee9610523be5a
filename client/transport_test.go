package client

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// A daemon that accepts and never answers: every request ends within its
// bound with ErrDaemonUnavailable (exit 3 in the CLI), and a call's bound
// follows the server's timeouts.
func TestNoAnswerEndsWithinTheBound(t *testing.T) {
	c, ln := newTestClient(t)
	var (
		mu   sync.Mutex
		held []net.Conn
	)
	serve(ln, func(_ int64, conn net.Conn) { // never answers
		mu.Lock()
		held = append(held, conn)
		mu.Unlock()
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, conn := range held {
			conn.Close()
		}
	})
	c.timeout = 200 * time.Millisecond
	_, err := c.Namespaces(context.Background())
	if !errors.Is(err, ErrDaemonUnavailable) || !strings.Contains(err.Error(), "no answer within 200ms") {
		t.Fatalf("Namespaces against a silent daemon: %v", err)
	}

	// demo's callTimeout and startTimeout are the defaults; the margin is
	// what the test can shorten.
	if got, want := c.callBound("demo"), 120*time.Second+30*time.Second+c.margin; got != want {
		t.Fatalf("callBound(demo) = %s, want %s", got, want)
	}
	c.brief.Timeouts = map[string]config.Timeouts{"demo": {Call: 100 * time.Millisecond, Start: 100 * time.Millisecond}}
	c.margin = 100 * time.Millisecond
	_, err = c.Call(context.Background(), api.CallRequest{Namespace: "demo", Tool: "echo"})
	if !errors.Is(err, ErrDaemonUnavailable) || !strings.Contains(err.Error(), "no answer within 300ms") {
		t.Fatalf("Call against a silent daemon: %v", err)
	}
}

// Cancelling the context (Ctrl-C) closes the connection: the daemon sees
// EOF, which cancels the request (net/http cancels its context).
func TestCancelClosesTheConnection(t *testing.T) {
	c, ln := newTestClient(t)
	eof := make(chan error, 1)
	read := make(chan struct{})
	serve(ln, func(_ int64, conn net.Conn) {
		readRequest(t, conn)
		close(read)
		_, err := conn.Read(make([]byte, 1))
		eof <- err
		conn.Close()
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, api.CallRequest{Namespace: "demo", Tool: "slow"})
		done <- err
	}()
	// Cancel once the daemon has the request (before, there would be no
	// connection to close).
	select {
	case <-read:
	case <-time.After(30 * time.Second):
		t.Fatal("the call never reached the daemon")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Call: %v", err)
	}
	select {
	case err := <-eof:
		if err == nil {
			t.Fatal("the daemon read a byte, want EOF")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon's connection stayed open after the cancel")
	}
}

// A connection served by another uid is refused before anything is sent.
func TestForeignPeerIsRefused(t *testing.T) {
	c, ln := newTestClient(t)
	count := serve(ln, func(_ int64, conn net.Conn) { conn.Close() })
	c.peerUID = func(net.Conn) (int, error) { return os.Getuid() + 1, nil }
	_, err := c.Health(context.Background())
	if !errors.Is(err, ErrForeignDaemon) || !errors.Is(err, ErrDaemonUnavailable) || !strings.Contains(err.Error(), "served by uid") {
		t.Fatalf("Health against a foreign peer: %v", err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := count.Load(); n > 1 {
		t.Fatalf("connected %d times to a foreign daemon, want at most once and no retry", n)
	}
}

// A socket file owned by another uid is refused without connecting.
func TestForeignSocketFileIsRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("chown to another uid needs root")
	}
	c, ln := newTestClient(t)
	count := serve(ln, func(_ int64, conn net.Conn) { conn.Close() })
	if err := os.Chown(c.Socket(), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := c.Health(context.Background())
	if !errors.Is(err, ErrForeignDaemon) || !strings.Contains(err.Error(), "owned by uid 65534") {
		t.Fatalf("Health on a socket owned by 65534: %v", err)
	}
	if n := count.Load(); n != 0 {
		t.Fatalf("connected %d times to a foreign socket, want 0", n)
	}
}
