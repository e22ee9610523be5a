package cli

import (
	"strconv"
	"strings"
)

// The text `mcpx help` shows above the commands, in parts the manual page
// (`mcpx man`, man.go) puts in sections of their own: one source for both.

// aboutStart is how to begin.
const aboutStart = "Start with `mcpx ls`, `mcpx search WORDS`, `mcpx call NS.TOOL --help`, then\n" +
	"`mcpx call NS.TOOL key=value…`. `mcpx help COMMAND` explains a command; docs/cli.md has them all."

// aboutConfigs is where configs are found.
const aboutConfigs = "Configs (every one found is used, nearest first):\n" +
	"  --config FILE or $MCPX_CONFIG   exactly that file, nothing else\n" +
	"  from the working directory up to /: .mcpx.json, .mcpx/config.json, .mcp.json, and the project\n" +
	"      files of other MCP hosts (.cursor/mcp.json, .vscode/mcp.json, ...)\n" +
	"  $XDG_CONFIG_HOME/mcpx/config.json (~/.config/mcpx/config.json), then the user files of\n" +
	"      other MCP hosts (Claude, Cursor, VS Code, ...)\n" +
	"  none at all: the built-in demo server   (`mcpx config --path` lists what is used)"

// aboutJSON is what --json promises.
const aboutJSON = "With --json every answer, failures included, is one JSON document on stdout;\n" +
	"a failure is {\"error\": {\"code\", \"message\", \"exit\", ...}}."

// exitCodes are the exit statuses of mcpx, in order.
var exitCodes = []struct {
	code    int
	meaning string
}{
	{ExitOK, "success"},
	{ExitToolError, "the tool reported an error (isError) or the server rejected the call"},
	{ExitUsage, "usage or configuration error (unknown command, namespace, tool or argument; bad config)"},
	{ExitUnavailable, "the daemon or a server failed (cannot start, timed out, went away)"},
	{ExitPolicy, "refused by policy (destructive call not confirmed or denied; untrusted config)"},
	{ExitInterrupted, "interrupted (Ctrl-C); the call in flight is cancelled"},
}

// rootDescription is the root command's description in `mcpx help`.
func rootDescription() string {
	var b strings.Builder
	b.WriteString(aboutStart + "\n\n" + aboutConfigs + "\n\nExit codes:\n")
	for _, e := range exitCodes {
		b.WriteString("  " + strconv.Itoa(e.code) + "  " + e.meaning + "\n")
	}
	b.WriteString("\n" + aboutJSON)
	return b.String()
}
