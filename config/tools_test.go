package config

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"
)

func TestToolAllowed(t *testing.T) {
	tests := []struct {
		name           string
		tools, exclude []string
		allowed        []string
		denied         []string
	}{
		{"empty allows all", nil, nil, []string{"a", "delete_note"}, nil},
		{"names", []string{"echo", "add"}, nil, []string{"echo", "add"}, []string{"time", "ech"}},
		{"glob", []string{"get_*", "l?st"}, nil, []string{"get_x", "list", "lost"}, []string{"xget_x", "lists"}},
		{"regexp", []string{"/^(read|list)_/"}, nil, []string{"read_file", "list_dir"}, []string{"write_file", "xread_"}},
		{"exclude wins", []string{"*"}, []string{"delete_*", "/drop/"}, []string{"echo"}, []string{"delete_note", "table_drop"}},
		{"exclude only", nil, []string{"slow"}, []string{"echo"}, []string{"slow"}},
	}
	for _, tt := range tests {
		o := Options{Tools: tt.tools, ExcludeTools: tt.exclude}
		for _, n := range tt.allowed {
			if !o.ToolAllowed(n) {
				t.Errorf("%s: %q denied", tt.name, n)
			}
		}
		for _, n := range tt.denied {
			if o.ToolAllowed(n) {
				t.Errorf("%s: %q allowed", tt.name, n)
			}
		}
	}
}

func TestDurationJSON(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
	}{
		{`"30s"`, 30 * time.Second},
		{`"5m"`, 5 * time.Minute},
		{`"1h30m"`, 90 * time.Minute},
		{`"2d"`, 48 * time.Hour},
		{`"1d12h"`, 36 * time.Hour},
		{`90`, 90 * time.Second},
		{`0.5`, 500 * time.Millisecond},
	}
	for _, tt := range tests {
		var d Duration
		if err := json.Unmarshal([]byte(tt.in), &d); err != nil || d.D() != tt.want {
			t.Errorf("%s → %v, %v; want %v", tt.in, d.D(), err, tt.want)
		}
	}
	for _, bad := range []string{`"soon"`, `"2x"`, `true`, `"d"`, `"1d-1h"`} {
		var d Duration
		if err := json.Unmarshal([]byte(bad), &d); err == nil {
			t.Errorf("%s accepted as %v", bad, d.D())
		}
	}
	b, err := json.Marshal(Options{CallTimeout: Duration(90 * time.Second)})
	if err != nil || string(b) != `{"callTimeout":"1m30s","policy":{}}` {
		t.Errorf("marshal = %s, %v", b, err)
	}
}

// HiddenBy names the filter that hides a tool as the file that holds it
// spells it: Windsurf's disabledTools, Gemini's includeTools/excludeTools,
// Codex's enabled_tools/disabled_tools, and mcpx's own block (in a
// .mcp.json too).
func TestHiddenBy(t *testing.T) {
	w := newHostWorld(t)
	ws := write(t, filepath.Join(w.home, ".codeium", "windsurf", "mcp_config.json"),
		`{"mcpServers": {"ws": {"command": "x", "disabledTools": ["delete_*", "drop"]}}}`)
	gem := write(t, filepath.Join(w.home, ".gemini", "settings.json"),
		`{"mcpServers": {"gem": {"command": "x", "includeTools": ["read", "write"], "excludeTools": ["write"]}}}`)
	cdx := write(t, filepath.Join(w.home, ".codex", "config.toml"), "[mcp_servers.cdx]\ncommand = \"x\"\nenabled_tools = [\"read\"]\n")
	mcp := write(t, filepath.Join(w.home, ".mcp.json"), `{"mcpServers": {"own": {"command": "x", "mcpx": {"excludeTools": ["/^rm/"]}}}}`)
	c := w.load(t, w.home)
	for _, tc := range []struct {
		server, tool string
		want         HiddenTool // zero: not hidden
	}{
		{"ws", "delete_repo", HiddenTool{Key: "disabledTools", Source: ws, Pattern: "delete_*"}},
		{"ws", "drop", HiddenTool{Key: "disabledTools", Source: ws, Pattern: "drop"}},
		{"ws", "list", HiddenTool{}},
		{"gem", "write", HiddenTool{Key: "excludeTools", Source: gem, Pattern: "write"}},
		{"gem", "exec", HiddenTool{Key: "includeTools", Source: gem}},
		{"gem", "read", HiddenTool{}},
		{"cdx", "exec", HiddenTool{Key: "enabled_tools", Source: cdx}},
		{"own", "rmdir", HiddenTool{Key: "mcpx.excludeTools", Source: mcp, Pattern: "/^rm/"}},
		{"own", "ls", HiddenTool{}},
	} {
		s := c.Servers[tc.server]
		if s == nil {
			t.Fatalf("no server %s: %+v", tc.server, c.Warnings)
		}
		got, hidden := s.HiddenBy(tc.tool)
		if hidden != (tc.want != HiddenTool{}) || got != tc.want {
			t.Errorf("%s.%s: HiddenBy = %+v, %v; want %+v", tc.server, tc.tool, got, hidden, tc.want)
		}
		if hidden == s.Options.ToolAllowed(tc.tool) {
			t.Errorf("%s.%s: HiddenBy and ToolAllowed disagree", tc.server, tc.tool)
		}
	}
}
