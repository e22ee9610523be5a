package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/client"
)

// unresponsiveNotice tells the user, on stderr, why a command is waiting:
// the daemon has not begun to answer for a few seconds and did not answer
// a health check either (client.Options.OnUnresponsive). It names the
// daemon's pid, how to look at it and how to restart it, and how long the
// command will wait. The command's own answer, or its failure, follows.
func (a *App) unresponsiveNotice(u client.Unresponsive) {
	var b strings.Builder
	b.WriteString("mcpx: the daemon")
	if u.PID > 0 {
		fmt.Fprintf(&b, " (pid %d)", u.PID)
	}
	fmt.Fprintf(&b, " has not answered for %s", u.Silent.Round(time.Second))
	if u.Stopped {
		fmt.Fprintf(&b, ": its process is stopped (SIGSTOP or a debugger). `kill -CONT %d` resumes it;", u.PID)
	} else {
		b.WriteString(", nor a health check: it is stuck or overloaded.")
	}
	b.WriteString(" `mcpx status` shows it; `mcpx stop` ends it, and the next command starts a fresh one.")
	switch {
	case u.Remaining <= 0:
	case u.Discovery:
		fmt.Fprintf(&b, " Giving up in %s.", u.Remaining.Round(time.Second))
	default:
		fmt.Fprintf(&b, " Waiting up to %s more.", u.Remaining.Round(time.Second))
	}
	fmt.Fprintln(a.Stderr, b.String())
}
