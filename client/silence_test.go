package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// answerJSON reads one request from conn and answers body with status 200,
// after delay when the request is not a health check.
func answerJSON(t *testing.T, conn net.Conn, body string, delay time.Duration) {
	defer conn.Close()
	req, err := http.ReadRequest(bufio.NewReader(conn))
	if err != nil {
		return // a probe the client gave up on
	}
	if req.URL.Path != "/v1/health" {
		time.Sleep(delay)
	} else {
		body = `{"ok":true}`
	}
	fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
}

// noticeRecorder records what OnUnresponsive is told.
type noticeRecorder struct {
	mu  sync.Mutex
	got []Unresponsive
}

func (r *noticeRecorder) notice(u Unresponsive) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, u)
}

func (r *noticeRecorder) notices() []Unresponsive {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Unresponsive(nil), r.got...)
}

// A daemon that takes no connection at all (stopped: the kernel queues the
// connection and the request) is reported once; a discovery request gives
// up at its own bound instead of the request timeout.
func TestUnresponsiveDaemonDiscoveryGivesUp(t *testing.T) {
	c, _ := newTestClient(t) // the listener never accepts
	var rec noticeRecorder
	c.onUnresponsive = rec.notice
	c.silentAfter, c.probeTimeout, c.discoveryBound = 100*time.Millisecond, 100*time.Millisecond, 600*time.Millisecond
	c.timeout = 30 * time.Second
	_, err := c.Namespaces(context.Background())
	if !errors.Is(err, ErrDaemonUnavailable) || !strings.Contains(err.Error(), "did not answer within 600ms") {
		t.Fatalf("Namespaces against a stopped daemon: %v", err)
	}
	got := rec.notices()
	if len(got) != 1 || !got[0].Discovery || got[0].Socket != c.Socket() || got[0].Remaining > 600*time.Millisecond {
		t.Fatalf("notices = %+v, want one, for a discovery request", got)
	}
}

// A request other than discovery waits on after the notice, and gets its
// answer when the daemon resumes.
func TestUnresponsiveDaemonResumes(t *testing.T) {
	c, ln := newTestClient(t)
	var rec noticeRecorder
	resumed := make(chan struct{})
	c.onUnresponsive = func(u Unresponsive) {
		rec.notice(u)
		close(resumed)
	}
	c.silentAfter, c.probeTimeout, c.discoveryBound = 100*time.Millisecond, 100*time.Millisecond, 300*time.Millisecond
	go func() {
		<-resumed // the daemon takes its queued connections only now
		serve(ln, func(_ int64, conn net.Conn) { go answerJSON(t, conn, `{"ok":true}`, 0) })
	}()
	if _, err := c.Health(context.Background()); err != nil {
		t.Fatalf("Health once the daemon resumed: %v", err)
	}
	if got := rec.notices(); len(got) != 1 || got[0].Discovery || got[0].Remaining <= 0 {
		t.Fatalf("notices = %+v, want one, not for discovery, with time left", got)
	}
}

// A daemon that answers its health check is working on the request (a slow
// tool, a server starting): no notice, and no early end even for discovery.
func TestBusyDaemonIsWaitedFor(t *testing.T) {
	c, ln := newTestClient(t)
	var rec noticeRecorder
	c.onUnresponsive = rec.notice
	c.silentAfter, c.probeTimeout, c.discoveryBound = 100*time.Millisecond, 2*time.Second, 300*time.Millisecond
	serve(ln, func(_ int64, conn net.Conn) { go answerJSON(t, conn, `{"namespaces":[]}`, 700*time.Millisecond) })
	if _, err := c.Namespaces(context.Background()); err != nil {
		t.Fatalf("Namespaces from a busy daemon: %v", err)
	}
	if got := rec.notices(); len(got) != 0 {
		t.Fatalf("notices = %+v for a daemon that answers its health check", got)
	}
}

// A daemon that closed its listener (draining before it exits) still
// answers the requests it took: the health check cannot connect, which is
// no sign of a stuck daemon, and nothing is reported.
func TestDrainingDaemonIsNotReported(t *testing.T) {
	c, ln := newTestClient(t)
	var rec noticeRecorder
	c.onUnresponsive = rec.notice
	c.silentAfter, c.probeTimeout, c.discoveryBound = 100*time.Millisecond, time.Second, 300*time.Millisecond
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		ln.Close() // takes no new connection: the health check's dial fails
		answerJSON(t, conn, `{"namespaces":[]}`, 700*time.Millisecond)
	}()
	if _, err := c.Namespaces(context.Background()); err != nil {
		t.Fatalf("Namespaces from a draining daemon: %v", err)
	}
	if got := rec.notices(); len(got) != 0 {
		t.Fatalf("notices = %+v for a draining daemon", got)
	}
}
