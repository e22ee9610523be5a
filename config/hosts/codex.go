package hosts

import (
	"path/filepath"
	"time"
)

const codexEnabledTools, codexDisabledTools = "enabled_tools", "disabled_tools"

// Codex: ~/.codex/config.toml ($CODEX_HOME) and .codex/config.toml, tables
// [mcp_servers.NAME] with command, args, env, env_vars (names passed
// through), cwd (stdio) or url, bearer_token_env_var, http_headers,
// env_http_headers (streamable HTTP); enabled, enabled_tools,
// disabled_tools; startup_timeout_sec, tool_timeout_sec. Codex expands no
// variables in values.
// https://github.com/openai/codex/blob/main/docs/config.md
var codex = &Host{
	Name:            "codex",
	Title:           "Codex",
	Project:         []string{".codex/config.toml"},
	format:          tomlFormat,
	ToolsKey:        codexEnabledTools,
	ExcludeToolsKey: codexDisabledTools,
	user: func(e Env) []string {
		return []string{filepath.Join(e.CodexHome, "config.toml")}
	},
	read: func(doc map[string]any, c *Context) *File {
		return readServers(doc, "mcp_servers", c, literal, func(r *entryReader) Entry {
			e := Entry{
				Command: r.str("command"),
				Args:    r.strs("args"),
				Env:     r.strMap("env"),
				Cwd:     r.str("cwd"),
				URL:     r.str("url"),
				Headers: r.strMap("http_headers"),
			}
			for _, name := range r.plainList("env_vars") {
				if !validName(name) {
					r.fail("env_vars: %q is not a variable name", name)
					continue
				}
				if e.Env == nil {
					e.Env = map[string]string{}
				}
				if _, set := e.Env[name]; !set {
					e.Env[name] = "${" + name + "}"
				}
			}
			if v := r.plain("bearer_token_env_var"); v != "" {
				if !validName(v) {
					r.fail("bearer_token_env_var: %q is not a variable name", v)
				}
				if e.Headers == nil {
					e.Headers = map[string]string{}
				}
				e.Headers["Authorization"] = "Bearer ${" + v + "}"
			}
			if v, ok := r.raw("env_http_headers"); ok {
				m, _ := v.(map[string]any)
				for h, n := range m {
					name, _ := n.(string)
					if !validName(name) {
						r.fail("env_http_headers.%s: %v is not a variable name", h, n)
						continue
					}
					if e.Headers == nil {
						e.Headers = map[string]string{}
					}
					e.Headers[h] = "${" + name + "}"
				}
			}
			if on, ok := r.boolean("enabled"); ok && !on {
				e.Disabled = true
			}
			e.StartTimeout = r.number("startup_timeout_sec", time.Second)
			e.CallTimeout = r.number("tool_timeout_sec", time.Second)
			e.Tools = r.plainList(codexEnabledTools)
			e.ExcludeTools = r.plainList(codexDisabledTools)
			return e
		})
	},
}
