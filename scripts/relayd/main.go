// Command relayd is the throughput floor of scripts/bench (issue #22: the
// daemon's throughput ≥ 85 % of an in-process mcp-go client). It is a
// daemon that does only what any daemon in mcpx's place must: it starts one
// MCP stdio server, opens its session once, listens on a unix socket, and
// answers each HTTP/1.1 `POST /v1/call` by writing a tools/call line to the
// server and writing the server's answer back. No config, no cache, no
// validation, no schema, no JSON decoding of the request: the tool and the
// arguments are cut out of the body the bench's load generator sends
// (`{"namespace":…,"tool":"T","arguments":{…}}`, arguments last), and the
// answer's body is the server's JSON-RPC line as it came. Connections are
// kept alive, one goroutine each; calls from all of them share the one
// server, told apart by the JSON-RPC id (the only field ever decoded), and
// the goroutine that reads the server writes each answer to its connection
// directly. What the same load generator gets from it, beside the
// in-process client, is the most any daemon behind a socket can give here.
//
//	relayd SOCKET COMMAND [ARG...]
//
// It prints "ready" on stdout once it listens, and runs until killed.
// Build it static, as mcpx is built: CGO_ENABLED=0 go build ./scripts/relayd.
// It is a measuring instrument, never a part of mcpx.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"

	"github.com/mcpx-dev/mcpx/scripts/internal/rawsession"
)

func main() {
	if len(os.Args) < 3 {
		os.Stderr.WriteString("usage: relayd SOCKET COMMAND [ARG...]\n")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fail(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fail(err)
	}
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	r := &relay{server: in, pending: map[uint64]net.Conn{}}
	lines := bufio.NewReaderSize(out, 1<<20)
	if r.meta, err = rawsession.Open(in, lines, "relayd"); err != nil {
		fail(err)
	}
	ln, err := net.Listen("unix", os.Args[1])
	if err != nil {
		fail(err)
	}
	os.Stdout.WriteString("ready\n")
	go func() {
		fail(r.answers(lines))
	}()
	for {
		conn, err := ln.Accept()
		if err != nil {
			fail(err)
		}
		go r.serve(conn)
	}
}

type relay struct {
	meta    string
	mu      sync.Mutex // guards server writes, next and pending
	server  io.Writer
	next    uint64
	pending map[uint64]net.Conn
}

// serve reads one connection's requests, each after the previous answer
// (the client does not pipeline), and forwards each as a tools/call.
func (r *relay) serve(conn net.Conn) {
	defer conn.Close()
	in := bufio.NewReader(conn)
	line := make([]byte, 0, 512)
	for {
		body, err := readRequest(in)
		if err != nil {
			return
		}
		tool, args := cut(body)
		r.mu.Lock()
		r.next++
		r.pending[r.next] = conn
		line = append(line[:0], `{"jsonrpc":"2.0","id":`...)
		line = strconv.AppendUint(line, r.next, 10)
		line = append(line, `,"method":"tools/call","params":{"name":"`...)
		line = append(line, tool...)
		line = append(line, `","arguments":`...)
		line = append(line, args...)
		line = append(line, r.meta...)
		line = append(line, "}}\n"...)
		_, err = r.server.Write(line)
		r.mu.Unlock()
		if err != nil {
			fail(err)
		}
	}
}

// readRequest reads one HTTP/1.1 request and returns its body (framed by
// Content-Length, the only header looked at).
func readRequest(in *bufio.Reader) ([]byte, error) {
	length := 0
	for {
		h, err := in.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		if len(h) <= 2 { // the blank line ending the head
			break
		}
		if k, v, ok := bytes.Cut(h, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
			if length, err = strconv.Atoi(string(bytes.TrimSpace(v))); err != nil {
				return nil, err
			}
		}
	}
	body := make([]byte, length)
	_, err := io.ReadFull(in, body)
	return body, err
}

// cut returns the tool name (unquoted) and the arguments (the rest of the
// object) of a body of the load generator's shape.
func cut(body []byte) (tool, args []byte) {
	_, rest, _ := bytes.Cut(body, []byte(`"tool":"`))
	tool, _, _ = bytes.Cut(rest, []byte(`"`))
	_, args, _ = bytes.Cut(body, []byte(`"arguments":`))
	return tool, bytes.TrimSuffix(bytes.TrimSpace(args), []byte("}"))
}

// answers reads the server's lines and writes each answer to the
// connection whose call it answers, as the body of a 200.
func (r *relay) answers(lines *bufio.Reader) error {
	var id struct {
		ID *uint64 `json:"id"`
	}
	resp := make([]byte, 0, 4096)
	for {
		line, err := lines.ReadBytes('\n')
		if err != nil {
			return err
		}
		id.ID = nil
		if json.Unmarshal(line, &id) != nil || id.ID == nil {
			continue // a notification
		}
		r.mu.Lock()
		conn := r.pending[*id.ID]
		delete(r.pending, *id.ID)
		r.mu.Unlock()
		if conn == nil {
			continue
		}
		body := bytes.TrimSuffix(line, []byte("\n"))
		resp = append(resp[:0], "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "...)
		resp = strconv.AppendInt(resp, int64(len(body)), 10)
		resp = append(resp, "\r\n\r\n"...)
		resp = append(resp, body...)
		conn.Write(resp) // a client gone is the client's affair
	}
}

func fail(err error) {
	if errors.Is(err, io.EOF) {
		err = errors.New("the server closed its stdout")
	}
	os.Stderr.WriteString("relayd: " + err.Error() + "\n")
	os.Exit(1)
}
