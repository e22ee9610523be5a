package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/mcpxd"
)

// init writes a starter .mcp.json (the format every MCP host reads) in the
// working directory (or -C DIR). It never overwrites.
//
// --json: {"path": "<file written>"}.
func initCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:  "init",
		Usage: "write a starter .mcp.json here",
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() > 0 {
				return usagef("init takes no arguments")
			}
			dir, err := workDir(cmd)
			if err != nil {
				return err
			}
			path := filepath.Join(dir, ".mcp.json")
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if errors.Is(err, os.ErrExist) {
				return usagef("%s already exists; edit it, or remove it and run `mcpx init` again", path)
			}
			if err != nil {
				return fmt.Errorf("write %s: %w", path, err)
			}
			_, err = fmt.Fprint(f, starterConfig(demoCommand()))
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("write %s: %w", path, err)
			}
			// The user wrote it with mcpx: trusted on write.
			if _, err := config.DefaultTrustStore(a.Getenv).TrustFile(path); err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, map[string]string{"path": path})
			}
			fmt.Fprintf(a.Stdout, "wrote %s; try `mcpx ls` and `mcpx call demo.echo text=hello`\n", path)
			return nil
		},
	}
}

// demoCommand is how the starter config runs the demo server (`mcpxd
// demo-server`): "mcpxd" when that finds this mcpx's mcpxd on PATH (a
// portable file), else its absolute path.
func demoCommand() string {
	exe, err := mcpxd.Executable()
	if err != nil {
		return mcpxd.Name
	}
	self := mcpxd.Path(exe)
	if p, err := exec.LookPath(mcpxd.Name); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && real == self {
			return mcpxd.Name
		}
	}
	return self
}

func starterConfig(command string) string {
	q := fmt.Sprintf("%q", command)
	return `{
  "mcpServers": {
    "demo": {
      "command": ` + q + `,
      "args": ["demo-server"]
    }
  }
}
`
}
