package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/gofrs/flock"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/mcpxd"
	"github.com/mcpx-dev/mcpx/launchd"
)

// Launchd is the Manager backed by launchd agents (package launchd), one
// per key (docs/service.md says why not one for all). There are no
// templates: Ensure writes a key's agent on first use and rewrites it when
// it would say something else. Not safe for concurrent use.
type Launchd struct {
	Agents *launchd.Agents
	Paths  config.Paths
	Self   string
}

// NewLaunchd returns the launchd manager for the environment getenv
// describes; self is the (symlink-resolved) mcpxd binary. The agents name
// it by its stable path (mcpxd.Stable: the Homebrew link, not the Cellar
// directory an upgrade deletes).
func NewLaunchd(getenv config.Getenv, paths config.Paths, self string) Manager {
	return &Launchd{Agents: launchd.New(getenv, mcpxd.Stable(self)), Paths: paths, Self: self}
}

// Name is NameLaunchd.
func (l *Launchd) Name() string { return NameLaunchd }

// Installed reports whether agents can be written: there is nothing to
// install ahead of a key.
func (l *Launchd) Installed() (bool, error) {
	if l.Agents.Dir == "" {
		return false, fmt.Errorf("locate LaunchAgents: HOME is not set")
	}
	return true, nil
}

// Install rewrites every existing mcpx agent for Self, reloading the
// loaded ones whose plist changed.
func (l *Launchd) Install() error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	keys, err := l.Agents.Keys()
	if err != nil {
		return err
	}
	for _, k := range keys {
		key := config.DaemonKey(k)
		if err := l.Agents.Reinstall(ctx, k, l.Paths.Socket(key), l.Paths.Log(key)); err != nil {
			return err
		}
	}
	return os.MkdirAll(l.Agents.Dir, 0o755)
}

// Uninstall unloads and removes every mcpx agent.
func (l *Launchd) Uninstall() error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	keys, err := l.Agents.Keys()
	if err != nil {
		return err
	}
	for _, k := range keys {
		if err := l.Agents.Remove(ctx, k); err != nil {
			return err
		}
	}
	return nil
}

// Ensure makes launchd hold key's socket (launchd.Agents.Ensure: writes,
// loads or repairs the agent). Commands that race here take turns on the
// key's start lock, so that one repairs and the others find it repaired
// instead of unloading what it just loaded.
func (l *Launchd) Ensure(ctx context.Context, key config.DaemonKey) error {
	if err := l.Paths.EnsureRuntime(); err != nil {
		return fmt.Errorf("load agent for %s: %w", key, err)
	}
	lock := flock.New(l.Paths.Lock(key), flock.SetPermissions(0o600))
	defer lock.Close()
	lctx, cancel := context.WithTimeout(ctx, time.Duration(launchd.ExitTimeout+10)*time.Second)
	defer cancel()
	if ok, err := lock.TryLockContext(lctx, 10*time.Millisecond); !ok {
		return fmt.Errorf("load agent for %s: lock %s: %w", key, l.Paths.Lock(key), errors.Join(err, lctx.Err()))
	}
	defer lock.Unlock()
	return l.Agents.Ensure(ctx, string(key), l.Paths.Socket(key), l.Paths.Log(key))
}

// Stop stops the daemon; with socket it unloads the agent.
func (l *Launchd) Stop(ctx context.Context, key config.DaemonKey, socket bool) error {
	return l.Agents.Stop(ctx, string(key), socket)
}

// State asks `launchctl print`; it never connects to the socket.
func (l *Launchd) State(ctx context.Context, key config.DaemonKey) (State, error) {
	js, err := l.Agents.State(ctx, string(key))
	if err != nil {
		return State{}, err
	}
	ok, bin, err := l.Agents.Installed(string(key))
	if err != nil {
		return State{}, err
	}
	st := fromJob(key, js, ok)
	if ok && bin != l.Agents.Bin {
		st.Detail["installedBinary"] = bin
	}
	return st, nil
}

// List reports every key that has an agent.
func (l *Launchd) List(ctx context.Context) ([]State, error) {
	keys, err := l.Agents.Keys()
	if err != nil {
		return nil, err
	}
	var out []State
	for _, k := range keys {
		st, err := l.State(ctx, config.DaemonKey(k))
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// fromJob maps launchd's view of an agent onto State.
func fromJob(key config.DaemonKey, js launchd.JobState, installed bool) State {
	st := State{
		Key: key, Manager: NameLaunchd, Units: []string{launchd.Label(string(key))},
		Socket: SocketAbsent, Service: ServiceIdle,
		Detail: map[string]string{"loaded": fmt.Sprint(js.Loaded)},
	}
	if js.State != "" {
		st.Detail["state"] = js.State
	}
	switch {
	case !installed && !js.Loaded:
		st.Service = ServiceNotInstalled
		return st
	case !js.Loaded:
		return st
	}
	if len(js.Sockets) > 0 {
		st.Socket = SocketListening
	}
	switch {
	case js.Running():
		st.Service, st.PID = ServiceRunning, js.PID
	case js.LastSignal != "":
		st.Service, st.LastExit = ServiceFailed, "signal "+js.LastSignal
	case js.LastExitCode > 0:
		st.Service, st.LastExit = ServiceFailed, fmt.Sprintf("exit-code %d", js.LastExitCode)
	}
	return st
}
