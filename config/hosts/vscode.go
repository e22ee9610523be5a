package hosts

import "path/filepath"

// VS Code: the user's mcp.json and .vscode/mcp.json hold "servers" and
// "inputs"; settings.json holds the older "mcp": {"servers", "inputs"}.
// An entry has "type" (stdio, http, sse), command, args, env, cwd or url,
// headers. Variables: ${env:NAME}, ${userHome}, ${workspaceFolder},
// ${input:ID} (asked of the user; `inputs` says how).
// https://code.visualstudio.com/docs/copilot/customization/mcp-servers
var vscode = &Host{
	Name:    "vscode",
	Title:   "VS Code",
	Project: []string{".vscode/mcp.json"},
	format:  jsonFormat,
	user: func(e Env) []string {
		base := filepath.Join(e.ConfigHome, "Code", "User")
		if e.AppSupport != "" {
			base = filepath.Join(e.AppSupport, "Code", "User")
		}
		return []string{filepath.Join(base, "mcp.json"), filepath.Join(base, "settings.json")}
	},
	read: func(doc map[string]any, c *Context) *File {
		var at []string
		if filepath.Base(c.Path) == "settings.json" {
			if m, ok := doc["mcp"].(map[string]any); ok {
				doc, at = m, []string{"mcp"}
			} else if _, ok := doc["mcp.servers"]; ok {
				return readServers(doc, "mcp.servers", c, vscodeVars, standard)
			} else {
				return &File{}
			}
		}
		f := readServers(doc, "servers", c, vscodeVars, standard).under(at...)
		f.Inputs = inputsOf(doc["inputs"])
		return f
	},
}

func inputsOf(v any) []Input {
	list, _ := v.([]any)
	var out []Input
	for _, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			continue
		}
		id, _ := m["id"].(string)
		if id == "" {
			continue
		}
		in := Input{ID: id}
		in.Description, _ = m["description"].(string)
		in.Password, _ = m["password"].(bool)
		out = append(out, in)
	}
	return out
}
