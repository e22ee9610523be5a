package client

import (
	"bufio"
	"io"
	"net"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/client/h1"
)

// Keep-alive (Options.KeepAlive). The CLI sends one request per connection
// and per process. mcpx serve is one long-lived process that sends a
// request per host call, and opening a connection for each costs a
// connect, the peer check and the daemon's connection setup, as much as
// the rest of the round trip. So a keep-alive client keeps the
// connections whose answer was read to its end and sends the next
// request on one of them.
//
// A kept connection may have been closed by the daemon meanwhile (its
// idle timeout, a restart). On a unix socket that is never mistaken for a
// request the daemon read: writing to a closed peer fails (EPIPE), and a
// peer that closes with our request unread resets the connection
// (ECONNRESET); open then sends the request on the next connection, at
// once. A connection that ends after the request was read (EOF, the
// daemon read it) is an error as on a fresh connection: the call may have
// run. A daemon that drains stops reading on its idle connections first
// (daemon/drain.go), so its stop is never such an EOF.

const (
	// maxIdleConns is how many idle connections a client keeps.
	maxIdleConns = 16
	// maxIdleTime drops a connection idle for longer: below the daemon's
	// idle timeout (60 s), so that the daemon rarely closes one under a
	// request.
	maxIdleTime = 30 * time.Second
	// maxDrain bounds what release reads to reach the end of an answer
	// the caller stopped reading (the end of a streamed call after its
	// result frame).
	maxDrain = 64 << 10
)

// conn is one connection to the daemon and the reader of its answers.
type conn struct {
	net.Conn
	br     *bufio.Reader
	reused bool      // it carried an earlier request
	idle   time.Time // when it went back to the pool
}

// connPool holds the idle connections of a keep-alive client. Safe for
// concurrent use.
type connPool struct {
	mu     sync.Mutex
	idle   []*conn // most recently used last
	closed bool
}

// get takes the most recently used idle connection that has not been
// idle too long, or returns nil.
func (p *connPool) get(now time.Time) *conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.idle) > 0 {
		cn := p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if now.Sub(cn.idle) < maxIdleTime {
			cn.reused = true
			return cn
		}
		cn.Close()
	}
	return nil
}

// put keeps cn for a later request (or closes it when the pool is full or
// closed).
func (p *connPool) put(cn *conn) {
	cn.idle = time.Now()
	p.mu.Lock()
	if p.closed || len(p.idle) >= maxIdleConns {
		p.mu.Unlock()
		cn.Close()
		return
	}
	// Drop what has been idle too long, oldest first.
	for len(p.idle) > 0 && cn.idle.Sub(p.idle[0].idle) >= maxIdleTime {
		p.idle[0].Close()
		p.idle = p.idle[1:]
	}
	p.idle = append(p.idle, cn)
	p.mu.Unlock()
}

// close closes the idle connections, and makes put close the rest.
func (p *connPool) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, cn := range idle {
		cn.Close()
	}
}

// release ends the use of cn, whose answer resp has been read as far as
// the caller needs. stop is the context.AfterFunc that would close cn
// when the request's context ends: once it cannot be stopped any more,
// cn is (being) closed. Otherwise, on a keep-alive client, cn goes back to
// the pool when the answer has been read to its end, or once the rest of
// it (a streamed call's last chunk) has been read in the background;
// anything else closes it.
func (c *Client) release(cn *conn, resp *h1.Response, stop func() bool) {
	if !stop() {
		cn.Close()
		return
	}
	if c.pool == nil || resp == nil {
		cn.Close()
		return
	}
	if resp.Reusable() {
		c.pool.put(cn)
		return
	}
	go func() {
		cn.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
		if err != nil || !resp.Reusable() {
			cn.Close()
			return
		}
		cn.SetReadDeadline(time.Time{})
		c.pool.put(cn)
	}()
}

// CloseIdle closes the connections a keep-alive client keeps; requests
// still running close theirs when they end. The client stays usable (it
// then opens a connection per request).
func (c *Client) CloseIdle() {
	if c.pool != nil {
		c.pool.close()
	}
}
