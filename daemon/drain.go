package daemon

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
)

// Stopping without dropping a request. http.Server.Shutdown marks the
// server as shutting down, and from then on a connection that reads a
// request closes without answering it (net/http's conn.serve checks
// shuttingDown right after reading a request, before any handler). A
// connection accepted just before a stop, whose request was still on its
// way, would then be read and dropped: the client sees the connection end
// after its request was written and cannot tell that nothing ran, so it
// must report a call as failed (client/transport.go retries only what
// provably was not read). So the daemon stops in three steps:
//
//  1. stop accepting: close every listener and wait until no Serve loop
//     can hand out another connection (under systemd and launchd the
//     manager keeps the listening socket, and connections that arrive now
//     wait in its queue for the next daemon; a directly started daemon's
//     queue is reset, which the client sees as unread and retries);
//  2. wait until every accepted connection has had its first request
//     reach a handler, or has closed (net/http's read timeouts end a
//     stalled one), bounded by the shutdown grace;
//  3. only then Shutdown: what is in a handler is answered, and nothing
//     is left that Shutdown could read and drop.
//
// Keep-alive connections (mcpx serve keeps its own) need the same care
// for their next request: one that arrives while Shutdown runs would be
// read and dropped too. So step 1 also stops reading on every idle
// connection (shutdown(SHUT_RD)): a request already queued on it is still
// read and answered, and the client's next write fails with EPIPE, which
// it knows was not read and sends again. Such a connection counts as
// waiting for its request's handler, like a new one, until it closes or
// its request reaches one; a connection that goes idle later is treated
// alike as it does.

// listeners are the daemon's listeners and the Serve loops on them.
type listeners struct {
	mu      sync.Mutex
	closed  bool
	lns     []net.Listener
	serving sync.WaitGroup
}

// serve runs srv.Serve(ln) unless the daemon stopped accepting, in which
// case ln is closed and http.ErrServerClosed returned.
func (l *listeners) serve(srv *http.Server, ln net.Listener) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		ln.Close()
		return http.ErrServerClosed
	}
	l.lns = append(l.lns, ln)
	l.serving.Add(1)
	l.mu.Unlock()
	defer l.serving.Done()
	err := srv.Serve(ln)
	if errors.Is(err, net.ErrClosed) {
		l.mu.Lock()
		closed := l.closed
		l.mu.Unlock()
		if closed {
			err = http.ErrServerClosed
		}
	}
	return err
}

// close closes every listener and returns once no Serve loop runs: every
// connection accepted has been handed to the server (ConnState StateNew).
func (l *listeners) close() {
	l.mu.Lock()
	l.closed = true
	for _, ln := range l.lns {
		ln.Close()
	}
	l.mu.Unlock()
	l.serving.Wait()
}

// connKey carries a request's connection in its context (connContext).
type connKey struct{}

// unanswered tracks the connections accepted whose first request has not
// reached a handler yet, and the idle keep-alive connections. Safe for
// concurrent use.
type unanswered struct {
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	idle     map[net.Conn]struct{} // between requests
	draining bool                  // stopReading has run
	changed  chan struct{}         // a token after every removal
}

func newUnanswered() *unanswered {
	return &unanswered{conns: map[net.Conn]struct{}{}, idle: map[net.Conn]struct{}{}, changed: make(chan struct{}, 1)}
}

// connState is the server's ConnState hook.
func (u *unanswered) connState(c net.Conn, st http.ConnState) {
	switch st {
	case http.StateNew:
		u.mu.Lock()
		u.conns[c] = struct{}{}
		u.mu.Unlock()
	case http.StateActive:
		u.mu.Lock()
		delete(u.idle, c)
		u.mu.Unlock()
	case http.StateIdle:
		u.mu.Lock()
		if u.draining {
			// Between two requests of a stopping daemon: read only what
			// is already queued (see the top of this file).
			closeRead(c)
			u.conns[c] = struct{}{}
			u.mu.Unlock()
			return
		}
		u.idle[c] = struct{}{}
		u.mu.Unlock()
		u.remove(c)
	case http.StateHijacked, http.StateClosed:
		u.mu.Lock()
		delete(u.idle, c)
		u.mu.Unlock()
		u.remove(c)
	}
}

// stopReading stops reading on every idle keep-alive connection, now and
// as connections go idle from now on: a request already queued is still
// read (and waited for, like a new connection's), a later one is refused
// by the kernel.
func (u *unanswered) stopReading() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.draining = true
	for c := range u.idle {
		closeRead(c)
		u.conns[c] = struct{}{}
	}
	clear(u.idle)
}

// closeRead shuts the reading half of c (the daemon's end).
func closeRead(c net.Conn) {
	for {
		if cr, ok := c.(interface{ CloseRead() error }); ok {
			_ = cr.CloseRead()
			return
		}
		w, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return
		}
		c = w.NetConn()
	}
}

// reached marks the connection of a request whose handler runs (a nil
// *unanswered tracks nothing).
func (u *unanswered) reached(ctx context.Context) {
	if u == nil {
		return
	}
	if c, ok := ctx.Value(connKey{}).(net.Conn); ok {
		u.remove(c)
	}
}

func (u *unanswered) remove(c net.Conn) {
	u.mu.Lock()
	_, ok := u.conns[c]
	delete(u.conns, c)
	u.mu.Unlock()
	if ok {
		select {
		case u.changed <- struct{}{}:
		default:
		}
	}
}

// wait returns once no connection waits for its first request's handler,
// or when ctx ends; it reports how many still wait.
func (u *unanswered) wait(ctx context.Context) int {
	for {
		u.mu.Lock()
		n := len(u.conns)
		u.mu.Unlock()
		if n == 0 {
			return 0
		}
		select {
		case <-ctx.Done():
			return n
		case <-u.changed:
		}
	}
}
