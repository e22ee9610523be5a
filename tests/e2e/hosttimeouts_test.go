package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A host's own call timeout bounds calls when mcpx reads the host's file
// live and after `mcpx config import` copied the entry into mcpx's own
// file (issue 18, row 12): Codex's tool_timeout_sec, Gemini's timeout (ms)
// and Cline's timeout (seconds), which mcpx did not apply at all before.
func TestHostTimeoutsLiveAndImported(t *testing.T) {
	e := NewEnv(t)
	fx := jsonString(fixtureBin)
	files := map[string]string{
		"codex":  e.WriteUntrusted(filepath.Join(e.Home, ".codex", "config.toml"), fmt.Sprintf("[mcp_servers.cx]\ncommand = %s\ntool_timeout_sec = 1\nstartup_timeout_sec = 30\n", fx)),
		"gemini": e.WriteUntrusted(filepath.Join(e.Home, ".gemini", "settings.json"), fmt.Sprintf(`{"mcpServers": {"gem": {"command": %s, "timeout": 1000}}}`, fx)),
		"cline": e.WriteUntrusted(filepath.Join(e.Home, ".config", "Code", "User", "globalStorage", "saoudrizwan.claude-dev", "settings", "cline_mcp_settings.json"),
			fmt.Sprintf(`{"mcpServers": {"cl": {"command": %s, "timeout": 1, "autoApprove": []}}}`, fx)),
	}
	// timesOut calls NS.slow for 30 s: only the host's 1 s bound ends it
	// early, as a timeout.
	timesOut := func(step, ns string) {
		t.Helper()
		r := e.Mcpx("--json", "call", ns+".slow", "seconds=30")
		var doc struct {
			Error struct{ Code string } `json:"error"`
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 3 || doc.Error.Code != "timeout" {
			t.Errorf("%s: %s.slow should be cut off by the host's 1 s timeout:\n%s", step, ns, r)
		}
	}
	for _, ns := range []string{"cx", "gem", "cl"} {
		timesOut("read live", ns)
	}

	for _, host := range []string{"codex", "gemini", "cline"} {
		e.MustOK("config", "import", host)
	}
	imported, err := os.ReadFile(filepath.Join(e.Work, ".mcpx.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"callTimeout": "1s"`, `"startTimeout": "30s"`} {
		if !strings.Contains(string(imported), want) {
			t.Errorf("the imported file lacks %s:\n%s", want, imported)
		}
	}
	// The hosts' files go; the imported copies keep the bound.
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	for _, ns := range []string{"cx", "gem", "cl"} {
		timesOut("imported", ns)
	}
	if r := e.MustOK("call", "cl.echo", "text=fine"); r.Stdout != "fine" {
		t.Errorf("a quick call: %s", r)
	}
}
