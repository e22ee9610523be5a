// Package h1 is the small HTTP/1.1 client the mcpx CLI speaks to its daemon
// over a unix socket. The daemon serves ordinary HTTP/1.1 (curl
// --unix-socket works); the CLI writes one request per connection
// ("Connection: close") and reads one response, so it needs neither
// net/http's transport nor its connection pool, proxy, TLS or HTTP/2
// machinery, whose package init and first-request setup cost more than the
// whole round trip to a warm daemon.
//
// What it reads (RFC 9112): a status line, header fields (bounded in size
// and number), and a body framed by Transfer-Encoding: chunked (chunk
// extensions and trailers are read and dropped), by Content-Length, or by
// the end of the connection. Chunked bodies carry the daemon's streamed
// NDJSON answers; ReadResponse hands the body out as a reader, so the caller
// can read it line by line as it arrives.
//
// A long-lived caller (mcpx serve) may keep a connection for the next
// request instead (Request.KeepAlive): Response.Reusable says when the
// answer was read to its end and the daemon did not ask to close.
//
// Nothing here is safe for concurrent use on one connection; the package has
// no state.
package h1

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Limits on what ReadResponse accepts before the body.
const (
	MaxLineBytes = 16 << 10 // one status or header line
	MaxHeaders   = 100
)

// ErrMalformed is the kind of every response ReadResponse cannot parse.
var ErrMalformed = errors.New("malformed HTTP/1.1 response")

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// Request is what WriteRequest sends.
type Request struct {
	Method string
	// Target is the request target: path and query, already escaped.
	Target      string
	ContentType string // sent when Body is non-nil
	Body        []byte // nil: no body
	// Header holds extra fields, name and value, written in order.
	Header [][2]string
	// KeepAlive leaves out "Connection: close": the connection may carry
	// another request once the answer is read (Response.Reusable).
	KeepAlive bool
}

// WriteRequest writes req as one HTTP/1.1 request with Host "mcpx" (and
// "Connection: close" unless req.KeepAlive), in one Write call.
func WriteRequest(w io.Writer, req Request) error {
	if req.Method == "" || strings.ContainsAny(req.Method, " \r\n") {
		return fmt.Errorf("h1: bad method %q", req.Method)
	}
	if !strings.HasPrefix(req.Target, "/") || strings.ContainsAny(req.Target, " \r\n") {
		return fmt.Errorf("h1: bad request target %q", req.Target)
	}
	if strings.ContainsAny(req.ContentType, "\r\n") {
		return fmt.Errorf("h1: bad content type %q", req.ContentType)
	}
	for _, h := range req.Header {
		if h[0] == "" || strings.ContainsAny(h[0], ": \r\n") || strings.ContainsAny(h[1], "\r\n") {
			return fmt.Errorf("h1: bad header field %q", h[0])
		}
	}
	b := make([]byte, 0, 128+len(req.Target)+len(req.Body))
	b = append(b, req.Method...)
	b = append(b, ' ')
	b = append(b, req.Target...)
	b = append(b, " HTTP/1.1\r\nHost: mcpx\r\n"...)
	if !req.KeepAlive {
		b = append(b, "Connection: close\r\n"...)
	}
	b = append(b, "User-Agent: mcpx\r\n"...)
	for _, h := range req.Header {
		b = append(b, h[0]...)
		b = append(b, ": "...)
		b = append(b, h[1]...)
		b = append(b, "\r\n"...)
	}
	if req.Body != nil {
		if req.ContentType != "" {
			b = append(b, "Content-Type: "...)
			b = append(b, req.ContentType...)
			b = append(b, "\r\n"...)
		}
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(req.Body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, req.Body...)
	_, err := w.Write(b)
	return err
}

// Response is a parsed status line and header, and the body as a reader.
type Response struct {
	Status int
	Reason string
	// Header maps lower-cased field names to their values (repeated fields
	// joined with ", ").
	Header map[string]string
	// Body reads the body, de-chunked, up to its end. A body cut short
	// reads io.ErrUnexpectedEOF.
	Body io.Reader
	// proto is the status line's protocol ("HTTP/1.1" or "HTTP/1.0").
	proto string
}

// Reusable reports whether the connection the response came on can carry
// another request: the body has been read to its end (its length or its
// last chunk, not the end of the connection), it is HTTP/1.1, and the
// server did not answer "Connection: close".
func (resp *Response) Reusable() bool {
	if resp.proto != "HTTP/1.1" || hasToken(resp.Header["connection"], "close") {
		return false
	}
	switch b := resp.Body.(type) {
	case eofReader:
		return true
	case *exact:
		return b.n == 0
	case *chunked:
		return b.done
	}
	return false
}

// hasToken reports whether the comma-separated list v holds tok (ASCII
// case-insensitively).
func hasToken(v, tok string) bool {
	for _, f := range strings.Split(v, ",") {
		if strings.EqualFold(strings.TrimSpace(f), tok) {
			return true
		}
	}
	return false
}

// ReadResponse reads a response's status line and header from r and
// returns it with a reader of its body. A 1xx informational response is
// skipped. The response to a HEAD request is not supported (mcpx sends
// none).
func ReadResponse(r *bufio.Reader) (*Response, error) {
	for {
		resp, err := readHead(r)
		if err != nil {
			return nil, err
		}
		if resp.Status >= 200 || resp.Status == 101 {
			if err := resp.frame(r); err != nil {
				return nil, err
			}
			return resp, nil
		}
	}
}

func readHead(r *bufio.Reader) (*Response, error) {
	line, err := readLine(r)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	proto, rest, ok := strings.Cut(line, " ")
	if !ok || !strings.HasPrefix(proto, "HTTP/1.") || len(proto) != len("HTTP/1.1") {
		return nil, malformed("status line %q", clip(line))
	}
	code, reason, _ := strings.Cut(rest, " ")
	if len(code) != 3 {
		return nil, malformed("status code %q", clip(code))
	}
	status, err := strconv.Atoi(code)
	if err != nil || status < 100 || status > 999 {
		return nil, malformed("status code %q", clip(code))
	}
	resp := &Response{Status: status, Reason: reason, Header: map[string]string{}, proto: proto}
	for n := 0; ; n++ {
		line, err := readLine(r)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if line == "" {
			return resp, nil
		}
		if n >= MaxHeaders {
			return nil, malformed("more than %d header fields", MaxHeaders)
		}
		if line[0] == ' ' || line[0] == '\t' {
			return nil, malformed("obsolete line folding")
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, malformed("header field %q", clip(line))
		}
		name = strings.ToLower(name)
		value = strings.Trim(value, " \t")
		if old, dup := resp.Header[name]; dup {
			value = old + ", " + value
		}
		resp.Header[name] = value
	}
}

// frame picks the body's framing (RFC 9112 §6.3).
func (resp *Response) frame(r *bufio.Reader) error {
	if resp.Status == 204 || resp.Status == 304 {
		resp.Body = eofReader{}
		return nil
	}
	if te, ok := resp.Header["transfer-encoding"]; ok {
		if !strings.EqualFold(strings.TrimSpace(te), "chunked") {
			return malformed("transfer coding %q", clip(te))
		}
		resp.Body = &chunked{r: r}
		return nil
	}
	if cl, ok := resp.Header["content-length"]; ok {
		n, err := strconv.ParseInt(cl, 10, 64)
		if err != nil || n < 0 || strings.ContainsAny(cl, "+-") {
			return malformed("content length %q", clip(cl))
		}
		resp.Body = &exact{r: r, n: n}
		return nil
	}
	resp.Body = r // until the connection closes
	return nil
}

// readLine reads one CRLF- (or LF-) terminated line without its end,
// bounded by MaxLineBytes.
func readLine(r *bufio.Reader) (string, error) {
	var buf []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(buf)+len(frag) > MaxLineBytes {
			return "", malformed("line longer than %d bytes", MaxLineBytes)
		}
		buf = append(buf, frag...)
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(buf) > 0 && errors.Is(err, io.EOF) {
			return "", io.ErrUnexpectedEOF
		}
		return "", err
	}
	buf = buf[:len(buf)-1]
	if n := len(buf); n > 0 && buf[n-1] == '\r' {
		buf = buf[:n-1]
	}
	return string(buf), nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// exact reads a Content-Length body.
type exact struct {
	r *bufio.Reader
	n int64
}

func (e *exact) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > e.n {
		p = p[:e.n]
	}
	n, err := e.r.Read(p)
	e.n -= int64(n)
	if errors.Is(err, io.EOF) && e.n > 0 {
		err = io.ErrUnexpectedEOF
	} else if err == nil && e.n == 0 {
		err = io.EOF
	}
	return n, err
}

