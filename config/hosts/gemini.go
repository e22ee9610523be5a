package hosts

import (
	"path/filepath"
	"slices"
	"time"
)

const geminiIncludeTools, geminiExcludeTools = "includeTools", "excludeTools"

// Gemini CLI: ~/.gemini/settings.json and .gemini/settings.json,
// mcpServers with command, args, env, cwd (stdio), url (SSE!), httpUrl
// (streamable HTTP), headers, includeTools, excludeTools, timeout (ms, a
// call's bound); the top-level
// "mcp": {"allowed", "excluded"} lists pick servers by name. Gemini expands
// $VAR and ${VAR} in its settings.
// https://github.com/google-gemini/gemini-cli/blob/main/docs/tools/mcp-server.md
var gemini = &Host{
	Name:            "gemini",
	Title:           "Gemini CLI",
	Project:         []string{".gemini/settings.json"},
	format:          jsonFormat,
	ToolsKey:        geminiIncludeTools,
	ExcludeToolsKey: geminiExcludeTools,
	user: func(e Env) []string {
		return []string{filepath.Join(e.Home, ".gemini", "settings.json")}
	},
	read: func(doc map[string]any, c *Context) *File {
		// "mcp": {"allowed": [...], "excluded": [...]} pick servers by name.
		mcp, _ := doc["mcp"].(map[string]any)
		allowed, excluded := stringsOf(mcp["allowed"]), stringsOf(mcp["excluded"])
		return readServers(doc, "mcpServers", c, varStyle{dollarBrace: true, bareDollar: true}, func(r *entryReader) Entry {
			e := standard(r)
			if e.URL != "" && e.Transport == "" {
				e.Transport = SSE // Gemini's "url" is an SSE endpoint
			}
			if u := r.str("httpUrl"); u != "" {
				if e.URL != "" {
					r.fail("has both \"url\" and \"httpUrl\"")
				}
				e.URL, e.Transport = u, HTTP
			}
			e.Tools = r.plainList(geminiIncludeTools)
			e.ExcludeTools = r.plainList(geminiExcludeTools)
			e.Description = r.plain("description")
			e.CallTimeout = r.number("timeout", time.Millisecond)
			if slices.Contains(excluded, r.name) || (len(allowed) > 0 && !slices.Contains(allowed, r.name)) {
				e.Disabled = true
			}
			return e
		})
	},
}
