package daemon

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/client/h1"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// acceptSignal tells on accepted each time Accept hands out a connection.
type acceptSignal struct {
	net.Listener
	accepted chan struct{}
}

func (l *acceptSignal) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		select {
		case l.accepted <- struct{}{}:
		default:
		}
	}
	return c, err
}

// TestStopAnswersAcceptedConnections: a connection the daemon accepted
// before it began to stop has its request answered, though the request
// arrives after the stop began. (http.Server.Shutdown alone reads such a
// request and closes the connection without an answer: the client cannot
// tell whether its call ran, and a call was lost across a systemd restart.)
func TestStopAnswersAcceptedConnections(t *testing.T) {
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@"}}}`)
	accepted := make(chan struct{}, 1)
	w.wrapLn = func(ln net.Listener) net.Listener { return &acceptSignal{Listener: ln, accepted: accepted} }
	d := w.start()
	c, err := net.Dial("unix", d.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-accepted:
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not accept the connection")
	}

	d.cancel() // SIGTERM
	// Once nothing accepts any more, the stop is under way (Shutdown, if
	// that is what the daemon calls, has begun).
	eventually(t, "the daemon to stop accepting", func() bool {
		p, err := net.Dial("unix", d.sock)
		if err != nil {
			return true
		}
		p.Close()
		return false
	})

	body, _ := json.Marshal(api.CallRequest{Namespace: "a", Tool: "echo", Arguments: json.RawMessage(`{"text":"late"}`)})
	req := h1.Request{Method: "POST", Target: api.PathCall, Body: body, ContentType: "application/json",
		Header: [][2]string{{api.HeaderConfigStamp, w.config().Stamp}}}
	if err := h1.WriteRequest(c, req); err != nil {
		t.Fatalf("write the request: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	resp, err := h1.ReadResponse(bufio.NewReader(c))
	if err != nil {
		t.Fatalf("a request on a connection accepted before the stop got no answer: %v\nlog:\n%s", err, d.logs.String())
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || !strings.Contains(string(data), "late") {
		t.Fatalf("answer %d: %s", resp.Status, data)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
}

// TestStopRefusesTheNextRequestOnAKeptConnection: on a keep-alive
// connection (mcpx serve keeps its own), a request sent after the daemon
// began to stop is either answered or refused in a way the client knows
// was not read (its write fails, or the connection is reset), never read
// and dropped: the client could not tell whether the call ran.
func TestStopRefusesTheNextRequestOnAKeptConnection(t *testing.T) {
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@"}}}`)
	d := w.start()
	c, err := net.Dial("unix", d.sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	body, _ := json.Marshal(api.CallRequest{Namespace: "a", Tool: "echo", Arguments: json.RawMessage(`{"text":"kept"}`)})
	req := h1.Request{Method: "POST", Target: api.PathCall, Body: body, ContentType: "application/json", KeepAlive: true,
		Header: [][2]string{{api.HeaderConfigStamp, w.config().Stamp}}}
	if err := h1.WriteRequest(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := h1.ReadResponse(br)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := io.ReadAll(resp.Body); err != nil || resp.Status != 200 || !resp.Reusable() {
		t.Fatalf("first answer %d %s %v, reusable %v", resp.Status, data, err, resp.Reusable())
	}

	d.cancel() // SIGTERM
	eventually(t, "the daemon to stop accepting", func() bool {
		p, err := net.Dial("unix", d.sock)
		if err != nil {
			return true
		}
		p.Close()
		return false
	})
	time.Sleep(50 * time.Millisecond) // and to be well into its stop
	c.SetDeadline(time.Now().Add(60 * time.Second))
	if err := h1.WriteRequest(c, req); err != nil {
		if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("write on the kept connection: %v, want EPIPE", err)
		}
	} else if resp, err := h1.ReadResponse(br); err != nil {
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("a request written whole to a stopping daemon was dropped (%v): the client cannot tell whether it ran", err)
		}
	} else if data, _ := io.ReadAll(resp.Body); resp.Status != 200 || !strings.Contains(string(data), "kept") {
		t.Fatalf("second answer %d: %s", resp.Status, data)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
}

// TestStopReadingRefusesLaterRequests: once a stop began, an idle
// keep-alive connection takes no new request (the client's write fails
// with EPIPE, which it knows was not read), and wait does not count it
// once it closed.
func TestStopReadingRefusesLaterRequests(t *testing.T) {
	u := newUnanswered()
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ConnState: u.connState, ConnContext: func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connKey{}, c)
	}, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.reached(r.Context())
		io.WriteString(w, "ok")
	})}
	go srv.Serve(ln)
	defer srv.Close()

	c, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(c)
	req := h1.Request{Method: "GET", Target: "/", KeepAlive: true}
	if err := h1.WriteRequest(c, req); err != nil {
		t.Fatal(err)
	}
	resp, err := h1.ReadResponse(br)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	if !resp.Reusable() {
		t.Fatal("the answer does not keep the connection")
	}
	eventually(t, "the connection to go idle", func() bool {
		u.mu.Lock()
		defer u.mu.Unlock()
		return len(u.idle) == 1
	})

	u.stopReading()
	werr := h1.WriteRequest(c, req)
	if werr == nil {
		_, werr = h1.ReadResponse(br)
	}
	if !errors.Is(werr, syscall.EPIPE) && !errors.Is(werr, syscall.ECONNRESET) {
		t.Fatalf("a request after stopReading: %v, want EPIPE (or a reset)", werr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if n := u.wait(ctx); n != 0 {
		t.Fatalf("wait: %d connections still waiting", n)
	}
}
