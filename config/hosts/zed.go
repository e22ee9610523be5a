package hosts

import "path/filepath"

// Zed: $XDG_CONFIG_HOME/zed/settings.json and .zed/settings.json,
// "context_servers" entries with command (a string, or the older
// {path, args, env} object), args, env, or url and headers; enabled.
// Servers a Zed extension provides have no command and cannot be run by
// mcpx. Zed expands no variables.
// https://zed.dev/docs/ai/mcp
var zed = &Host{
	Name:    "zed",
	Title:   "Zed",
	Project: []string{".zed/settings.json"},
	format:  jsonFormat,
	user: func(e Env) []string {
		return []string{filepath.Join(e.ConfigHome, "zed", "settings.json")}
	},
	read: func(doc map[string]any, c *Context) *File {
		return readServers(doc, "context_servers", c, literal, func(r *entryReader) Entry {
			var e Entry
			if v, ok := r.raw("command"); ok {
				switch v := v.(type) {
				case string:
					e.Command = v
				case map[string]any:
					sub, _ := newEntry(r.name, v, literal, r.c)
					e.Command = sub.str("path")
					e.Args = sub.strs("args")
					e.Env = sub.strMap("env")
					if sub.problem != "" {
						r.fail("command: %s", sub.problem)
					}
				default:
					r.fail("\"command\" must be a string or an object")
				}
			}
			if a := r.strs("args"); a != nil {
				e.Args = a
			}
			if env := r.strMap("env"); env != nil {
				e.Env = env
			}
			e.URL = r.str("url")
			e.Headers = r.strMap("headers")
			if on, ok := r.boolean("enabled"); ok && !on {
				e.Disabled = true
			}
			if e.Command == "" && e.URL == "" && !e.Disabled {
				r.failEntry("is provided by a Zed extension (no command); mcpx cannot run it")
			}
			return e
		})
	},
}
