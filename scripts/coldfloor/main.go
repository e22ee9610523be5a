// Command coldfloor is the cold-call floor of scripts/bench (issue #22: a
// cold first `mcpx call` ≤ 1.3× a one-shot mcp-go client). mcpx's first
// call after `mcpx stop` needs three processes in a row: the CLI, which
// starts the daemon, which starts the server, opens its session and calls
// the tool. coldfloor does the same with nothing else: run with HOPS = 2
// it starts itself with HOPS = 1 (the "CLI"), which starts itself with
// HOPS = 0 (the "daemon"), which starts the server, opens the session
// (server/discover, else initialize, as mcp-go's client does), calls the
// tool with raw JSON-RPC lines and writes the answer's line to stdout,
// which both parents share. No config, socket, lock, cache or decoding.
// HOPS = 0 alone is a one-shot call from its own process.
//
//	coldfloor HOPS TOOL ARGUMENTS COMMAND [ARG...]
//	coldfloor 2 echo '{"text":"x"}' mcpxd demo-server
//
// Under a service manager the daemon is started by it instead, on the
// first connection to a socket it holds (as mcpx@.socket starts
// mcpx@.service). -activated is that daemon: it takes the listening socket
// systemd passes (fd 3), accepts one connection, reads one line, makes the
// call and writes the answer back, then exits (so the next connection
// starts it again). -connect SOCKET is the CLI: it sends a line and prints
// the answer.
//
//	coldfloor -activated TOOL ARGUMENTS COMMAND [ARG...]   (ExecStart= of a Type=simple service)
//	coldfloor -connect SOCKET
//
// The "daemon" neither waits for the server nor keeps it: it closes the
// server's stdin and exits, and the server (stderr discarded) ends on its
// own. Build it static, as mcpx is built: CGO_ENABLED=0 go build
// ./scripts/coldfloor. It is a measuring instrument, never a part of mcpx.
package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"

	"github.com/mcpx-dev/mcpx/scripts/internal/rawsession"
)

func main() {
	if len(os.Args) < 5 && (len(os.Args) != 3 || os.Args[1] != "-connect") {
		os.Stderr.WriteString("usage: coldfloor HOPS|-activated TOOL ARGUMENTS COMMAND [ARG...]; coldfloor -connect SOCKET\n")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "-connect":
		connect(os.Args[2])
		return
	case "-activated":
		activated(os.Args[2], os.Args[3], os.Args[4], os.Args[5:])
		return
	}
	hops, err := strconv.Atoi(os.Args[1])
	if err != nil || hops < 0 {
		os.Stderr.WriteString("coldfloor: HOPS is a count\n")
		os.Exit(2)
	}
	if hops > 0 {
		next := exec.Command(os.Args[0], append([]string{strconv.Itoa(hops - 1)}, os.Args[2:]...)...)
		next.Stdout, next.Stderr = os.Stdout, os.Stderr
		if err := next.Run(); err != nil {
			fail(err)
		}
		return
	}
	answer, err := call(os.Args[2], os.Args[3], os.Args[4], os.Args[5:])
	if err != nil {
		fail(err)
	}
	os.Stdout.Write(answer)
}

// connect sends a line on SOCKET and copies the answer to stdout.
func connect(socket string) {
	conn, err := net.Dial("unix", socket)
	if err != nil {
		fail(err)
	}
	if _, err := io.WriteString(conn, "call\n"); err != nil {
		fail(err)
	}
	answer, err := io.ReadAll(conn)
	if err != nil {
		fail(err)
	}
	if len(answer) == 0 {
		fail(errors.New("no answer"))
	}
	os.Stdout.Write(answer)
}

// activated serves one connection on the socket systemd passed as fd 3.
func activated(tool, args, command string, argv []string) {
	ln, err := net.FileListener(os.NewFile(3, "listener"))
	if err != nil {
		fail(err)
	}
	conn, err := ln.Accept()
	if err != nil {
		fail(err)
	}
	if _, err := bufio.NewReader(conn).ReadSlice('\n'); err != nil {
		fail(err)
	}
	answer, err := call(tool, args, command, argv)
	if err != nil {
		fail(err)
	}
	conn.Write(answer)
	conn.Close()
}

// call starts the server, opens a session and returns the line answering
// one tools/call.
func call(tool, args, command string, argv []string) ([]byte, error) {
	cmd := exec.Command(command, argv...)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer in.Close()
	out := bufio.NewReaderSize(stdout, 1<<20)
	meta, err := rawsession.Open(in, out, "coldfloor")
	if err != nil {
		return nil, err
	}
	request := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":` + strconv.Quote(tool) +
		`,"arguments":` + args + meta + "}}\n"
	return rawsession.Exchange(in, out, request)
}

func fail(err error) {
	os.Stderr.WriteString("coldfloor: " + err.Error() + "\n")
	os.Exit(1)
}
