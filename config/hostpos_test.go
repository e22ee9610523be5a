package config

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// posOf is the 1-based line and column of the first needle in content.
func posOf(t *testing.T, content, needle string) string {
	t.Helper()
	i := strings.Index(content, needle)
	if i < 0 {
		t.Fatalf("%q not in %q", needle, content)
	}
	line := strings.Count(content[:i], "\n") + 1
	col := len([]rune(content[strings.LastIndex(content[:i], "\n")+1:i])) + 1
	return fmt.Sprintf("%d:%d", line, col)
}

// An entry of another host's file that mcpx cannot use names FILE:LINE:COL
// of the value at fault (or of the entry), in JSON and in Codex's TOML,
// like mcpx's own files do.
func TestHostProblemsArePlaced(t *testing.T) {
	w := newHostWorld(t)
	type want struct{ server, at, what string }
	files := []struct {
		path, content string
		want          []want
	}{
		{filepath.Join(w.home, ".cursor", "mcp.json"), "{\n  \"mcpServers\": {\n    \"ok\": {\"command\": \"x\"},\n    \"cur\": {\"command\": 5}\n  }\n}\n",
			[]want{{"cur", "5}", `"command" must be a string`}}},
		{filepath.Join(w.home, ".codex", "config.toml"), "model = \"m\"\n\n[mcp_servers.tab]\nargs = [\"a\"]\ncommand = 5\n\n[mcp_servers]\ninl = { command = \"x\", tool_timeout_sec = \"slow\" }\n",
			[]want{{"tab", "5\n", `"command" must be a string`}, {"inl", `"slow"`, `"tool_timeout_sec" must be a number`}}},
		{filepath.Join(w.home, ".codeium", "windsurf", "mcp_config.json"), "{\"mcpServers\": {\n  \"wind\": {\"serverUrl\": \"ftp://x\"}}}\n",
			[]want{{"wind", `{"serverUrl"`, `is not http://`}}},
		{filepath.Join(w.home, ".config", "zed", "settings.json"), "{\"context_servers\": {\n  \"ext\": {\"enabled\": true, \"settings\": {}}}}\n",
			[]want{{"ext", `{"enabled"`, "Zed extension"}}},
		{filepath.Join(w.home, ".config", "Code", "User", "settings.json"), "{\"mcp\": {\"servers\": {\n  \"vs\": {\"command\": \"x\", \"args\": \"-y\"}}}}\n",
			[]want{{"vs", `"-y"`, `"args" must be an array of strings`}}},
		{filepath.Join(w.home, ".claude.json"), "{\"projects\": {\n  " + quote(w.proj) + ": {\"mcpServers\": {\n    \"loc\": {\"command\": \"x\", \"env\": {\"A\": [1]}}}}}}\n",
			[]want{{"loc", `{"A"`, `env.A must be a string`}}},
		{filepath.Join(w.home, ".gemini", "settings.json"), "{\"mcpServers\": {\n  \"gem\": {\"command\": \"x\", \"excludeTools\": [\"/(/\"]}}}\n",
			[]want{{"gem", `{"command"`, `tool filter`}}},
		// opencode's V2 layout: the place is inside mcp.servers.
		{filepath.Join(w.home, ".config", "opencode", "opencode.json"), "{\"mcp\": {\"servers\": {\n  \"oc2\": {\"type\": \"local\", \"command\": \"x\", \"timeout\": \"slow\"}}}}\n",
			[]want{{"oc2", `"slow"`, `"timeout" must be`}}},
	}
	for _, f := range files {
		write(t, f.path, f.content)
	}
	c := w.load(t, w.proj)
	warnings := strings.Join(c.Warnings, "\n")
	for _, f := range files {
		for _, wt := range f.want {
			s := c.Servers[wt.server]
			if s == nil {
				t.Errorf("%s missing (%v)", wt.server, c.Names())
				continue
			}
			at := f.path + ":" + posOf(t, f.content, wt.at) + ": "
			if !strings.HasPrefix(s.Problem, at) || !strings.Contains(s.Problem, wt.what) {
				t.Errorf("%s: problem %q, want %q…%s", wt.server, s.Problem, at, wt.what)
			}
			warn := fmt.Sprintf("%s: server %q: ", strings.TrimSuffix(at, ": "), wt.server)
			if !strings.Contains(warnings, warn) {
				t.Errorf("no warning %q in\n%s", warn, warnings)
			}
		}
	}
	if c.Servers["ok"].Problem != "" {
		t.Errorf("ok: %q", c.Servers["ok"].Problem)
	}
}
