// Command mcpx puts every configured MCP server behind one command. main
// builds the command line and runs it; everything else lives in packages.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpx-dev/mcpx/cli"
	"github.com/mcpx-dev/mcpx/daemon"
	"github.com/mcpx-dev/mcpx/internal/fixture"
	"github.com/mcpx-dev/mcpx/serve"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args, cli.Hooks{
		Daemon:         daemon.Main,
		DaemonExitCode: daemon.ExitCode,
		DemoServer: func(ctx context.Context) error {
			return fixture.ServeStdio(ctx, fixture.Demo(), os.Stdin, os.Stdout)
		},
		Serve: serve.Main,
	})
	stop()
	os.Exit(code)
}
