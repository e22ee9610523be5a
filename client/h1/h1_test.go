package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func read(t *testing.T, raw string) (*Response, string, error) {
	t.Helper()
	resp, err := ReadResponse(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		return nil, "", err
	}
	body, err := io.ReadAll(resp.Body)
	return resp, string(body), err
}

func TestReadResponse(t *testing.T) {
	cases := []struct {
		name, raw, body string
		status          int
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}trailing", `{"a":1}`, 200},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n1;ext=1\r\n \r\n5\r\nworld\r\n0\r\nX-Trailer: y\r\n\r\n", "hello world", 200},
		{"chunked NDJSON", "HTTP/1.1 200 OK\r\nContent-Type: application/x-ndjson\r\nTransfer-Encoding: chunked\r\n\r\nd\r\n{\"progress\":1\r\nB\r\n}\n{\"result\"\r\n4\r\n:{}}\r\n1\r\n\n\r\n0\r\n\r\n", "{\"progress\":1}\n{\"result\":{}}\n", 200},
		{"until close", "HTTP/1.1 404 Not Found\r\n\r\nno such route", "no such route", 404},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n", "", 204},
		{"bare LF", "HTTP/1.1 409 Conflict\nContent-Length: 2\n\nok", "ok", 409},
		{"informational first", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", "x", 200},
	}
	for _, c := range cases {
		resp, body, err := read(t, c.raw)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if resp.Status != c.status || body != c.body {
			t.Errorf("%s: status %d body %q, want %d %q", c.name, resp.Status, body, c.status, c.body)
		}
	}
	resp, _, _ := read(t, "HTTP/1.1 200 OK\r\nContent-Type: a\r\nX-A: 1\r\nx-a: 2\r\nContent-Length: 0\r\n\r\n")
	if resp.Header["content-type"] != "a" || resp.Header["x-a"] != "1, 2" {
		t.Errorf("header = %v", resp.Header)
	}
}

func TestReadResponseRejects(t *testing.T) {
	long := strings.Repeat("a", MaxLineBytes+1)
	many := strings.Repeat("X: y\r\n", MaxHeaders+1)
	for name, raw := range map[string]string{
		"empty":             "",
		"not http":          "SSH-2.0-OpenSSH\r\n\r\n",
		"bad status":        "HTTP/1.1 2000 OK\r\n\r\n",
		"letters status":    "HTTP/1.1 abc OK\r\n\r\n",
		"header no colon":   "HTTP/1.1 200 OK\r\nnocolon\r\n\r\n",
		"folded header":     "HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n",
		"long line":         "HTTP/1.1 200 OK\r\nA: " + long + "\r\n\r\n",
		"too many headers":  "HTTP/1.1 200 OK\r\n" + many + "\r\n",
		"negative length":   "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"gzip coding":       "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
		"head cut short":    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n",
		"body cut short":    "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nab",
		"chunk cut short":   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel",
		"no last chunk":     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
		"bad chunk size":    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n",
		"chunk overrun":     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhello\r\n0\r\n\r\n",
		"huge chunk size":   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n",
		"no trailer end":    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: y\r\n",
		"signed chunk size": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+5\r\nhello\r\n0\r\n\r\n",
	} {
		if _, _, err := read(t, raw); err == nil {
			t.Errorf("%s: no error", name)
		} else if !errors.Is(err, ErrMalformed) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%s: error %v is neither ErrMalformed nor ErrUnexpectedEOF", name, err)
		}
	}
}

func TestWriteRequest(t *testing.T) {
	var b bytes.Buffer
	if err := WriteRequest(&b, Request{Method: "POST", Target: "/v1/call?x=1", ContentType: "application/json", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	req, err := http.ReadRequest(bufio.NewReader(&b))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(req.Body)
	if req.Method != "POST" || req.URL.Path != "/v1/call" || req.URL.RawQuery != "x=1" || req.Host != "mcpx" ||
		!req.Close || req.Header.Get("Content-Type") != "application/json" || string(body) != "{}" {
		t.Fatalf("net/http read %s %s host %q close %v header %v body %q", req.Method, req.URL, req.Host, req.Close, req.Header, body)
	}
	b.Reset()
	if err := WriteRequest(&b, Request{Method: "GET", Target: "/v1/health"}); err != nil {
		t.Fatal(err)
	}
	if req, err := http.ReadRequest(bufio.NewReader(&b)); err != nil || req.ContentLength != 0 || req.Method != "GET" {
		t.Fatalf("GET: %v %v", req, err)
	}
	for _, bad := range []Request{{Method: "GET", Target: "v1"}, {Method: "G T", Target: "/"}, {Method: "GET", Target: "/a\r\nX: y"},
		{Method: "POST", Target: "/", ContentType: "a\r\nb", Body: []byte{}}} {
		if err := WriteRequest(io.Discard, bad); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}

// FuzzReadResponse: any input is read without a panic and within the
// bounds, and whenever both this parser and net/http read a final HTTP/1.1
// response to the end, they agree on status and body.
func FuzzReadResponse(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n0\r\nT: 1\r\n\r\n",
		"HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
		"HTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\nrest",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		resp, err := ReadResponse(bufio.NewReader(bytes.NewReader(data)))
		if err != nil {
			return
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, int64(len(data))+1))
		if err != nil {
			return
		}
		if len(body) > len(data) {
			t.Fatalf("read %d body bytes from %d bytes of input", len(body), len(data))
		}
		if !bytes.HasPrefix(data, []byte("HTTP/1.1 ")) || bytes.HasPrefix(data, []byte("HTTP/1.1 1")) {
			return // net/http reads HTTP/1.0 and skips no 1xx
		}
		theirs, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(data)), nil)
		if err != nil {
			return
		}
		tbody, err := io.ReadAll(theirs.Body)
		if err != nil {
			return
		}
		if theirs.StatusCode != resp.Status || !bytes.Equal(tbody, body) {
			t.Fatalf("status %d body %q; net/http: %d %q", resp.Status, body, theirs.StatusCode, tbody)
		}
	})
}

func TestKeepAlive(t *testing.T) {
	var b bytes.Buffer
	if err := WriteRequest(&b, Request{Method: "GET", Target: "/v1/health", KeepAlive: true}); err != nil {
		t.Fatal(err)
	}
	if req, err := http.ReadRequest(bufio.NewReader(&b)); err != nil || req.Close {
		t.Fatalf("a keep-alive request: %v close %v", err, req.Close)
	}
	cases := []struct {
		raw      string
		reusable bool
	}{
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", true},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", true},
		{"HTTP/1.1 204 No Content\r\n\r\n", true},
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive, Close\r\n\r\n{}", false},
		{"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}", false},
		{"HTTP/1.1 200 OK\r\n\r\n{}", false}, // until the connection closes
	}
	for _, c := range cases {
		resp, err := ReadResponse(bufio.NewReader(strings.NewReader(c.raw)))
		if err != nil {
			t.Fatalf("%q: %v", c.raw, err)
		}
		if resp.Status == 200 && resp.Reusable() {
			t.Errorf("%q: reusable before the body was read", c.raw)
		}
		io.ReadAll(resp.Body)
		if resp.Reusable() != c.reusable {
			t.Errorf("%q: reusable %v, want %v", c.raw, resp.Reusable(), c.reusable)
		}
	}
}
