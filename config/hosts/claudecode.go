package hosts

import (
	"path/filepath"
	"slices"
)

// Claude Code: ~/.claude.json holds the user scope (top-level mcpServers)
// and the local scope of each project (projects[<dir>].mcpServers, which
// applies in that directory and below). A project's .mcp.json is read by
// mcpx's own strict parser: it is the format mcpx writes too. Claude Code
// expands ${VAR} and ${VAR:-default}.
// https://docs.claude.com/en/docs/claude-code/mcp
var claudeCode = &Host{
	Name:    "claude-code",
	Title:   "Claude Code",
	Project: []string{".mcp.json"},
	user: func(e Env) []string {
		return []string{filepath.Join(e.Home, ".claude.json")}
	},
	format: func(path string) Format {
		if filepath.Base(path) == ".mcp.json" {
			return MCPX
		}
		return JSON
	},
	read: func(doc map[string]any, c *Context) *File {
		if c.Scope == "" {
			return readServers(doc, "mcpServers", c, claudeVars, claudeEntry)
		}
		p, _ := projectOf(doc, c.Scope)
		return readServers(p, "mcpServers", c, claudeVars, claudeEntry).under("projects", c.Scope)
	},
	// A .mcp.json whose servers the user approved in Claude Code
	// (enableAllProjectMcpServers, enabledMcpjsonServers in
	// ~/.claude.json) needs no `mcpx trust` for them.
	approvals: func(path string, e Env, doc func(string) map[string]any) func(string) bool {
		if filepath.Base(path) != ".mcp.json" {
			return nil
		}
		return ClaudeApprovalOf(doc(filepath.Join(e.Home, ".claude.json")), filepath.Dir(path)).Approved
	},
}

var claudeVars = varStyle{dollarBrace: true}

func claudeEntry(r *entryReader) Entry { return standard(r) }

func projectOf(doc map[string]any, dir string) (map[string]any, bool) {
	projects, _ := doc["projects"].(map[string]any)
	p, ok := projects[dir].(map[string]any)
	return p, ok
}

// ClaudeScopes are the project directories of ~/.claude.json that have
// local-scope servers and contain dir (dir itself or an ancestor), nearest
// first.
func ClaudeScopes(doc map[string]any, dir string) []string {
	projects, _ := doc["projects"].(map[string]any)
	var out []string
	for d := dir; ; d = filepath.Dir(d) {
		if p, ok := projects[d].(map[string]any); ok {
			if m, ok := p["mcpServers"].(map[string]any); ok && len(m) > 0 {
				out = append(out, d)
			}
		}
		if d == filepath.Dir(d) {
			return out
		}
	}
}

// ClaudeApproval is what ~/.claude.json says about a project's .mcp.json
// servers: the user approved all of them, or these names (and refused
// those in Disabled).
type ClaudeApproval struct {
	All      bool
	Enabled  []string
	Disabled []string
}

// Approved reports whether Claude Code's approval covers server name.
func (a ClaudeApproval) Approved(name string) bool {
	if slices.Contains(a.Disabled, name) {
		return false
	}
	return a.All || slices.Contains(a.Enabled, name)
}

// ClaudeApprovalOf reads the approval of the .mcp.json in project dir.
func ClaudeApprovalOf(doc map[string]any, dir string) ClaudeApproval {
	var a ClaudeApproval
	p, ok := projectOf(doc, dir)
	if !ok {
		return a
	}
	a.All, _ = p["enableAllProjectMcpServers"].(bool)
	a.Enabled = stringsOf(p["enabledMcpjsonServers"])
	a.Disabled = stringsOf(p["disabledMcpjsonServers"])
	return a
}

func stringsOf(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, e := range list {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
