package config

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAddRemoveServerKeepsTheRest(t *testing.T) {
	entry := map[string]any{"command": "srv", "args": []string{"a"}}
	cases := map[string]string{
		"empty":     "",
		"no map":    "{\n  // top\n  \"mcpx\": {\"idleExit\": \"1m\"}\n}\n",
		"empty map": "{\n  \"mcpServers\": {}\n}\n",
		"members": `{
  // my servers
  "mcpServers": {
    "one": {"command": "x"}, // first
    /* second */
    "two": {"command": "y"},
  },
  "other": 1
}
`,
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			out := checkAdd(t, src, entry)
			back, err := RemoveServer("f.json", out, "new")
			if err != nil {
				t.Fatal(err)
			}
			if name == "members" && string(back) != src {
				t.Errorf("remove did not restore the file:\n%s\nwant\n%s", back, src)
			}
			if c, err := loadStringAt(t, string(back)); err != nil || len(c.Servers) != strings.Count(src, "command") {
				t.Errorf("after remove: %v\n%s", err, back)
			}
		})
	}
}

// checkAdd adds entry as "new" to src and checks the result: it loads
// with the entry, keeps src's comments, refuses a second add, and --force
// replaces the entry. It returns src with the entry.
func checkAdd(t *testing.T, src string, entry map[string]any) []byte {
	t.Helper()
	out, err := AddServer("f.json", []byte(src), "new", entry, false)
	if err != nil {
		t.Fatal(err)
	}
	c, err := loadStringAt(t, string(out))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s := c.Servers["new"]; s == nil || s.Command != "srv" || len(s.Args) != 1 {
		t.Fatalf("added entry missing:\n%s", out)
	}
	for _, comment := range []string{"// my servers", "// first", "/* second */", "// top"} {
		if strings.Contains(src, comment) && !strings.Contains(string(out), comment) {
			t.Errorf("comment %q lost:\n%s", comment, out)
		}
	}
	if _, err := AddServer("f.json", out, "new", entry, false); !errors.Is(err, ErrServerExists) {
		t.Errorf("second add: %v", err)
	}
	repl, err := AddServer("f.json", out, "new", map[string]any{"url": "https://x"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := loadStringAt(t, string(repl)); err != nil || c.Servers["new"].URL != "https://x" {
		t.Fatalf("force replace: %v\n%s", err, repl)
	}
	return out
}

func TestRemoveServerPositions(t *testing.T) {
	src := "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"a\"},\n    \"b\": {\"command\": \"b\"},\n    \"c\": {\"command\": \"c\"}\n  }\n}\n"
	for _, name := range []string{"a", "b", "c"} {
		out, err := RemoveServer("f.json", []byte(src), name)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ MCPServers map[string]any }
		if err := json.Unmarshal(out, &doc); err != nil || len(doc.MCPServers) != 2 || doc.MCPServers[name] != nil {
			t.Errorf("remove %s: %v\n%s", name, err, out)
		}
	}
	if _, err := RemoveServer("f.json", []byte(src), "zz"); !errors.Is(err, ErrNoServer) {
		t.Errorf("remove unknown: %v", err)
	}
}

// What a host's entry sets of mcpx's options — timeouts, tool filters, a
// description — is applied when read live and written by EntryJSON (what
// `config import` copies), never the defaults it inherits. Cline's
// timeout (seconds) bounds calls.
func TestEntryJSONKeepsWhatTheHostSet(t *testing.T) {
	w := newHostWorld(t)
	write(t, filepath.Join(w.home, ".codex", "config.toml"), "[mcp_servers.cdx]\ncommand = \"x\"\nstartup_timeout_sec = 20\ntool_timeout_sec = 300\n")
	write(t, filepath.Join(w.home, ".gemini", "settings.json"), `{"mcpServers": {"gem": {"command": "x", "timeout": 45000, "description": "Gemini's", "excludeTools": ["rm"]}}}`)
	write(t, filepath.Join(w.home, ".config", "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"),
		`{"mcpServers": {"cl": {"command": "x", "timeout": 90, "autoApprove": []}}}`)
	write(t, filepath.Join(w.home, ".cursor", "mcp.json"), `{"mcpServers": {"cur": {"command": "x"}}}`)
	write(t, filepath.Join(w.home, ".config", "mcpx", "config.json"), `{"mcpServers": {"own": {"command": "x", "mcpx": {"scope": "cwd", "policy": {"destructive": "deny"}}}}}`)
	c := w.load(t, w.home)
	for name, want := range map[string]string{
		"cdx": `{"command":"x","mcpx":{"startTimeout":"20s","callTimeout":"5m0s"}}`,
		"gem": `{"command":"x","mcpx":{"callTimeout":"45s","excludeTools":["rm"],"description":"Gemini's"}}`,
		"cl":  `{"command":"x","mcpx":{"callTimeout":"1m30s"}}`,
		"cur": `{"command":"x"}`,
		"own": `{"command":"x","mcpx":{"scope":"cwd","policy":{"destructive":"deny"}}}`,
	} {
		s := c.Servers[name]
		if s == nil {
			t.Fatalf("no server %s (%v)", name, c.Warnings)
		}
		got, err := json.Marshal(EntryJSON(s))
		if err != nil || string(got) != want {
			t.Errorf("EntryJSON(%s) = %s, %v; want %s", name, got, err, want)
		}
	}
	if got := c.Servers["cl"].Options.CallTimeout; got != Duration(90*time.Second) {
		t.Errorf("Cline's timeout read live: callTimeout %s, want 1m30s", got)
	}
	if got := c.Servers["cur"].Options.CallTimeout; got.D() != DefaultCallTimeout {
		t.Errorf("an entry without a timeout: callTimeout %s", got)
	}
}

// editEntry is what the edit tests add: short, so expected files stay
// readable.
var editEntry = map[string]any{"command": "srv"}

// Every comment stays where the user put it: before, inside and after the
// entries, on the last entry's line (`// keep` stays on "b"'s line, not on
// the new entry's), in a file with trailing commas, in an empty map, and
// in a file with CRLF line endings. Removing the added entry gives back the
// file byte for byte; removing another one keeps the comments around it.
func TestEditsKeepCommentsAndLayout(t *testing.T) {
	tests := []struct {
		name      string
		src, want string // want: src after adding "new"
	}{
		{"comments before, inside and after; trailing comment on the last entry",
			"// head\n{\n  \"mcpServers\": {\n    // about a\n    \"a\": {\"command\": \"x\" /* inside a */},\n    \"b\": {\n      // inside b\n      \"command\": \"y\"\n    } // keep\n    // after the entries\n  }\n}\n// tail\n",
			"// head\n{\n  \"mcpServers\": {\n    // about a\n    \"a\": {\"command\": \"x\" /* inside a */},\n    \"b\": {\n      // inside b\n      \"command\": \"y\"\n    }, // keep\n    \"new\": {\n      \"command\": \"srv\"\n    }\n    // after the entries\n  }\n}\n// tail\n"},
		{"trailing commas",
			"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}, // keep\n  },\n}\n",
			"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}, // keep\n    \"new\": {\n      \"command\": \"srv\"\n    },\n  },\n}\n"},
		{"a block comment across lines after the last entry",
			"{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"} /* one\n  two */\n}}\n",
			"{\"mcpServers\": {\n  \"a\": {\"command\": \"x\"}, /* one\n  two */\n  \"new\": {\n    \"command\": \"srv\"\n  }\n}}\n"},
		{"an empty map with a comment",
			"{\n  \"mcpServers\": { // none yet\n  }\n}\n",
			"{\n  \"mcpServers\": { // none yet\n    \"new\": {\n      \"command\": \"srv\"\n    }\n  }\n}\n"},
		{"one line",
			"{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}",
			"{\"mcpServers\": {\"a\": {\"command\": \"x\"}, \"new\": {\n  \"command\": \"srv\"\n}}}"},
		{"CRLF",
			"{\r\n  \"mcpServers\": {\r\n    \"a\": {\"command\": \"x\"} // keep\r\n  }\r\n}\r\n",
			"{\r\n  \"mcpServers\": {\r\n    \"a\": {\"command\": \"x\"}, // keep\r\n    \"new\": {\r\n      \"command\": \"srv\"\r\n    }\r\n  }\r\n}\r\n"},
		{"no server map yet",
			"{\n  // top\n  \"mcpx\": {\"idleExit\": \"1m\"}\n}\n",
			"{\n  \"mcpServers\": {\n    \"new\": {\n      \"command\": \"srv\"\n    }\n  },\n  // top\n  \"mcpx\": {\"idleExit\": \"1m\"}\n}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := AddServer("f.json", []byte(tt.src), "new", editEntry, false)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.want {
				t.Fatalf("add:\n%s\nwant:\n%s", out, tt.want)
			}
			if c, err := loadStringAt(t, string(out)); err != nil || c.Servers["new"] == nil || c.Servers["new"].Command != "srv" {
				t.Fatalf("the edited file does not load the new server: %v", err)
			}
			back, err := RemoveServer("f.json", out, "new")
			if err != nil {
				t.Fatal(err)
			}
			if tt.name != "no server map yet" && string(back) != tt.src {
				t.Errorf("remove after add:\n%s\nwant the file as it was:\n%s", back, tt.src)
			}
		})
	}
}

