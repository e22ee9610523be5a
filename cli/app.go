package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/service"
)

// jsonOut reports whether --json was given (anywhere on the line).
func jsonOut(cmd *ucli.Command) bool { return cmd.Bool("json") }

// client builds the client for the directory the global flags select. The
// service manager is detected only when the socket does not answer.
func (a *App) client(ctx context.Context, cmd *ucli.Command) (*client.Client, error) {
	m, err := a.manager()
	if err != nil {
		return nil, err
	}
	file := cmd.String("config")
	if file != "" {
		if file, err = filepath.Abs(file); err != nil {
			return nil, usagef("--config %s: %v", cmd.String("config"), err)
		}
		// Blame the flag the user gave, not MCPX_CONFIG (which --config
		// stands in for below).
		if fi, err := os.Stat(file); err != nil {
			return nil, &client.ConfigError{Err: fmt.Errorf("--config %s: %w", cmd.String("config"), err)}
		} else if fi.IsDir() {
			return nil, &client.ConfigError{Err: fmt.Errorf("--config %s: is a directory, not a config file", cmd.String("config"))}
		}
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
	})
}

// manager returns the service manager, detected on first use.
func (a *App) manager() (*lazyManager, error) {
	l, err := a.local()
	if err != nil {
		return nil, err
	}
	return &lazyManager{app: a, paths: l.paths, self: l.self}, nil
}

// lazyManager detects the service manager on first use: most commands find
// the socket answering and never need one.
type lazyManager struct {
	app   *App
	paths config.Paths
	self  string

	once sync.Once
	m    service.Manager
	err  error
}

func (l *lazyManager) get(ctx context.Context) (service.Manager, error) {
	l.once.Do(func() {
		var note string
		detect := l.app.Detect
		if detect == nil {
			detect = service.Detect
		}
		l.m, note, l.err = detect(ctx, l.app.Getenv, l.paths, l.self)
		if note != "" {
			fmt.Fprintf(l.app.Stderr, "mcpx: %s\n", sentence(note))
		}
	})
	return l.m, l.err
}

func (l *lazyManager) Name() string {
	m, err := l.get(context.Background())
	if err != nil {
		return "unknown"
	}
	return m.Name()
}

func (l *lazyManager) Installed() (bool, error) {
	m, err := l.get(context.Background())
	if err != nil {
		return false, err
	}
	return m.Installed()
}

func (l *lazyManager) Install() error {
	m, err := l.get(context.Background())
	if err != nil {
		return err
	}
	return m.Install()
}

func (l *lazyManager) Uninstall() error {
	m, err := l.get(context.Background())
	if err != nil {
		return err
	}
	return m.Uninstall()
}

func (l *lazyManager) Ensure(ctx context.Context, key config.DaemonKey) error {
	m, err := l.get(ctx)
	if err != nil {
		return err
	}
	return m.Ensure(ctx, key)
}

func (l *lazyManager) State(ctx context.Context, key config.DaemonKey) (service.State, error) {
	m, err := l.get(ctx)
	if err != nil {
		return service.State{}, err
	}
	return m.State(ctx, key)
}

func (l *lazyManager) Stop(ctx context.Context, key config.DaemonKey, socket bool) error {
	m, err := l.get(ctx)
	if err != nil {
		return err
	}
	return m.Stop(ctx, key, socket)
}

func (l *lazyManager) List(ctx context.Context) ([]service.State, error) {
	m, err := l.get(ctx)
	if err != nil {
		return nil, err
	}
	return m.List(ctx)
}

// StartFailure forwards to the manager when it follows the daemons it
// starts (the direct manager), else nil.
func (l *lazyManager) StartFailure(ctx context.Context, key config.DaemonKey) error {
	m, err := l.get(ctx)
	if err != nil {
		return nil
	}
	if sf, ok := m.(interface {
		StartFailure(context.Context, config.DaemonKey) error
	}); ok {
		return sf.StartFailure(ctx, key)
	}
	return nil
}
