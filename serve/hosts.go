package serve

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// host is how one MCP host registers a stdio server.
type host struct {
	name   string // what --print-config takes
	where  string // the file (or command) the snippet goes into
	render func(args []string) string
}

// hosts are the hosts --print-config knows, by name.
var hosts = []host{
	{"claude-code", "run it in your project (or put the JSON in .mcp.json)", func(args []string) string {
		return "claude mcp add mcpx -- " + shellJoin(append([]string{"mcpx", "serve"}, args...)) + "\n\n" +
			jsonSnippet("mcpServers", map[string]any{"command": "mcpx", "args": append([]string{"serve"}, args...)})
	}},
	{"claude-desktop", "claude_desktop_config.json", func(args []string) string {
		return jsonSnippet("mcpServers", map[string]any{"command": "mcpx", "args": append([]string{"serve"}, args...)})
	}},
	{"cursor", ".cursor/mcp.json (project) or ~/.cursor/mcp.json", func(args []string) string {
		return jsonSnippet("mcpServers", map[string]any{"command": "mcpx", "args": append([]string{"serve"}, args...)})
	}},
	{"vscode", ".vscode/mcp.json", func(args []string) string {
		return jsonSnippet("servers", map[string]any{"type": "stdio", "command": "mcpx", "args": append([]string{"serve"}, args...)})
	}},
	{"codex", "~/.codex/config.toml", func(args []string) string {
		quoted := make([]string, 0, len(args)+1)
		for _, a := range append([]string{"serve"}, args...) {
			b, _ := json.Marshal(a)
			quoted = append(quoted, string(b))
		}
		return "[mcp_servers.mcpx]\ncommand = \"mcpx\"\nargs = [" + strings.Join(quoted, ", ") + "]\n"
	}},
	{"gemini", ".gemini/settings.json (project) or ~/.gemini/settings.json", func(args []string) string {
		return jsonSnippet("mcpServers", map[string]any{"command": "mcpx", "args": append([]string{"serve"}, args...)})
	}},
}

func hostNames() []string {
	out := make([]string, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, h.name)
	}
	return out
}

// printConfig renders the snippet for host. The serve flags given besides
// --print-config (--expose, --ns) are carried into it.
func printConfig(name string, args []string) (string, error) {
	name = strings.ToLower(strings.ReplaceAll(name, " ", "-"))
	switch name {
	case "claude":
		name = "claude-code"
	case "vs-code", "code":
		name = "vscode"
	}
	i := slices.IndexFunc(hosts, func(h host) bool { return h.name == name })
	if i < 0 {
		return "", fmt.Errorf("--print-config knows %s, not %q", strings.Join(hostNames(), ", "), name)
	}
	var keep []string
	for j := 0; j < len(args); j++ {
		a := args[j]
		switch {
		case a == "--print-config" || a == "-print-config":
			j++ // and its value
		case strings.HasPrefix(a, "--print-config=") || strings.HasPrefix(a, "-print-config="):
		default:
			keep = append(keep, a)
		}
	}
	h := hosts[i]
	return "# " + h.name + ": " + h.where + "\n" + h.render(keep), nil
}

func jsonSnippet(key string, entry map[string]any) string {
	b, _ := json.MarshalIndent(map[string]any{key: map[string]any{"mcpx": entry}}, "", "  ")
	return string(b) + "\n"
}

// shellJoin quotes words for a POSIX shell where needed.
func shellJoin(words []string) string {
	out := make([]string, len(words))
	for i, w := range words {
		if w != "" && strings.IndexFunc(w, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=,:@", r))
		}) < 0 {
			out[i] = w
			continue
		}
		out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}
