package hosts

import "path/filepath"

// Cline: cline_mcp_settings.json in VS Code's global storage of the
// saoudrizwan.claude-dev extension, mcpServers with command, args, env, or
// url with type (sse, streamableHttp; a url without type is SSE, Cline's
// first remote transport), disabled, autoApprove. Cline expands no
// variables.
// https://docs.cline.bot/mcp/configuring-mcp-servers
var cline = &Host{
	Name:   "cline",
	Title:  "Cline",
	format: always(JSON),
	user: func(e Env) []string {
		base := filepath.Join(e.ConfigHome, "Code", "User")
		if e.AppSupport != "" {
			base = filepath.Join(e.AppSupport, "Code", "User")
		}
		return []string{filepath.Join(base, "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json")}
	},
	read: func(doc map[string]any, c *Context) *File {
		return readServers(doc, "mcpServers", c, literal, func(r *entryReader) Entry {
			hadType := r.has("type")
			e := standard(r)
			if e.URL != "" && !hadType {
				e.Transport = SSE
			}
			return e
		})
	},
}
