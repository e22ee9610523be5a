// Command mcpx puts every configured MCP server behind one command. main
// builds the command line and runs it; everything else lives in packages.
// mcpx links no MCP and no JSON-schema library: whatever needs one is the
// daemon binary, mcpxd (cmd/mcpxd), which mcpx finds beside itself or on
// PATH.
package main

import (
	"context"
	"os"
	"runtime/debug"

	"github.com/mcpx-dev/mcpx/cli"
	"github.com/mcpx-dev/mcpx/internal/stack"
)

func main() {
	collectLate()
	stack.Grow() // before the command: growing deep inside it costs more
	// No signal handler here: the commands that need one take it (see
	// cli/interrupt.go).
	os.Exit(cli.Main(context.Background(), os.Args, cli.Hooks{}))
}

// shortLivedHeap is the heap up to which mcpx runs without collecting.
const shortLivedHeap = 64 << 20

// collectLate turns the collector's pacing off in favour of a memory
// limit: mcpx lives for one command, and collecting the garbage of, say,
// a 10,000-tool listing costs more than the memory it would give back.
// Once the heap nears shortLivedHeap the runtime collects to stay near it
// (more often than usual when a command holds more than that live, e.g. a
// large --raw result; the runtime caps the collector at about half the
// CPU). GOGC or GOMEMLIMIT in the environment keep their meaning.
func collectLate() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetMemoryLimit(shortLivedHeap)
	debug.SetGCPercent(-1)
}
