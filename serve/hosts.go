package serve

import (
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
)

// entry is what --print-config registers: a stdio server that runs
// `mcpx serve ARGS`, or, with --http, the URL of a running `mcpx serve
// --http` and the headers that carry the serve key.
type hostEntry struct {
	name    string   // the entry's name: mcpx, or the namespace served alone
	args    []string // stdio: the arguments after `mcpx`
	url     string   // HTTP: the endpoint
	headers map[string]string
}

// host is how one MCP host registers a server.
type host struct {
	name   string // what --print-config takes
	where  string // the file (or command) the snippet goes into
	render func(e hostEntry) (string, error)
}

// hosts are the hosts --print-config knows, by name. Each writes a remote
// server in its own keys (config/hosts reads them back the same way).
var hosts = []host{
	{"claude-code", "run it in your project (or put the JSON in .mcp.json)", func(e hostEntry) (string, error) {
		if e.url != "" {
			cmd := []string{"claude", "mcp", "add", "--transport", "http", e.name, e.url}
			for _, k := range sortedKeys(e.headers) {
				cmd = append(cmd, "--header", k+": "+e.headers[k])
			}
			return shellJoin(cmd) + "\n\n" + jsonSnippet("mcpServers", e.name, map[string]any{"type": "http", "url": e.url, "headers": e.headers}), nil
		}
		return "claude mcp add " + shellJoin([]string{e.name}) + " -- " + shellJoin(append([]string{"mcpx"}, e.args...)) + "\n\n" +
			jsonSnippet("mcpServers", e.name, map[string]any{"command": "mcpx", "args": e.args}), nil
	}},
	{"claude-desktop", "claude_desktop_config.json", func(e hostEntry) (string, error) {
		if e.url != "" {
			return "", fmt.Errorf("claude_desktop_config.json takes stdio servers only: register `mcpx serve` without --http for claude-desktop")
		}
		return jsonSnippet("mcpServers", e.name, map[string]any{"command": "mcpx", "args": e.args}), nil
	}},
	{"cursor", ".cursor/mcp.json (project) or ~/.cursor/mcp.json", func(e hostEntry) (string, error) {
		if e.url != "" {
			return jsonSnippet("mcpServers", e.name, map[string]any{"url": e.url, "headers": e.headers}), nil
		}
		return jsonSnippet("mcpServers", e.name, map[string]any{"command": "mcpx", "args": e.args}), nil
	}},
	{"vscode", ".vscode/mcp.json", func(e hostEntry) (string, error) {
		if e.url != "" {
			return jsonSnippet("servers", e.name, map[string]any{"type": "http", "url": e.url, "headers": e.headers}), nil
		}
		return jsonSnippet("servers", e.name, map[string]any{"type": "stdio", "command": "mcpx", "args": e.args}), nil
	}},
	{"codex", "~/.codex/config.toml", func(e hostEntry) (string, error) {
		head := "[mcp_servers." + tomlKey(e.name) + "]\n"
		if e.url != "" {
			var hs []string
			for _, k := range sortedKeys(e.headers) {
				hs = append(hs, tomlKey(k)+" = "+tomlString(e.headers[k]))
			}
			s := head + "url = " + tomlString(e.url) + "\n"
			if len(hs) > 0 {
				s += "http_headers = { " + strings.Join(hs, ", ") + " }\n"
			}
			return s, nil
		}
		quoted := make([]string, 0, len(e.args))
		for _, a := range e.args {
			quoted = append(quoted, tomlString(a))
		}
		return head + "command = \"mcpx\"\nargs = [" + strings.Join(quoted, ", ") + "]\n", nil
	}},
	{"gemini", ".gemini/settings.json (project) or ~/.gemini/settings.json", func(e hostEntry) (string, error) {
		if e.url != "" {
			// Gemini's "url" is an SSE endpoint; streamable HTTP is httpUrl.
			return jsonSnippet("mcpServers", e.name, map[string]any{"httpUrl": e.url, "headers": e.headers}), nil
		}
		return jsonSnippet("mcpServers", e.name, map[string]any{"command": "mcpx", "args": e.args}), nil
	}},
}

func hostNames() []string {
	out := make([]string, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, h.name)
	}
	return out
}

// printRequest is what --print-config was asked for: the serve flags
// given besides it.
type printRequest struct {
	host string
	args []string // every serve argument but --print-config and its value
	http string   // --http ADDR
	ns   string   // the namespace of a single --ns
	// key reads (or makes) the serve key; nil with --no-key.
	key func() (string, error)
}

// printConfig renders the snippet for p.host. Without --http the entry
// runs `mcpx serve` with the other flags given (--expose, --ns); with it,
// the entry is the URL of that `mcpx serve --http ADDR` (/mcp, or /mcp/NS
// for a single --ns) with the serve key in an Authorization header. A
// single --ns names the entry after the namespace.
func printConfig(p printRequest) (string, error) {
	name := strings.ToLower(strings.ReplaceAll(p.host, " ", "-"))
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
	h := hosts[i]
	e := hostEntry{name: "mcpx"}
	if p.ns != "" {
		e.name = p.ns
	}
	note := ""
	if p.http == "" {
		e.args = append([]string{"serve"}, p.args...)
	} else {
		if _, port, err := net.SplitHostPort(p.http); err != nil || port == "0" || port == "" {
			return "", fmt.Errorf("--print-config with --http needs the address serve will listen on, with its port (127.0.0.1:8765), not %q", p.http)
		}
		e.url = "http://" + p.http + "/mcp"
		if p.ns != "" {
			e.url += "/" + p.ns
		}
		if p.key != nil {
			key, err := p.key()
			if err != nil {
				return "", err
			}
			e.headers = map[string]string{"Authorization": "Bearer " + key}
		}
		note = "# with `" + shellJoin(append([]string{"mcpx", "serve"}, p.args...)) + "` running\n"
	}
	body, err := h.render(e)
	if err != nil {
		return "", fmt.Errorf("--print-config %s: %w", h.name, err)
	}
	return "# " + h.name + ": " + h.where + "\n" + note + body, nil
}

// carriedArgs is args without --print-config and its value.
func carriedArgs(args []string) []string {
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
	return keep
}

func jsonSnippet(key, name string, entry map[string]any) string {
	for k, v := range entry {
		if m, ok := v.(map[string]string); ok && len(m) == 0 {
			delete(entry, k)
		}
	}
	b, _ := json.MarshalIndent(map[string]any{key: map[string]any{name: entry}}, "", "  ")
	return string(b) + "\n"
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// tomlString quotes s as a TOML basic string (JSON's escapes are TOML's).
func tomlString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// tomlKey is s as a TOML key: bare when it can be, quoted otherwise.
func tomlKey(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) < 0 {
		return s
	}
	return tomlString(s)
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
