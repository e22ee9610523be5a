package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/proc"
)

// A daemon that does not answer: stopped (SIGSTOP, a debugger), wedged, or
// overloaded. The kernel queues a connection to its socket and takes the
// request into the socket's buffer whether or not the daemon reads it, so
// without this a request would wait out its whole bound in silence (minutes
// for a call).
//
// So a request whose answer has not begun silentAfter after it was sent
// asks the daemon's health on a second connection. A daemon that answers it
// is working on the request (a slow tool, a server starting), and one that
// no longer listens is draining the requests it took: the request waits on
// as before. One that takes the connection and stays silent is reported
// once through Options.OnUnresponsive; a discovery request (ls, search, schema: answered
// from the schema cache) then gives up discoveryBound after it was sent,
// any other waits on to its bound, answered at once if the daemon resumes.
//
// The fast path pays two read-deadline updates on the connection it reads
// anyway: no goroutine, no timer of its own.

const (
	defaultSilentAfter    = 3 * time.Second
	defaultProbeTimeout   = 2 * time.Second
	defaultDiscoveryBound = 15 * time.Second
)

// Unresponsive describes a daemon that has not begun to answer a request
// for a while, nor answered a health check meanwhile.
type Unresponsive struct {
	// Socket is the socket the request went to.
	Socket string
	// PID is the daemon's process (from its info file), 0 when unknown.
	PID int
	// Stopped says the process is stopped (SIGSTOP or a debugger): it
	// does nothing until continued (kill -CONT).
	Stopped bool
	// Silent is how long the request has waited.
	Silent time.Duration
	// Remaining is how much longer the request waits before it fails.
	Remaining time.Duration
	// Discovery says the request is a discovery request, which gives up
	// sooner than others.
	Discovery bool
}

// probing marks the health check's own request: it is not checked in turn.
type probing struct{}

// awaitAnswer waits on conn, through br, for the first byte of the answer
// to the request sent at sent (see above). Its error is what ended the
// wait: the connection's (see noAnswer), or a discovery request giving up
// on an unresponsive daemon.
func (c *Client) awaitAnswer(ctx context.Context, conn net.Conn, br *bufio.Reader, target string, sent time.Time) error {
	silentAfter, discoveryBound := orDefault(c.silentAfter, defaultSilentAfter), orDefault(c.discoveryBound, defaultDiscoveryBound)
	if ctx.Value(probing{}) != nil || silentAfter < 0 {
		return nil
	}
	if conn.SetReadDeadline(sent.Add(silentAfter)) != nil {
		return nil
	}
	_, err := br.Peek(1)
	conn.SetReadDeadline(time.Time{})
	if !errors.Is(err, os.ErrDeadlineExceeded) || ctx.Err() != nil {
		return noAnswer(err) // the answer began, or what ended it
	}
	if c.healthy(ctx) {
		return nil
	}
	u := c.unresponsive(time.Since(sent))
	u.Discovery = isDiscovery(target)
	giveUp, bounded := ctx.Deadline()
	if u.Discovery && (!bounded || sent.Add(discoveryBound).Before(giveUp)) {
		giveUp, bounded = sent.Add(discoveryBound), true
	}
	if bounded {
		u.Remaining = max(time.Until(giveUp), 0)
	}
	if c.onUnresponsive != nil {
		c.onUnresponsive(u)
	}
	if !u.Discovery {
		return nil
	}
	if conn.SetReadDeadline(giveUp) != nil {
		return nil
	}
	_, err = br.Peek(1)
	conn.SetReadDeadline(time.Time{})
	if errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() == nil {
		return fmt.Errorf("%s did not answer within %s", u.who(), discoveryBound)
	}
	return noAnswer(err)
}

// noAnswer is the error of a wait for an answer's first byte as the
// answer's reader would report it (a reset, an answer that ended before
// it began), or nil when the byte came. The buffered reader forgets an
// error once returned, so it is passed on here, not read again.
func noAnswer(err error) error {
	switch {
	case err == nil, errors.Is(err, os.ErrDeadlineExceeded):
		return nil // left to the reader: the connection was closed at the bound
	case errors.Is(err, io.EOF):
		return io.ErrUnexpectedEOF
	}
	return err
}

// healthy asks the daemon's health on a connection of its own, bounded by
// probeTimeout; it never starts a daemon. Any answer (a daemon shutting
// down answers 503) means the daemon works. So does a connection that
// cannot be made at all: nobody listens any more (a daemon that closed its
// listener to drain still serves the requests it took), which is not a
// daemon that took the connection and stays silent.
func (c *Client) healthy(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(context.WithValue(context.WithValue(ctx, probing{}, true), noActivate{}, true),
		orDefault(c.probeTimeout, defaultProbeTimeout))
	defer cancel()
	_, _, _, err := c.roundTrip(ctx, "GET", api.PathHealth, nil)
	var de *errDial
	return err == nil || errors.As(err, &de)
}

// orDefault is d, or def when d is zero.
func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// unresponsive describes the daemon behind the socket as its info file and
// the process table tell it.
func (c *Client) unresponsive(silent time.Duration) Unresponsive {
	u := Unresponsive{Socket: c.socket, Silent: silent}
	if info, err := config.ReadInfo(c.paths.Info(c.key)); err == nil && info.Running() {
		u.PID = info.Pid
		u.Stopped = proc.Stopped(info.Pid)
	}
	return u
}

func (u Unresponsive) who() string {
	if u.PID > 0 {
		return fmt.Sprintf("the daemon (pid %d)", u.PID)
	}
	return "the daemon on " + u.Socket
}

// isDiscovery reports whether the request target is answered from the
// schema cache (ls, search, schema), with no reason to wait minutes.
func isDiscovery(target string) bool {
	path, _, _ := strings.Cut(target, "?")
	switch path {
	case api.PathNamespaces, api.PathTools, api.PathSearch, api.PathSchema:
		return true
	}
	return false
}
