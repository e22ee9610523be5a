package daemon

import (
	"net"
	"sync"
	"time"
)

// Connection limits of the daemon's HTTP server. No WriteTimeout: a call
// may legitimately run for callTimeout (and a progress stream for longer),
// and a write deadline would cut it.
const (
	// defaultReadHeaderTimeout bounds reading a request's headers, from the
	// connection's first byte (or its return to the pool) on.
	defaultReadHeaderTimeout = 10 * time.Second
	// defaultReadTimeout bounds reading a whole request, body included
	// (bodies are at most maxBody). net/http lifts the read deadline once
	// the body is read, so a long call is not affected.
	defaultReadTimeout = 30 * time.Second
	// defaultIdleTimeout closes keep-alive connections with no request.
	defaultIdleTimeout = 60 * time.Second
	// defaultMaxConns caps the connections served at once; beyond it new
	// connections wait in the listen queue (they are not refused) until one
	// closes.
	defaultMaxConns = 512
)

// limitListener accepts at most n connections at a time: Accept waits for
// a slot before taking the next connection off the kernel's queue, so
// excess clients wait instead of failing. Safe for concurrent use.
type limitListener struct {
	net.Listener
	sem       chan struct{}
	closeOnce sync.Once
	done      chan struct{}
}

func newLimitListener(ln net.Listener, n int) *limitListener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, n), done: make(chan struct{})}
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

// Close closes the listener; later calls do nothing (the daemon closes
// its listeners before http.Server.Shutdown, which closes them again).
func (l *limitListener) Close() error {
	var err error
	l.closeOnce.Do(func() {
		close(l.done)
		err = l.Listener.Close()
	})
	return err
}

// limitConn gives its slot back once, on the first Close.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// NetConn returns the wrapped connection (peercred.UID reads its credentials).
func (c *limitConn) NetConn() net.Conn { return c.Conn }
