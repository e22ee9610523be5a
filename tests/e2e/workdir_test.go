package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Stdio servers start in the project directory of the file that defines
// them (user-level files: $HOME), or in their entry's cwd taken from there,
// so `.` and relative paths in args mean what the host that wrote the file
// means — never the daemon's working directory (`/` under the direct
// manager). The same entry in two directories is two servers.
func TestServersStartInTheirProjectDirectory(t *testing.T) {
	filesystem := npmBin(t, "mcp-server-filesystem")
	e := NewEnv(t)
	fx := jsonString(fixtureBin)
	// The docs' own example, as a user types it: `.` is this project.
	e.MustOK("config", "add", "fs", "--", filesystem, ".")
	r := e.MustOK("call", "fs.list_allowed_directories")
	if !strings.Contains("\n"+r.Stdout+"\n", "\n"+e.Work+"\n") {
		t.Fatalf("server-filesystem with . serves %q, want the project directory %s", r.Stdout, e.Work)
	}

	script := e.WriteUntrusted(filepath.Join(e.Work, "tools", "run.sh"), "exec "+fixtureBin+"\n")
	if err := os.Chmod(script, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(e.Work, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	caller := filepath.Join(e.Work, "elsewhere")
	if err := os.MkdirAll(caller, 0o755); err != nil {
		t.Fatal(err)
	}
	e.WriteFile(filepath.Join(e.Work, ".mcpx.json"), fmt.Sprintf(`{"mcpServers": {
  "fs": {"command": %[2]s, "args": ["."]},
  "here": {"command": %[1]s},
  "rel": {"command": "/bin/sh", "args": ["tools/run.sh"]},
  "sub": {"command": %[1]s, "cwd": "sub"},
  "cw": {"command": %[1]s, "mcpx": {"scope": "cwd"}}
}}`, fx, jsonString(filesystem)))
	// The very same entry as "here", in the parent directory and in the
	// user file.
	e.WriteFile(filepath.Join(e.Root, ".mcpx.json"), fmt.Sprintf(`{"mcpServers": {"up": {"command": %s}}}`, fx))
	e.WriteUntrusted(filepath.Join(e.Home, ".config", "mcpx", "config.json"), fmt.Sprintf(`{"mcpServers": {"home": {"command": %s}}}`, fx))

	cwd := func(dir, ns string) string {
		t.Helper()
		r := e.McpxIn(dir, "call", ns+".cwd")
		if r.Code != 0 {
			t.Fatalf("%s", r)
		}
		return strings.TrimSpace(r.Stdout)
	}
	for ns, want := range map[string]string{
		"here": e.Work,                       // the directory holding .mcpx.json
		"rel":  e.Work,                       // relative args resolve there
		"sub":  filepath.Join(e.Work, "sub"), // cwd, relative to the project directory
		"up":   e.Root,                       // a parent's file: its own directory
		"home": e.Home,                       // a user-level file: $HOME
	} {
		if got := cwd(e.Work, ns); got != want {
			t.Errorf("%s runs in %q, want %q", ns, got, want)
		}
	}
	// config --json says where each runs.
	var doc struct {
		Servers map[string]struct{ Dir string } `json:"servers"`
	}
	e.JSON(&doc, "config")
	if doc.Servers["here"].Dir != e.Work || doc.Servers["up"].Dir != e.Root || doc.Servers["home"].Dir != e.Home {
		t.Errorf("config --json dirs: %+v", doc.Servers)
	}
	// scope cwd: one instance per caller directory, running in it.
	if got := cwd(caller, "cw"); got != caller {
		t.Errorf("cw (scope cwd) runs in %q, want the caller's %q", got, caller)
	}
	// Three copies of one entry in three directories: three instances.
	pids := map[string]bool{}
	for _, ns := range []string{"here", "up", "home"} {
		pids[strings.TrimSpace(e.MustOK("call", ns+".pid").Stdout)] = true
	}
	if len(pids) != 3 {
		t.Errorf("here, up and home share instances: pids %v", pids)
	}
	r = e.MustOK("call", "fs.list_allowed_directories")
	if !strings.Contains("\n"+r.Stdout+"\n", "\n"+e.Work+"\n") {
		t.Errorf("fs serves %q, want %s", r.Stdout, e.Work)
	}
}
