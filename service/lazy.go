package service

import (
	"context"
	"sync"

	"github.com/mcpx-dev/mcpx/config"
)

// Lazy is a Manager chosen on first use: most commands find the daemon's
// socket answering and never need a service manager, so detecting one
// (which may ask the user bus) waits until something does. Safe for
// concurrent use; Choose runs once.
type Lazy struct {
	// Choose picks the manager (typically through Detect).
	Choose func(ctx context.Context) (Manager, error)

	once sync.Once
	m    Manager
	err  error
}

// Get returns the chosen manager, choosing it on the first call.
func (l *Lazy) Get(ctx context.Context) (Manager, error) {
	l.once.Do(func() { l.m, l.err = l.Choose(ctx) })
	return l.m, l.err
}

// Name is the chosen manager's name, or "unknown" when none could be chosen.
func (l *Lazy) Name() string {
	m, err := l.Get(context.Background())
	if err != nil {
		return "unknown"
	}
	return m.Name()
}

func (l *Lazy) Installed() (bool, error) {
	m, err := l.Get(context.Background())
	if err != nil {
		return false, err
	}
	return m.Installed()
}

func (l *Lazy) Install() error {
	m, err := l.Get(context.Background())
	if err != nil {
		return err
	}
	return m.Install()
}

func (l *Lazy) Uninstall() error {
	m, err := l.Get(context.Background())
	if err != nil {
		return err
	}
	return m.Uninstall()
}

func (l *Lazy) Ensure(ctx context.Context, key config.DaemonKey) error {
	m, err := l.Get(ctx)
	if err != nil {
		return err
	}
	return m.Ensure(ctx, key)
}

func (l *Lazy) State(ctx context.Context, key config.DaemonKey) (State, error) {
	m, err := l.Get(ctx)
	if err != nil {
		return State{}, err
	}
	return m.State(ctx, key)
}

func (l *Lazy) Stop(ctx context.Context, key config.DaemonKey, socket bool) error {
	m, err := l.Get(ctx)
	if err != nil {
		return err
	}
	return m.Stop(ctx, key, socket)
}

func (l *Lazy) List(ctx context.Context) ([]State, error) {
	m, err := l.Get(ctx)
	if err != nil {
		return nil, err
	}
	return m.List(ctx)
}

// StartFailure forwards to the chosen manager when it follows the daemons
// it starts (the direct manager), else nil.
func (l *Lazy) StartFailure(ctx context.Context, key config.DaemonKey) error {
	m, err := l.Get(ctx)
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
