package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/proc"
	"github.com/mcpx-dev/mcpx/internal/testkit"
)

type daemonsDoc struct {
	Daemons []struct {
		DaemonKey    string   `json:"daemonKey"`
		State        string   `json:"state"`
		Pid          int      `json:"pid"`
		Configs      []string `json:"configs"`
		ConfigsExist bool     `json:"configsExist"`
	} `json:"daemons"`
	Pruned *[]string `json:"pruned"`
}

func (d daemonsDoc) state(key string) string {
	for _, e := range d.Daemons {
		if e.DaemonKey == key {
			return e.State
		}
	}
	return "absent"
}

// Two projects of one user: daemons lists both, stop --all stops both, a
// daemon killed without cleanup is stale, and --prune removes it and the
// record of a deleted config.
func TestDaemonsStopAllAndPrune(t *testing.T) {
	e := NewEnv(t)
	projects := map[string]string{}
	for _, name := range []string{"alpha", "beta"} {
		dir := filepath.Join(e.Root, name)
		e.WriteFile(filepath.Join(dir, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {"fx": {"command": %s}}}`, jsonString(fixtureBin)))
		if r := e.McpxIn(dir, "call", "fx.echo", "text="+name); r.Code != 0 || r.Stdout != name {
			t.Fatalf("%s", r)
		}
		var st statusDoc
		if r := e.McpxIn(dir, "--json", "status"); r.Code != 0 || jsonInto(r.Stdout, &st) != nil {
			t.Fatalf("%s", r)
		}
		projects[name] = st.DaemonKey
	}

	var doc daemonsDoc
	e.JSON(&doc, "daemons")
	for name, key := range projects {
		if doc.state(key) != "running" {
			t.Fatalf("%s (%s) not running in daemons: %+v", name, key, doc)
		}
	}

	r := e.MustOK("--json", "stop", "--all")
	var stopped struct {
		Stopped []struct {
			DaemonKey  string `json:"daemonKey"`
			WasRunning bool   `json:"wasRunning"`
		} `json:"stopped"`
	}
	if err := jsonInto(r.Stdout, &stopped); err != nil {
		t.Fatal(err)
	}
	was := map[string]bool{}
	for _, s := range stopped.Stopped {
		was[s.DaemonKey] = s.WasRunning
	}
	for name, key := range projects {
		if !was[key] {
			t.Fatalf("stop --all did not report stopping %s (%s): %s", name, key, r)
		}
	}
	testkit.Eventually(t, 60*time.Second, "both daemons to exit", func() bool {
		return len(daemonPIDs(projects["alpha"])) == 0 && len(daemonPIDs(projects["beta"])) == 0
	})

	// alpha crashes (no cleanup: its info file stays); beta's config is deleted.
	dir := filepath.Join(e.Root, "alpha")
	e.McpxIn(dir, "call", "fx.echo", "text=again")
	pids := daemonPIDs(projects["alpha"])
	if len(pids) != 1 {
		t.Fatalf("alpha daemon pids %v", pids)
	}
	syscall.Kill(pids[0], syscall.SIGKILL)
	// Gone as mcpx judges it (proc.Alive): a process still tearing down
	// after SIGKILL has already lost its command line, which daemonPIDs
	// reads, while it can still be signalled.
	testkit.Eventually(t, 60*time.Second, "the killed daemon to go", func() bool { return !proc.Alive(pids[0]) })
	if err := os.Remove(filepath.Join(e.Root, "beta", ".mcp.json")); err != nil {
		t.Fatal(err)
	}
	e.JSON(&doc, "daemons")
	if doc.state(projects["alpha"]) != "stale" {
		t.Fatalf("killed daemon: %+v", doc)
	}

	e.JSON(&doc, "daemons", "--prune")
	if doc.Pruned == nil || len(*doc.Pruned) == 0 {
		t.Fatalf("--prune removed nothing: %+v", doc)
	}
	if s := doc.state(projects["alpha"]); s == "stale" || s == "running" {
		t.Fatalf("alpha after prune: %s", s)
	}
	if s := doc.state(projects["beta"]); s != "absent" {
		t.Fatalf("beta (config deleted) after prune: %s", s)
	}
}

func jsonInto(s string, v any) error { return json.Unmarshal([]byte(s), v) }
