package units

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"

	"github.com/coreos/go-systemd/v22/activation"
	"github.com/coreos/go-systemd/v22/daemon"
)

// TestMain lets the test binary stand in for `mcpx daemon --key K` when the
// hermetic systemd starts it from the installed units.
func TestMain(m *testing.M) {
	if len(os.Args) == 4 && os.Args[1] == "daemon" && os.Args[2] == "--key" {
		os.Exit(fakeDaemon(os.Args[3]))
	}
	os.Exit(m.Run())
}

// fakeDaemon takes the inherited socket named "mcpx", tells systemd it is
// ready and answers each connection with "ok <pid>". A key starting with
// "fail" answers one connection and exits 1, as a crashing daemon would.
func fakeDaemon(key string) int {
	named, err := activation.ListenersWithNames()
	if err != nil || len(named["mcpx"]) != 1 {
		fmt.Fprintf(os.Stderr, "fake daemon %s: no inherited socket named mcpx (%v, %v)\n", key, named, err)
		return 3
	}
	ln := named["mcpx"][0]
	if _, err := daemon.SdNotify(false, daemon.SdNotifyReady); err != nil {
		fmt.Fprintf(os.Stderr, "fake daemon %s: notify: %v\n", key, err)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	go func() {
		<-term
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			return 0 // closed by SIGTERM
		}
		fmt.Fprintf(c, "ok %d\n", os.Getpid())
		c.Close()
		if strings.HasPrefix(key, "fail") {
			return 1
		}
	}
}

// dialFake connects to a fake daemon's socket and returns its answer.
func dialFake(t *testing.T, path string) string {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("dial %s: %v", path, err)
	}
	defer c.Close()
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("read from %s: %v", path, err)
	}
	return strings.TrimSpace(line)
}
