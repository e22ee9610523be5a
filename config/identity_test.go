package config

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

func sum(s string, n int) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])[:n]
}

func TestCanonical(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"b": 1, "a": {"d": [3, {"z": 1, "y": 2}], "c": "x"}}`, `{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}`},
		{` [ 1.50 , true, null, "<&>" ] `, `[1.50,true,null,"<&>"]`},
		{`"é\u00e9"`, `"éé"`},
	}
	for _, tt := range tests {
		got, err := Canonical([]byte(tt.in))
		if err != nil || string(got) != tt.want {
			t.Errorf("Canonical(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{`{"a":`, `1 2`, ``} {
		if _, err := Canonical([]byte(bad)); err == nil {
			t.Errorf("Canonical(%q) accepted", bad)
		}
	}
}

func TestIdentityGoldens(t *testing.T) {
	root := tempRoot(t)
	near := write(t, filepath.Join(root, "p", ".mcpx.json"), `{
		// comment, layout and key order do not matter
		"mcpServers": {
			"b": {"url": "https://h/${TOKEN}", "mcpx": {"callTimeout": "5s"}},
			"a": {"args": ["x"], "command": "run",},
			"off": {"mcpx": {"disabled": true}},
		}
	}`)
	far := write(t, filepath.Join(root, ".mcp.json"), `{"mcpServers": {"off": {"command": "z"}}}`)
	c, err := Load([]string{near, far}, "/x")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(c.DaemonKey()), sum(near+"\x00"+far, 12); got != want {
		t.Errorf("daemonKey = %s, want %s", got, want)
	}
	// A stdio server's definition includes the directory it runs in (its
	// project directory, here root/p); a remote one's does not.
	dir := filepath.Join(root, "p")
	schema := `{"a":{"args":["x"],"command":"run","dir":"` + dir + `"},"b":{"mcpx":{"callTimeout":"5s"},"url":"https://h/${TOKEN}"}}`
	if got, want := string(c.SchemaHash()), sum(schema, 16); got != want {
		t.Errorf("schemaHash = %s, want %s", got, want)
	}
	if got, want := string(c.Servers["b"].Hash()), sum(`{"url":"https://h/${TOKEN}"}`, 16); got != want {
		t.Errorf("serverHash(b) = %s, want %s (without the mcpx block, variables unexpanded)", got, want)
	}
	if got, want := string(c.Servers["a"].Hash()), sum(`{"args":["x"],"command":"run","dir":"`+dir+`"}`, 16); got != want {
		t.Errorf("serverHash(a) = %s, want %s", got, want)
	}
	b, _ := Load(nil, "/opt/mcpx")
	if got, want := string(b.Servers["demo"].Hash()), sum(`{"args":["demo-server"],"command":"/opt/mcpx"}`, 16); got != want {
		t.Errorf("demo serverHash = %s, want %s", got, want)
	}
	if KeyOf(nil) != BuiltinKey || b.DaemonKey() != "builtin" {
		t.Errorf("builtin key = %s", b.DaemonKey())
	}
}

func TestIdentityStability(t *testing.T) {
	root := tempRoot(t)
	path := filepath.Join(root, ".mcpx.json")
	load := func(content string) *Config {
		t.Helper()
		write(t, path, content)
		c, err := Load([]string{path}, "/x")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	base := load(`{"mcpServers": {"s": {"command": "x", "args": ["1"], "mcpx": {"callTimeout": "5s"}}, "t": {"command": "y"}}}`)
	steps := []struct {
		name       string
		content    string
		serverSame bool // Hash of "s" unchanged
		schemaSame bool
	}{
		{"layout and comments only", "{\n// hi\n\"mcpServers\": {\"t\": {\"command\": \"y\"}, \"s\": {\"mcpx\": {\"callTimeout\": \"5s\"}, \"args\": [\"1\"], \"command\": \"x\"}}}", true, true},
		{"mcpx block edit", `{"mcpServers": {"s": {"command": "x", "args": ["1"], "mcpx": {"callTimeout": "9s", "description": "d"}}, "t": {"command": "y"}}}`, true, false},
		{"args edit", `{"mcpServers": {"s": {"command": "x", "args": ["2"], "mcpx": {"callTimeout": "5s"}}, "t": {"command": "y"}}}`, false, false},
		{"another server edit", `{"mcpServers": {"s": {"command": "x", "args": ["1"], "mcpx": {"callTimeout": "5s"}}, "t": {"command": "z"}}}`, true, false},
		{"server removed", `{"mcpServers": {"s": {"command": "x", "args": ["1"], "mcpx": {"callTimeout": "5s"}}}}`, true, false},
		{"top-level mcpx only", `{"mcpx": {"idleExit": "1h"}, "mcpServers": {"s": {"command": "x", "args": ["1"], "mcpx": {"callTimeout": "5s"}}, "t": {"command": "y"}}}`, true, true},
	}
	for _, st := range steps {
		c := load(st.content)
		if c.DaemonKey() != base.DaemonKey() {
			t.Errorf("%s: daemonKey moved on a content edit", st.name)
		}
		if got := c.Servers["s"].Hash() == base.Servers["s"].Hash(); got != st.serverSame {
			t.Errorf("%s: serverHash unchanged = %v, want %v", st.name, got, st.serverSame)
		}
		if got := c.SchemaHash() == base.SchemaHash(); got != st.schemaSame {
			t.Errorf("%s: schemaHash unchanged = %v, want %v", st.name, got, st.schemaSame)
		}
	}
	if len(base.DaemonKey()) != 12 || len(base.SchemaHash()) != 16 || len(base.Servers["s"].Hash()) != 16 {
		t.Errorf("lengths: %s %s %s", base.DaemonKey(), base.SchemaHash(), base.Servers["s"].Hash())
	}
	// A different path is a different daemon.
	other := filepath.Join(root, "o", ".mcpx.json")
	write(t, other, `{}`)
	if KeyOf([]string{other}) == base.DaemonKey() {
		t.Error("different sources share a key")
	}
	_ = os.Remove(other)
}

func TestHashOfServerBuiltInCode(t *testing.T) {
	// Servers made by other packages' tests have no Raw; hashing must still work.
	s := &Server{Name: "x", Command: "c", Args: []string{"a"}, Options: Options{Sharing: SharingExclusive}}
	if got, want := string(s.Hash()), sum(`{"args":["a"],"command":"c"}`, 16); got != want {
		t.Errorf("hash = %s, want %s", got, want)
	}
}
