package hosts

import "path/filepath"

// Cursor: ~/.cursor/mcp.json and .cursor/mcp.json, mcpServers with command,
// args, env (stdio) or url, headers (remote). Cursor expands ${env:NAME},
// ${userHome}, ${workspaceFolder}, ${workspaceFolderBasename} and
// ${pathSeparator} (${/}). envFile is not read by mcpx (shown as ignored).
// https://cursor.com/docs/context/mcp
var cursor = &Host{
	Name:    "cursor",
	Title:   "Cursor",
	Project: []string{".cursor/mcp.json"},
	format:  jsonFormat,
	user: func(e Env) []string {
		return []string{filepath.Join(e.Home, ".cursor", "mcp.json")}
	},
	read: func(doc map[string]any, c *Context) *File {
		return readServers(doc, "mcpServers", c, vscodeVars, standard)
	},
}

var vscodeVars = varStyle{envColon: true, vscode: true}
