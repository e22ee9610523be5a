package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// idles counts the connections of keepAliveClient's servers that went
// idle (their answer written), so that a test closes a kept connection
// only once the server holds it as idle.
var idles atomic.Int64

// keepAliveClient is newTestClient with keep-alive on, its socket served
// by a net/http server (as the daemon's is) answering with h. It returns
// how many connections the server accepted.
func keepAliveClient(t *testing.T, h http.HandlerFunc) (*Client, *http.Server, *atomic.Int64) {
	t.Helper()
	c, ln := newTestClient(t)
	c.pool = &connPool{}
	var conns atomic.Int64
	srv := &http.Server{Handler: h, ConnState: func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			conns.Add(1)
		case http.StateIdle:
			idles.Add(1)
		}
	}}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return c, srv, &conns
}

// A keep-alive client sends its requests on one connection, plain and
// streamed answers alike, and never asks the daemon to close it.
func TestKeepAliveReusesTheConnection(t *testing.T) {
	var closes atomic.Int64
	c, _, conns := keepAliveClient(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Close {
			closes.Add(1)
		}
		switch r.URL.Path {
		case api.PathCall:
			w.Header().Set("Content-Type", api.ContentTypeNDJSON)
			// A streamed answer: a progress frame flushed on its own,
			// then the result.
			io.WriteString(w, `{"progress":{"progress":1}}`+"\n")
			w.(http.Flusher).Flush()
			io.WriteString(w, `{"result":{"result":{"content":[{"type":"text","text":"ok"}]}}}`+"\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"ok":true}`)
		}
	})
	ctx := context.Background()
	for i := range 5 {
		if _, err := c.Health(ctx); err != nil {
			t.Fatalf("Health %d: %v", i, err)
		}
		var frames int
		resp, err := c.CallStream(ctx, api.CallRequest{Namespace: "demo", Tool: "echo"}, func(api.StreamFrame) { frames++ })
		if err != nil || frames != 1 || !strings.Contains(string(resp.Result), "ok") {
			t.Fatalf("CallStream %d: %v, %d frames, %+v", i, err, frames, resp)
		}
		// The end of a streamed answer is read in the background before
		// its connection is kept (a request sent meanwhile opens another
		// one, by design): the next request waits for it.
		testkit.Eventually(t, 10*time.Second, "the streamed answer's connection to be kept", func() bool {
			c.pool.mu.Lock()
			defer c.pool.mu.Unlock()
			return len(c.pool.idle) > 0
		})
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("10 requests opened %d connections, want 1", n)
	}
	if n := closes.Load(); n != 0 {
		t.Errorf("%d requests asked to close the connection", n)
	}
}

// A kept connection the daemon closed meanwhile (its idle timeout, a
// restart) is dropped, and the request goes on a new one, once.
func TestKeepAliveReplacesAClosedConnection(t *testing.T) {
	idles.Store(0)
	var calls atomic.Int64
	c, srv, conns := keepAliveClient(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == api.PathCall {
			calls.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"result":{"content":[]}}`)
	})
	ctx := context.Background()
	if _, err := c.Call(ctx, api.CallRequest{Namespace: "demo", Tool: "echo"}); err != nil {
		t.Fatal(err)
	}
	// The server marks the connection idle after the client has read
	// the answer: closing it before then would leave it open.
	for deadline := time.Now().Add(10 * time.Second); idles.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	srv.SetKeepAlivesEnabled(false) // closes the idle connection
	srv.SetKeepAlivesEnabled(true)
	if _, err := c.Call(ctx, api.CallRequest{Namespace: "demo", Tool: "echo"}); err != nil {
		t.Fatalf("Call after the daemon closed the kept connection: %v", err)
	}
	if n, m := calls.Load(), conns.Load(); n != 2 || m != 2 {
		t.Fatalf("%d calls reached the daemon on %d connections, want 2 on 2", n, m)
	}
}

// On a kept connection as on a fresh one, a call the daemon read and then
// dropped without an answer may have run: it is reported, not sent again.
func TestKeepAliveReadThenDroppedIsNotRetried(t *testing.T) {
	c, ln := newTestClient(t)
	c.pool = &connPool{}
	var requests atomic.Int64
	serve(ln, func(_ int64, conn net.Conn) {
		go func() {
			defer conn.Close()
			br := bufio.NewReader(conn)
			for {
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				if requests.Add(1) == 2 {
					return // read, then gone
				}
				io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 25\r\n\r\n"+`{"result":{"content":[]}}`)
			}
		}()
	})
	ctx := context.Background()
	if _, err := c.Call(ctx, api.CallRequest{Namespace: "demo", Tool: "add_note"}); err != nil {
		t.Fatal(err)
	}
	_, err := c.Call(ctx, api.CallRequest{Namespace: "demo", Tool: "delete_note"})
	if !errors.Is(err, ErrDaemonUnavailable) {
		t.Fatalf("second Call: %v, want ErrDaemonUnavailable", err)
	}
	if n := requests.Load(); n != 2 {
		t.Fatalf("the daemon read %d requests, want 2 (the dropped one not sent again)", n)
	}
}

// Cancelling a call on a kept connection closes that connection (the
// daemon cancels the call) instead of keeping it.
func TestKeepAliveCancelClosesTheConnection(t *testing.T) {
	var mu sync.Mutex
	var gone []error
	read := make(chan struct{}, 1)
	c, _, conns := keepAliveClient(t, func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path != api.PathCall {
			io.WriteString(w, `{}`)
			return
		}
		read <- struct{}{}
		<-r.Context().Done() // net/http cancels it when the client closes
		mu.Lock()
		gone = append(gone, r.Context().Err())
		mu.Unlock()
	})
	if _, err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, api.CallRequest{Namespace: "demo", Tool: "slow"})
		done <- err
	}()
	<-read
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Call: %v", err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(gone)
		mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the daemon never saw the call cancelled")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections, want 2 (the cancelled one not kept)", n)
	}
}

func TestConnPoolDropsStaleConnections(t *testing.T) {
	p := &connPool{}
	now := time.Now()
	var closed []string
	for i := range 3 {
		a, b := net.Pipe()
		defer b.Close()
		cn := &conn{Conn: closeRecorder{a, fmt.Sprint(i), &closed}}
		p.put(cn)
		cn.idle = now.Add(-time.Duration(2-i) * maxIdleTime) // 0 and 1 too old
	}
	if cn := p.get(now); cn == nil || !cn.reused {
		t.Fatalf("get = %+v, want the fresh connection", cn)
	}
	if cn := p.get(now); cn != nil {
		t.Fatalf("get returned a connection idle for %s", now.Sub(cn.idle))
	}
	slices.Sort(closed)
	if strings.Join(closed, ",") != "0,1" {
		t.Fatalf("closed %v, want the two stale ones", closed)
	}
	p.close()
	a, b := net.Pipe()
	defer b.Close()
	p.put(&conn{Conn: closeRecorder{a, "late", &closed}})
	if closed[len(closed)-1] != "late" {
		t.Fatalf("a closed pool kept a connection: %v", closed)
	}
}

type closeRecorder struct {
	net.Conn
	name   string
	closed *[]string
}

func (c closeRecorder) Close() error {
	*c.closed = append(*c.closed, c.name)
	return c.Conn.Close()
}
