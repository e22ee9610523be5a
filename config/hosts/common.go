package hosts

// standard reads the keys most hosts share (the Claude Desktop shape):
// command, args, env, cwd, url, headers, type, disabled.
func standard(r *entryReader) Entry {
	e := Entry{
		Command: r.str("command"),
		Args:    r.strs("args"),
		Env:     r.strMap("env"),
		Cwd:     r.str("cwd"),
		URL:     r.str("url"),
		Headers: r.strMap("headers"),
	}
	if t := r.plain("type"); t != "" {
		tr, ok := transportOf(t)
		if !ok {
			r.fail("type %q is not one mcpx knows (stdio, http, sse)", t)
		}
		e.Transport = tr
	}
	if d, ok := r.boolean("disabled"); ok {
		e.Disabled = d
	}
	return e
}

// readServers maps every entry of doc[key] with one entry function.
func readServers(doc map[string]any, key string, c *Context, vars varStyle, one func(*entryReader) Entry) *File {
	f := &File{}
	m := serverMap(doc, key, f, c)
	for _, name := range sortedNames(m) {
		r, ok := newEntry(name, m[name], vars, c)
		e := Entry{Name: name, Problem: r.problem}
		if ok {
			e = r.entry(one(r))
		}
		e.At = []string{key, name}
		f.Entries = append(f.Entries, e)
	}
	return f
}

// The tool filters of mcpx's own format (in every file of format MCPX,
// whatever its host: a .mcp.json too).
const MCPXToolsKey, MCPXExcludeToolsKey = "mcpx.tools", "mcpx.excludeTools"

// mcpxHost is mcpx's own files (and any file no host claims): read by the
// config package's strict parser.
var mcpxHost = &Host{
	Name:            "mcpx",
	Title:           "mcpx",
	Project:         []string{".mcpx.json", ".mcpx/config.json"},
	format:          mcpxFormat,
	ToolsKey:        MCPXToolsKey,
	ExcludeToolsKey: MCPXExcludeToolsKey,
	user: func(e Env) []string {
		return []string{e.ConfigHome + "/mcpx/config.json"}
	},
}
