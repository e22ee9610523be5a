package e2e

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// A host file that does not parse is loud where the user looks: ls ends
// with a line naming FILE:LINE:COL and saying its servers are not
// available, ls --json lists it, and calling a namespace that would have
// come from it names the file (text and --json). Codex's TOML too; and an
// entry mcpx cannot use in a host file is placed like in mcpx's own files.
func TestBrokenHostFileIsLoud(t *testing.T) {
	e := NewEnv(t)
	fx := jsonString(fixtureBin)
	e.WriteUntrusted(filepath.Join(e.Home, ".config", "mcpx", "config.json"), fmt.Sprintf(`{"mcpServers": {"fx": {"command": %s}}}`, fx))
	cursor := e.WriteUntrusted(filepath.Join(e.Home, ".cursor", "mcp.json"), fmt.Sprintf("{\n  \"mcpServers\": {\n    \"cur\": {\"command\": %s},,\n  }\n}\n", fx))
	codex := e.WriteUntrusted(filepath.Join(e.Home, ".codex", "config.toml"), "model = \"m\"\n[mcp_servers.cdx\ncommand = \"x\"\n")
	gemini := e.WriteUntrusted(filepath.Join(e.Home, ".gemini", "settings.json"), "{\"mcpServers\": {\n  \"gem\": {\"command\": \"x\", \"args\": \"-y pkg\"}}}\n")

	r := e.MustOK("ls")
	lines := strings.Split(strings.TrimSpace(r.Stderr), "\n")
	for _, file := range []string{cursor + ":3:", codex + ":2:"} {
		found := false
		for _, l := range lines {
			if strings.HasPrefix(l, "mcpx: "+file) && strings.HasSuffix(l, "; its servers are not available.") {
				found = true
			}
		}
		if !found {
			t.Errorf("ls does not end with a line for %s…:\n%s", file, r.Stderr)
		}
	}
	if !strings.Contains(r.Stdout, "invalid: "+gemini+":2:35: ") {
		t.Errorf("ls: gem's problem without its place:\n%s", r.Stdout)
	}

	var ns api.NamespacesResponse
	e.JSON(&ns, "ls")
	if len(ns.Unavailable) != 2 || ns.Unavailable[0].Path != cursor || ns.Unavailable[0].Host != "cursor" ||
		!strings.HasPrefix(ns.Unavailable[0].Error, cursor+":3:") || ns.Unavailable[1].Path != codex {
		t.Errorf("ls --json unavailableSources: %+v", ns.Unavailable)
	}

	r = e.Mcpx("call", "cur.echo", "text=x")
	if r.Code != 2 || !strings.Contains(r.Stderr, cursor+":3:") || !strings.Contains(r.Stderr, "its servers are not available") {
		t.Errorf("call of a namespace from the broken file: %s", r)
	}
	r = e.Mcpx("--json", "call", "cur.echo", "text=x")
	var doc struct {
		Error struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || !strings.Contains(doc.Error.Message, cursor+":3:") {
		t.Errorf("call --json: %s", r)
	}
	if r := e.MustOK("call", "fx.echo", "text=ok"); r.Stdout != "ok" {
		t.Errorf("fx beside the broken files: %s", r)
	}
}
