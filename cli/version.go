package cli

import (
	"context"
	"fmt"
	"runtime"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/internal/version"
)

// version prints the version.
//
// --json: {"version", "go", "os", "arch"}.
func versionCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:   "version",
		Usage:  "print the mcpx version",
		Action: func(ctx context.Context, cmd *ucli.Command) error { return a.versionRun(ctx, cmd) },
	}
}

// versionRun runs version with the line cmd (parsed by urfave/cli, or
// lean.go).
func (a *App) versionRun(_ context.Context, cmd invocation) error {
	if jsonOut(cmd) {
		return writeJSON(a.Stdout, map[string]string{"version": version.String(), "go": runtime.Version(),
			"os": runtime.GOOS, "arch": runtime.GOARCH})
	}
	_, err := fmt.Fprintf(a.Stdout, "mcpx %s (%s, %s/%s)\n", version.String(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return err
}
