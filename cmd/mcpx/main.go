// Command mcpx puts every configured MCP server behind one command. main
// builds the command line and runs it; everything else lives in packages.
// mcpx links no MCP and no JSON-schema library: whatever needs one is the
// daemon binary, mcpxd (cmd/mcpxd), which mcpx finds beside itself or on
// PATH.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpx-dev/mcpx/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args, cli.Hooks{})
	stop()
	os.Exit(code)
}
