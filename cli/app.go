package cli

import (
	"context"
	"fmt"
	"path/filepath"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/service"
)

// configFlag is --config as an absolute path ("" when not given), checked
// like MCPX_CONFIG (config.CheckConfigFile) but blaming the flag the user
// gave, not MCPX_CONFIG, which --config stands in for.
func configFlag(cmd invocation) (string, error) {
	file := cmd.String("config")
	if file == "" {
		return "", nil
	}
	abs, err := filepath.Abs(file)
	if err != nil {
		return "", usagef("--config %s: %v", file, err)
	}
	if _, err := config.CheckConfigFile(abs); err != nil {
		return "", &client.ConfigError{Err: fmt.Errorf("--config %s %w", file, err)}
	}
	return abs, nil
}

// jsonOut reports whether --json was given (anywhere on the line).
func jsonOut(cmd invocation) bool { return cmd.Bool("json") }

// client builds the client for the directory the global flags select. The
// service manager is detected only when the socket does not answer. The
// configuration comes from the directory's snapshot where it holds
// (client.Options.Snapshot): commands that need the whole of it use
// fullClient.
func (a *App) client(ctx context.Context, cmd invocation) (*client.Client, error) {
	return a.newClient(ctx, cmd, true)
}

// fullClient is client with every source read now.
func (a *App) fullClient(ctx context.Context, cmd invocation) (*client.Client, error) {
	return a.newClient(ctx, cmd, false)
}

func (a *App) newClient(ctx context.Context, cmd invocation, snapshot bool) (*client.Client, error) {
	m, err := a.manager()
	if err != nil {
		return nil, err
	}
	file, err := configFlag(cmd)
	if err != nil {
		return nil, err
	}
	return client.New(client.Options{
		Dir:        cmd.String("directory"),
		ConfigFile: file,
		Getenv:     a.Getenv,
		LookupEnv:  a.LookupEnv,
		Self:       m.self,
		Manager:    m,
		Paths:      &m.paths,
		Ask:        a.asker(),
		// Zero: the client's default bound.
		RequestTimeout: a.RequestTimeout,
		OnUnresponsive: a.unresponsiveNotice,
		Snapshot:       snapshot,
	})
}

// manager returns the service manager, detected on first use.
func (a *App) manager() (*lazyManager, error) {
	l, err := a.local()
	if err != nil {
		return nil, err
	}
	m := &lazyManager{paths: l.paths, self: l.self}
	m.Lazy = &service.Lazy{Choose: func(ctx context.Context) (service.Manager, error) {
		detect := a.Detect
		if detect == nil {
			detect = service.Detect
		}
		mgr, note, err := detect(ctx, a.Getenv, l.paths, l.self)
		if note != "" {
			fmt.Fprintf(a.Stderr, "mcpx: %s\n", sentence(note))
		}
		return mgr, err
	}}
	return m, nil
}

// lazyManager is the service manager detected on first use (most commands
// find the socket answering and never need one), with the paths and the
// mcpxd binary it was chosen for.
type lazyManager struct {
	*service.Lazy
	paths config.Paths
	self  string
}

// sessionFlag is --session of the commands that reach a server (call,
// prompt, read).
func sessionFlag() ucli.Flag {
	return &ucli.StringFlag{Name: "session", Usage: "session `ID` for servers with scope session (default $MCPX_SESSION_ID)"}
}

// session is the session id for servers with scope "session": --session,
// else $MCPX_SESSION_ID.
func (a *App) session(cmd invocation) string {
	if s := cmd.String("session"); s != "" {
		return s
	}
	return a.Getenv("MCPX_SESSION_ID")
}
