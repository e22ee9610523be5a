package hosts

import "path/filepath"

// Claude Desktop: claude_desktop_config.json, mcpServers of stdio servers
// (command, args, env). It expands no variables.
// https://modelcontextprotocol.io/quickstart/user
var claudeDesktop = &Host{
	Name:   "claude-desktop",
	Title:  "Claude Desktop",
	format: jsonFormat,
	user: func(e Env) []string {
		if e.AppSupport != "" {
			return []string{filepath.Join(e.AppSupport, "Claude", "claude_desktop_config.json")}
		}
		return []string{filepath.Join(e.ConfigHome, "Claude", "claude_desktop_config.json")}
	},
	read: func(doc map[string]any, c *Context) *File {
		return readServers(doc, "mcpServers", c, literal, standard)
	},
}
