// Command fakedaemon stands in for `mcpx daemon --key K` under a service
// manager in tests: it takes the inherited socket named "mcpx", tells
// systemd it is ready and answers every connection with "ok <pid>\n". A key
// starting with "fail" answers one connection and exits 1, as a crashing
// daemon would.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/coreos/go-systemd/v22/activation"
	"github.com/coreos/go-systemd/v22/daemon"
)

func main() {
	if len(os.Args) != 4 || os.Args[1] != "daemon" || os.Args[2] != "--key" {
		fmt.Fprintf(os.Stderr, "fakedaemon: usage: fakedaemon daemon --key K (got %q)\n", os.Args[1:])
		os.Exit(2)
	}
	key := os.Args[3]
	named, err := activation.ListenersWithNames()
	if err != nil || len(named["mcpx"]) != 1 {
		fmt.Fprintf(os.Stderr, "fakedaemon %s: no inherited socket named mcpx (%v, %v)\n", key, named, err)
		os.Exit(3)
	}
	ln := named["mcpx"][0]
	_, _ = daemon.SdNotify(false, daemon.SdNotifyReady)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		<-term
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(0) // closed on SIGTERM
		}
		fmt.Fprintf(c, "ok %d\n", os.Getpid())
		c.Close()
		if strings.HasPrefix(key, "fail") {
			os.Exit(1)
		}
	}
}
