package hosts

import "path/filepath"

// opencode: $XDG_CONFIG_HOME/opencode/opencode.json[c] and a project's
// opencode.json[c], "mcp" entries with type local (command as an array,
// environment) or remote (url, headers), and enabled. opencode expands
// {env:NAME} (and {file:PATH}, which mcpx does not).
// https://opencode.ai/docs/mcp-servers/
var opencode = &Host{
	Name:    "opencode",
	Title:   "opencode",
	Project: []string{"opencode.json", "opencode.jsonc"},
	format:  always(JSON),
	user: func(e Env) []string {
		d := filepath.Join(e.ConfigHome, "opencode")
		return []string{filepath.Join(d, "opencode.json"), filepath.Join(d, "opencode.jsonc")}
	},
	read: func(doc map[string]any, c *Context) *File {
		return readServers(doc, "mcp", c, varStyle{braceEnv: true}, func(r *entryReader) Entry {
			var e Entry
			switch t := r.plain("type"); t {
			case "local":
				e.Transport = Stdio
			case "remote":
				e.Transport = HTTP
			case "":
			default:
				r.fail("type %q is not local or remote", t)
			}
			if v, ok := r.raw("command"); ok {
				switch v := v.(type) {
				case string:
					e.Command = r.tr("command", v)
				default:
					cmd := r.strList("command", v)
					if len(cmd) > 0 {
						e.Command, e.Args = cmd[0], cmd[1:]
					}
				}
			}
			e.Env = r.strMap("environment")
			e.URL = r.str("url")
			e.Headers = r.strMap("headers")
			if on, ok := r.boolean("enabled"); ok && !on {
				e.Disabled = true
			}
			return e
		})
	},
}
