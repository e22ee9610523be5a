package daemon

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"strings"
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
