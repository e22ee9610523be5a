package service

import (
	"context"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/units"
)

// opTimeout bounds Install and Uninstall, which take no context.
const opTimeout = 60 * time.Second

// Systemd is the Manager backed by the systemd user manager (package
// units). Not safe for concurrent use.
type Systemd struct {
	Units *units.Systemd
	Paths config.Paths
	Self  string
}

// NewSystemd returns the systemd manager for the environment getenv
// describes; self is the mcpxd binary the units run.
func NewSystemd(getenv config.Getenv, paths config.Paths, self string) Manager {
	return newSystemd(getenv, paths, self)
}

func newSystemd(getenv config.Getenv, paths config.Paths, self string) *Systemd {
	return &Systemd{Units: units.New(getenv, self), Paths: paths, Self: self}
}

// Name is NameSystemd.
func (s *Systemd) Name() string { return NameSystemd }

// Installed reports whether both unit templates are installed.
func (s *Systemd) Installed() (bool, error) {
	ok, _, err := s.Units.Installed()
	return ok, err
}

// Install writes the templates for Self and reloads the manager.
func (s *Systemd) Install() error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return s.Units.Install(ctx)
}

// Uninstall stops every instance and removes the templates.
func (s *Systemd) Uninstall() error {
	ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
	defer cancel()
	return s.Units.Uninstall(ctx)
}

// Ensure starts mcpx@<key>.socket; the first connection starts the service.
func (s *Systemd) Ensure(ctx context.Context, key config.DaemonKey) error {
	return s.Units.Ensure(ctx, string(key))
}

// Stop stops mcpx@<key>.service, and with socket the socket unit too.
func (s *Systemd) Stop(ctx context.Context, key config.DaemonKey, socket bool) error {
	return s.Units.Stop(ctx, string(key), socket)
}

// State reads both units over D-Bus; it never starts anything.
// Detail["installedBinary"] is set when the installed units run a binary
// other than Self.
func (s *Systemd) State(ctx context.Context, key config.DaemonKey) (State, error) {
	ks, err := s.Units.State(ctx, string(key))
	if err != nil {
		return State{}, err
	}
	st := s.fromUnits(ks)
	if ok, bin, err := s.Units.Installed(); err == nil && ok && bin != s.Self {
		st.Detail["installedBinary"] = bin
	}
	return st, nil
}

// List reports every key with a loaded mcpx@ unit.
func (s *Systemd) List(ctx context.Context) ([]State, error) {
	all, err := s.Units.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]State, 0, len(all))
	for _, ks := range all {
		out = append(out, s.fromUnits(ks))
	}
	return out, nil
}

// fromUnits maps the two units' states onto State.
func (s *Systemd) fromUnits(ks units.KeyState) State {
	st := State{
		Key:     config.DaemonKey(ks.Key),
		Manager: NameSystemd,
		Units:   []string{ks.Socket.Name, ks.Service.Name},
		Socket:  SocketAbsent,
		Detail: map[string]string{
			"transport":          s.Units.Via(),
			"socketLoadState":    ks.Socket.LoadState,
			"socketActiveState":  ks.Socket.ActiveState,
			"socketSubState":     ks.Socket.SubState,
			"serviceLoadState":   ks.Service.LoadState,
			"serviceActiveState": ks.Service.ActiveState,
			"serviceSubState":    ks.Service.SubState,
		},
	}
	if ks.Socket.Result != "" && ks.Socket.Result != "success" {
		st.Detail["socketResult"] = ks.Socket.Result
	}
	if ks.Service.Result != "" {
		st.Detail["serviceResult"] = ks.Service.Result
	}
	if ks.Socket.ActiveState == "active" {
		st.Socket = SocketListening
	}
	svc := ks.Service
	switch {
	case svc.LoadState != "loaded":
		st.Service = ServiceNotInstalled
	case svc.ActiveState == "active" || svc.ActiveState == "activating" ||
		svc.ActiveState == "deactivating" || svc.ActiveState == "reloading":
		st.Service = ServiceRunning
		st.PID = svc.MainPID
		if svc.ActiveState == "active" {
			st.Since = svc.Since
		}
	case svc.ActiveState == "failed":
		st.Service = ServiceFailed
		st.LastExit = svc.LastExit()
	default:
		st.Service = ServiceIdle
	}
	return st
}
