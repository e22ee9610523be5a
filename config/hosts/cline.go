package hosts

import (
	"path/filepath"
	"time"
)

// Cline: cline_mcp_settings.json in VS Code's global storage of the
// saoudrizwan.claude-dev extension, mcpServers with command, args, env, or
// url with type (sse, streamableHttp; the older transportType too; a url
// without either is SSE, Cline's first remote transport), disabled,
// autoApprove, timeout (seconds, a call's bound). Cline expands no
// variables.
// https://docs.cline.bot/mcp/configuring-mcp-servers
var cline = &Host{
	Name:   "cline",
	Title:  "Cline",
	format: jsonFormat,
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
			if t := r.plain("transportType"); t != "" && !hadType { // Cline's older spelling
				tr, ok := transportOf(t)
				if !ok {
					r.fail("transportType %q is not one mcpx knows (stdio, sse, streamableHttp)", t)
				}
				e.Transport, hadType = tr, true
			}
			if e.URL != "" && !hadType {
				e.Transport = SSE
			}
			// Seconds a tool call may take (Cline's default is 60).
			e.CallTimeout = r.number("timeout", time.Second)
			return e
		})
	},
}
