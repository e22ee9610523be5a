package upstream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpx-dev/mcpx/config"
)

// A stdio server's pipes are mcpx's own, and so is the JSON-RPC transport
// that reads and writes them (stdioRPC, rpcstdio.go), for these reasons:
//
//   - stdout is read through a lineLimiter: one JSON-RPC message (one line)
//     longer than the server's maxMessageBytes fails the read, so the
//     transport's line reader stops growing its buffer there, every request
//     in flight fails, and the instance is stopped (memory returns with it);
//   - stdin is written through a countingWriter, so a request that failed
//     because the server went away can be proven never read (not a byte of
//     it reached the pipe, or it is still whole in a pipe nobody reads) and
//     sent again to a fresh instance (exits.go);
//   - the child is started here, with its parent-death signal set from a
//     locked OS thread (pdeathsig_linux.go);
//   - what the server writes on stdout that is not JSON-RPC (the transport
//     skips such lines) is noted, to be quoted when the handshake fails
//     (stdout.go);
//   - the transport tells a line apart without decoding it (rpcline.go)
//     and hands a result on as the bytes the server wrote, where mcp-go's
//     Stdio decoded every line and passed it through channels: that was a
//     fifth to a quarter of the daemon's CPU per call (docs/performance.md).
//
// What is not achieved: the transport still holds one whole message (up to
// the bound) and the daemon decodes it whole, so a large binary result is
// in memory once or twice before it reaches the content store; streaming it
// there would need a transport that parses incrementally.

// errMessageTooLarge is a server message over the bound.
var errMessageTooLarge = errors.New("message too large")

// MessageTooLargeError is a server that sent one JSON-RPC message longer
// than Limit bytes (mcpx.maxMessageBytes). The call fails and the instance
// is stopped; the next call starts a fresh one.
type MessageTooLargeError struct {
	Server string
	Limit  int64
}

func (e *MessageTooLargeError) Error() string {
	return fmt.Sprintf("server %s sent a message over %d bytes (mcpx.maxMessageBytes); the call failed and the instance was stopped", e.Server, e.Limit)
}

// Unwrap returns errMessageTooLarge.
func (e *MessageTooLargeError) Unwrap() error { return errMessageTooLarge }

// lineLimiter passes a newline-delimited stream through and ends it once a
// line grows past max bytes: from then on Read reports io.EOF (the end of
// the stream, as any read error is to the transport) and tripped is set,
// which the connection turns into a *MessageTooLargeError. Not safe for
// concurrent Reads (the transport has one reader).
type lineLimiter struct {
	r       io.Reader
	max     int64
	cur     int64 // bytes of the current line so far
	tripped atomic.Bool
	// done is closed once the stream ended (EOF, an error, the bound): every
	// complete line before it has been handed to the reader.
	done     chan struct{}
	doneOnce sync.Once
	// in, when set, is the same server's stdin: each read that returns
	// bytes notes how much had been written to it then, and when
	// (lastIn, lastOut), so an exit can be told apart as "right after its last
	// answer, having read nothing since" (exits.go).
	in      *countingWriter
	lastIn  atomic.Int64
	lastOut atomic.Int64 // unix nanoseconds; 0: nothing read yet
}

func (l *lineLimiter) end() { l.doneOnce.Do(func() { close(l.done) }) }

func (l *lineLimiter) Read(p []byte) (int, error) {
	if l.tripped.Load() {
		l.end()
		return 0, io.EOF
	}
	// Never hand out more than can be checked before the bound.
	if room := l.max - l.cur + 1; int64(len(p)) > room && room > 0 {
		p = p[:room]
	}
	n, err := l.r.Read(p)
	if n > 0 && l.in != nil {
		l.lastIn.Store(l.in.n.Load())
		l.lastOut.Store(time.Now().UnixNano())
	}
	chunk := p[:n]
	for len(chunk) > 0 {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			l.cur += int64(len(chunk))
			break
		}
		if l.cur+int64(i) > l.max {
			l.cur += int64(i)
			break
		}
		l.cur = 0
		chunk = chunk[i+1:]
	}
	if l.cur > l.max {
		l.tripped.Store(true)
		l.end()
		return 0, io.EOF
	}
	if err != nil {
		l.end()
	}
	return n, err
}

// countingWriter is the server's stdin: it counts the bytes the pipe took,
// and keeps what the pipe held when it was closed, so a request that fails
// after a stop closed stdin can still be proven unread.
type countingWriter struct {
	w *os.File
	n atomic.Int64

	mu     sync.Mutex
	closed bool
	// At Close: the bytes still in the pipe, and whether nobody could
	// read them any more (no reader left).
	closedUnread   int64
	closedNoReader bool
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingWriter) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		c.closedUnread, c.closedNoReader = unread(c.w), noReader(c.w)
	}
	return c.w.Close()
}

// unreadSince reports whether every byte written after the count was
// before provably never reached the server: none was written (the write
// was never made, or failed with EPIPE because nobody reads the pipe any
// more), or nobody can read the pipe any more and it still holds at least
// that many bytes (a pipe is read from the front, so the unread bytes are
// the last ones written). A server that exits right after its answer
// leaves the next request in the pipe this way. Bytes still in the pipe of
// a server that lives on prove nothing: it may read them yet.
func (c *countingWriter) unreadSince(before int64) bool {
	since := c.n.Load() - before
	if since == 0 {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.closedNoReader && c.closedUnread >= since
	}
	return noReader(c.w) && unread(c.w) >= since
}

// stillInPipe reports whether every byte written after the count was
// before is still in the pipe (whoever may read it later).
func (c *countingWriter) stillInPipe(before int64) bool {
	since := c.n.Load() - before
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.closedUnread >= since
	}
	return unread(c.w) >= since
}

// stdioPipes are the parent's ends of a started stdio server.
type stdioPipes struct {
	in  *countingWriter
	out *lineLimiter
	raw *os.File // stdout's read end, closed at stop
}

// startStdio starts p's command with fresh stdin/stdout pipes, a parent
// death signal where the OS has one, and returns the parent's ends.
func startStdio(p *proc, maxMessage int64) (*stdioPipes, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	p.cmd.Stdin, p.cmd.Stdout = inR, outW
	setPdeathsig(p.cmd.SysProcAttr)
	// Pdeathsig fires when the thread that forked the child exits, not the
	// process: fork from a locked thread, and give it back to the runtime
	// afterwards (Go ends a thread only when a goroutine exits while
	// locked to it, which the daemon never does).
	runtime.LockOSThread()
	err = p.cmd.Start()
	runtime.UnlockOSThread()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("failed to start command: %w", err)
	}
	p.waited = make(chan struct{})
	go func() {
		awaitExit(p.cmd.Process.Pid)
		_ = p.cmd.Wait()
		close(p.waited)
	}()
	// Non-JSON lines are noted for errors (stdout.go) beneath the bound.
	p.out = &stdoutWatch{r: outR}
	in := &countingWriter{w: inW}
	return &stdioPipes{in: in, out: &lineLimiter{r: p.out, max: maxMessage, done: make(chan struct{}), in: in}, raw: outR}, nil
}

// maxMessageOf is s's mcpx.maxMessageBytes, or the default.
func maxMessageOf(s *config.Server) int64 {
	if s != nil && s.Options.MaxMessageBytes > 0 {
		return s.Options.MaxMessageBytes
	}
	return config.DefaultMaxMessageBytes
}