// chunked reads a chunked body (RFC 9112 §7.1).
type chunked struct {
	r    *bufio.Reader
	left int64 // bytes left in the current chunk
	done bool
	err  error
}

func (c *chunked) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if c.done {
		return 0, io.EOF
	}
	for c.left == 0 {
		size, err := c.chunkSize()
		if err != nil {
			c.err = err
			return 0, err
		}
		if size == 0 {
			if err := c.trailers(); err != nil {
				c.err = err
				return 0, err
			}
			c.done = true
			return 0, io.EOF
		}
		c.left = size
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	if c.left == 0 {
		// The chunk's data ends with CRLF.
		line, lerr := readLine(c.r)
		if lerr == nil && line != "" {
			lerr = malformed("chunk data longer than its size")
		}
		if lerr != nil {
			if errors.Is(lerr, io.EOF) {
				lerr = io.ErrUnexpectedEOF
			}
			c.err = lerr
			return n, nil // the data read is good; the error comes next
		}
	}
	if errors.Is(err, io.EOF) {
		if c.left > 0 {
			c.err = io.ErrUnexpectedEOF
			return n, nil
		}
		err = nil
	}
	return n, err
}

func (c *chunked) chunkSize() (int64, error) {
	line, err := readLine(c.r)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return 0, io.ErrUnexpectedEOF
		}
		return 0, err
	}
	hex, _, _ := strings.Cut(line, ";") // chunk extensions are ignored
	hex = strings.TrimRight(hex, " \t")
	if hex == "" || len(hex) > 15 {
		return 0, malformed("chunk size %q", clip(line))
	}
	size, err := strconv.ParseInt(hex, 16, 64)
	if err != nil || size < 0 || strings.ContainsAny(hex, "+-xX") {
		return 0, malformed("chunk size %q", clip(line))
	}
	return size, nil
}

func (c *chunked) trailers() error {
	for n := 0; ; n++ {
		line, err := readLine(c.r)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		if line == "" {
			return nil
		}
		if n >= MaxHeaders {
			return malformed("more than %d trailer fields", MaxHeaders)
		}
	}
}
