package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A config named by MCPX_CONFIG or --config that is not a regular file (a
// FIFO, a device) is refused saying what it is, not "file does not exist"
// (issue 18, row 12), and the message blames the one the user gave.
func TestNamedConfigThatIsNotAFile(t *testing.T) {
	e := NewEnv(t)
	fifo := filepath.Join(e.Work, "mcpx.json")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	check := func(how string, want string, args ...string) {
		t.Helper()
		r := e.Mcpx(args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, want) || strings.Contains(r.Stderr, "does not exist") {
			t.Errorf("%s: want exit 2 saying %q:\n%s", how, want, r)
		}
		r = e.Mcpx(append([]string{"--json"}, args...)...)
		var doc struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || doc.Error.Code != "config_error" || !strings.Contains(doc.Error.Message, want) {
			t.Errorf("%s --json: want config_error saying %q:\n%s", how, want, r)
		}
	}
	e.Set("MCPX_CONFIG", fifo)
	check("MCPX_CONFIG=<fifo> ls", "config file "+fifo+" (MCPX_CONFIG) is a FIFO (named pipe), not a regular file", "ls")
	check("MCPX_CONFIG=<fifo> status", "(MCPX_CONFIG) is a FIFO (named pipe)", "status")
	e.Set("MCPX_CONFIG", "/dev/null")
	check("MCPX_CONFIG=/dev/null", "config file /dev/null (MCPX_CONFIG) is a character device", "call", "demo.echo", "text=x")
	e.Set("MCPX_CONFIG", "")
	check("--config <fifo>", "--config "+fifo+" is a FIFO (named pipe)", "--config", fifo, "ls")
	check("--config <fifo> logs", "--config "+fifo+" is a FIFO (named pipe)", "--config", fifo, "logs")
}
