// Command floor is the socket floor of scripts/bench: the least a Go
// program does to get an answer from mcpxd. It connects to the unix socket,
// writes one HTTP/1.1 request exactly as given (the bytes mcpx itself sends,
// captured by the bench), reads the answer to its end (the request says
// Connection: close) and writes the answer's body to stdout. It reads no
// config, writes no record and decodes nothing: what mcpx costs above it is
// what mcpx adds.
//
//	floor SOCKET REQUEST
//
// Build it static, as mcpx is built: CGO_ENABLED=0 go build ./scripts/floor.
package main

import (
	"bytes"
	"io"
	"net"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		os.Stderr.WriteString("usage: floor SOCKET REQUEST\n")
		os.Exit(2)
	}
	conn, err := net.Dial("unix", os.Args[1])
	if err != nil {
		fail(err)
	}
	if _, err := io.WriteString(conn, os.Args[2]); err != nil {
		fail(err)
	}
	answer, err := io.ReadAll(conn)
	if err != nil {
		fail(err)
	}
	head, body, ok := bytes.Cut(answer, []byte("\r\n\r\n"))
	if !ok || !bytes.HasPrefix(head, []byte("HTTP/1.1 200 ")) {
		os.Stderr.Write(answer)
		os.Exit(1)
	}
	os.Stdout.Write(body)
}

func fail(err error) {
	os.Stderr.WriteString("floor: " + err.Error() + "\n")
	os.Exit(1)
}
