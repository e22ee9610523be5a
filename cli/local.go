package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/mcpxd"
	"github.com/mcpx-dev/mcpx/search"
	"github.com/mcpx-dev/mcpx/service"
)

// Helpers of the commands that look at daemons from the outside (status,
// daemons, resolve, stop --all, logs, install, doctor): they read files and
// ask the service manager, and never activate a daemon.

// local is what those commands need: the daemon binary, the mcpx
// directories and the service manager.
type local struct {
	// self is the mcpxd binary that goes with this mcpx (mcpxd.Path): what
	// units, agents and the direct manager start and what the built-in
	// config runs (`mcpxd demo-server`).
	self  string
	paths config.Paths
}

func (a *App) local() (*local, error) {
	if err := checkServiceMode(a.Getenv("MCPX_SERVICE")); err != nil {
		return nil, err
	}
	exe, err := mcpxd.Executable()
	if err != nil {
		return nil, err
	}
	self := mcpxd.Path(exe)
	paths, err := a.paths()
	if err != nil {
		return nil, err
	}
	return &local{self: self, paths: paths}, nil
}

// paths resolves mcpx's directories. When it had to make a private
// directory because another user took the usual one, it says so on stderr;
// that happens once, since later processes find the one it recorded.
func (a *App) paths() (config.Paths, error) {
	paths, note, err := config.ResolvePaths(a.Getenv)
	if err != nil {
		return config.Paths{}, fmt.Errorf("find mcpx directories: %w", err)
	}
	if note != "" {
		fmt.Fprintf(a.Stderr, "mcpx: %s\n", sentence(note))
	}
	return paths, nil
}

// detect chooses the service manager without installing anything
// (service.Choose): the commands that use it must leave the system as they
// found it.
func (a *App) detect(ctx context.Context, l *local) (service.Manager, error) {
	m, _, err := service.Choose(ctx, a.Getenv, l.paths, l.self)
	return m, err
}

// workDir is the directory the global -C flag selects (absolute), else the
// working directory.
func workDir(cmd *ucli.Command) (string, error) {
	dir := cmd.String("directory")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("find working directory: %w", err)
		}
		return wd, nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", usagef("-C %s: %v", dir, err)
	}
	return abs, nil
}

// target is the daemon this invocation would talk to: the config sources of
// the working directory (honouring --config and MCPX_CONFIG), their key, and
// the socket it would dial (MCPX_SOCKET, else the running daemon's, else the
// key's default). Nothing is parsed beyond discovery: a config that does not
// parse still has a key.
type target struct {
	dir     string
	configs []string
	key     config.DaemonKey
	socket  string
}

func (a *App) target(cmd *ucli.Command, l *local) (*target, error) {
	dir, err := workDir(cmd)
	if err != nil {
		return nil, err
	}
	getenv := a.Getenv
	file, err := configFlag(cmd)
	if err != nil {
		return nil, err
	}
	if file != "" {
		getenv = override(a.Getenv, "MCPX_CONFIG", file)
	}
	sources, err := config.Discover(dir, getenv)
	if err != nil {
		return nil, &client.ConfigError{Err: err}
	}
	t := &target{dir: dir, configs: nonNilStrings(sources), key: config.KeyOf(sources)}
	t.socket = l.paths.Socket(t.key)
	if info, err := config.ReadInfo(l.paths.Info(t.key)); err == nil && info.Socket != "" && info.Running() {
		t.socket = info.Socket
	}
	if s := a.Getenv("MCPX_SOCKET"); s != "" {
		t.socket = s
	}
	return t, nil
}

// override returns getenv with name set to value.
func override(getenv config.Getenv, name, value string) config.Getenv {
	return func(k string) string {
		if k == name {
			return value
		}
		return getenv(k)
	}
}

// withoutOverrides hides MCPX_CONFIG and MCPX_SOCKET: answers about a
// directory never depend on this process's overrides.
func withoutOverrides(getenv config.Getenv) config.Getenv {
	return func(k string) string {
		if k == "MCPX_CONFIG" || k == "MCPX_SOCKET" {
			return ""
		}
		return getenv(k)
	}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// liveStatus asks an already running daemon for GET /v1/status on socket
// (client.LiveStatus: no activation).
func liveStatus(ctx context.Context, socket string) (*api.Status, error) {
	return client.LiveStatus(ctx, socket)
}

// ago is a duration for people, to the second ("3h2m5s").
func ago(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	return d.Truncate(time.Second).String()
}

// orDash is s, or "-" for an empty table cell.
func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}

// checkServiceMode refuses an MCPX_SERVICE other than auto, systemd,
// launchd or direct before anything else happens, so the mistake is a
// usage error (exit 2) whether or not a daemon already answers.
func checkServiceMode(mode string) error {
	modes := []string{"auto", service.NameSystemd, service.NameLaunchd, service.NameDirect}
	if mode == "" || slices.Contains(modes, mode) {
		return nil
	}
	return &usageError{err: fmt.Errorf("MCPX_SERVICE=%q is not a service manager (want auto, systemd, launchd or direct)", mode),
		cmd: "mcpx", suggest: search.Suggest(mode, modes)}
}
