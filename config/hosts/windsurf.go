package hosts

import "path/filepath"

const windsurfDisabledTools = "disabledTools"

// Windsurf: ~/.codeium/windsurf/mcp_config.json, mcpServers with command,
// args, env (stdio) or serverUrl (remote; url is accepted too), headers,
// disabled, disabledTools. Windsurf expands ${env:NAME}.
// https://docs.windsurf.com/windsurf/cascade/mcp
var windsurf = &Host{
	Name:            "windsurf",
	Title:           "Windsurf",
	format:          jsonFormat,
	ExcludeToolsKey: windsurfDisabledTools,
	user: func(e Env) []string {
		return []string{filepath.Join(e.Home, ".codeium", "windsurf", "mcp_config.json")}
	},
	read: func(doc map[string]any, c *Context) *File {
		return readServers(doc, "mcpServers", c, varStyle{envColon: true}, func(r *entryReader) Entry {
			e := standard(r)
			if u := r.str("serverUrl"); u != "" {
				if e.URL != "" && e.URL != u {
					r.fail("has both \"serverUrl\" and \"url\"")
				}
				e.URL = u
			}
			e.ExcludeTools = r.plainList(windsurfDisabledTools)
			return e
		})
	},
}
