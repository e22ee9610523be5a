// Command relay is the process-hop floor of scripts/bench's serve table
// (issue #19, Deliver 5: a call through `mcpx serve` ≤ 1.5× a direct
// client). It starts an MCP stdio server and copies bytes both ways between
// its own stdin/stdout and the server's, doing nothing else: a host that
// talks to the server through it pays one extra process hop and zero work.
// `mcpx serve` is such a hop (and the daemon behind it a second one), so
// what relay costs against a direct client is the least any design with
// those hops can cost on this machine.
//
//	relay [-lines] COMMAND [ARG...]
//
// By default each direction is one io.Copy (a read and a write per
// message). With -lines each direction reads one newline-framed JSON-RPC
// message and writes it on in one write, as a daemon that relays messages
// does, but parses nothing beyond the newline. Chained (relay -lines relay
// -lines SERVER) it is the two hops of serve in front of the daemon.
//
// Build it static, as mcpx is built: CGO_ENABLED=0 go build ./scripts/relay.
// It is a measuring instrument, never a part of mcpx.
package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
)

func main() {
	args := os.Args[1:]
	lines := len(args) > 0 && args[0] == "-lines"
	if lines {
		args = args[1:]
	}
	if len(args) == 0 {
		os.Stderr.WriteString("usage: relay [-lines] COMMAND [ARG...]\n")
		os.Exit(2)
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stderr = os.Stderr
	toServer, err := cmd.StdinPipe()
	if err != nil {
		fail(err)
	}
	fromServer, err := cmd.StdoutPipe()
	if err != nil {
		fail(err)
	}
	if err := cmd.Start(); err != nil {
		fail(err)
	}
	copyOne := io.Copy
	if lines {
		copyOne = copyLines
	}
	go func() {
		copyOne(toServer, os.Stdin)
		toServer.Close() // the host's EOF is the server's
	}()
	copyOne(os.Stdout, fromServer)
	if err := cmd.Wait(); err != nil {
		fail(err)
	}
}

// copyLines copies src to dst one newline-terminated message per write.
// A message longer than the buffer goes on in pieces; the bytes are the
// same either way.
func copyLines(dst io.Writer, src io.Reader) (int64, error) {
	r := bufio.NewReaderSize(src, 1<<20)
	var n int64
	for {
		line, err := r.ReadSlice('\n')
		if len(line) > 0 {
			w, werr := dst.Write(line)
			n += int64(w)
			if werr != nil {
				return n, werr
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

func fail(err error) {
	os.Stderr.WriteString("relay: " + err.Error() + "\n")
	os.Exit(1)
}
