// Command mcpxd is mcpx's daemon side: everything that needs an MCP library.
// The CLI (cmd/mcpx) links none and runs mcpxd for these:
//
//	mcpxd daemon --key K   the service process for a daemon key (units, agents
//	                       and the direct manager start it; `mcpxd --key K`
//	                       is the same)
//	mcpxd demo-server      the built-in demo MCP server on stdin/stdout
//	mcpxd serve [FLAGS]    mcpx as one MCP server for hosts (`mcpx serve`)
//	mcpxd version          print the version
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"syscall"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon"
	"github.com/mcpx-dev/mcpx/internal/fixture"
	"github.com/mcpx-dev/mcpx/internal/version"
	"github.com/mcpx-dev/mcpx/serve"
)

const usage = `usage: mcpxd COMMAND
  daemon --key KEY   run the daemon for KEY (started by the service manager)
  demo-server        serve the built-in demo MCP server on stdin/stdout
  serve [FLAGS]      serve every configured server as one MCP server (mcpx serve)
  version            print the version
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := ""
	if len(args) > 0 && (len(args[0]) == 0 || args[0][0] != '-') {
		cmd, args = args[0], args[1:]
	} else if len(args) > 0 {
		cmd = "daemon" // mcpxd --key K
	}
	switch cmd {
	case "daemon":
		fs := flag.NewFlagSet("mcpxd daemon", flag.ContinueOnError)
		fs.SetOutput(stderr)
		key := fs.String("key", "", "daemon `KEY`")
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if *key == "" || fs.NArg() > 0 {
			fmt.Fprint(stderr, "mcpxd: daemon needs --key KEY and nothing else\n", usage)
			return 2
		}
		if err := daemon.Main(ctx, config.DaemonKey(*key)); err != nil {
			fmt.Fprintln(stderr, "mcpxd: daemon:", err)
			return daemon.ExitCode(err)
		}
		return 0
	case "demo-server":
		if len(args) > 0 {
			fmt.Fprint(stderr, "mcpxd: demo-server takes no arguments\n", usage)
			return 2
		}
		if err := fixture.ServeStdio(ctx, fixture.Demo(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(stderr, "mcpxd: demo-server:", err)
			return 1
		}
		return 0
	case "serve":
		return serve.Main(ctx, args, os.Stdin, stdout, stderr)
	case "version":
		fmt.Fprintf(stdout, "mcpxd %s (%s, %s/%s)\n", version.String(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return 0
	case "", "help", "-h", "--help":
		fmt.Fprint(stderr, usage)
		if cmd == "" {
			return 2
		}
		return 0
	default:
		fmt.Fprintf(stderr, "mcpxd: unknown command %q\n%s", cmd, usage)
		return 2
	}
}