// Removing an entry takes its text and its comma; the comments around it
// stay, and so do the other entries' comments and the file's commas.
func TestRemoveServerKeepsComments(t *testing.T) {
	src := "{\n  \"mcpServers\": {\n    // about a\n    \"a\": {\"command\": \"a\"}, // after a\n    \"b\": {\n      \"command\": \"b\" // inside b\n    },\n    \"c\": {\"command\": \"c\"} // after c\n  }\n}\n"
	tests := map[string]string{
		"a": "{\n  \"mcpServers\": {\n    // about a\n    // after a\n    \"b\": {\n      \"command\": \"b\" // inside b\n    },\n    \"c\": {\"command\": \"c\"} // after c\n  }\n}\n",
		"b": "{\n  \"mcpServers\": {\n    // about a\n    \"a\": {\"command\": \"a\"}, // after a\n    \"c\": {\"command\": \"c\"} // after c\n  }\n}\n",
		"c": "{\n  \"mcpServers\": {\n    // about a\n    \"a\": {\"command\": \"a\"}, // after a\n    \"b\": {\n      \"command\": \"b\" // inside b\n    }\n    // after c\n  }\n}\n",
	}
	for name, want := range tests {
		out, err := RemoveServer("f.json", []byte(src), name)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != want {
			t.Errorf("remove %s:\n%s\nwant:\n%s", name, out, want)
		}
	}
	crlf := strings.ReplaceAll(src, "\n", "\r\n")
	out, err := RemoveServer("f.json", []byte(crlf), "b")
	if err != nil || string(out) != strings.ReplaceAll(tests["b"], "\n", "\r\n") {
		t.Errorf("remove b from the CRLF file: %v\n%q", err, out)
	}
}

// --force replaces the value in place: the comments around it stay.
func TestAddServerForceKeepsComments(t *testing.T) {
	src := "{\n  \"mcpServers\": {\n    // about a\n    \"a\": {\"command\": \"x\"}, // after a\n    \"b\": {\"command\": \"y\"}\n  }\n}\n"
	want := "{\n  \"mcpServers\": {\n    // about a\n    \"a\": {\n      \"command\": \"srv\"\n    }, // after a\n    \"b\": {\"command\": \"y\"}\n  }\n}\n"
	out, err := AddServer("f.json", []byte(src), "a", editEntry, true)
	if err != nil || string(out) != want {
		t.Fatalf("force: %v\n%s\nwant:\n%s", err, out, want)
	}
}
