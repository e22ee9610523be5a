package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/coreos/go-systemd/v22/activation"

	"github.com/mcpx-dev/mcpx/config"
)

// ErrConfig marks errors Main returns for a configuration that cannot work
// (no key record, a config that does not parse): restarting will not help,
// so ExitCode maps it to 2, which the systemd unit's
// RestartPreventExitStatus=2 honours.
var ErrConfig = errors.New("configuration error")

// Main runs the daemon for key until it exits (idle exit, SIGTERM,
// /v1/shutdown). It reads the key record, loads the config, takes the
// inherited listener named "mcpx" (systemd, then launchd) or binds the
// socket (MCPX_SOCKET if set, else the key's path), and calls Run. SIGTERM
// and SIGINT stop it gracefully; SIGHUP reloads the config.
// A configuration error is returned as an error for which ExitCode reports 2.
func Main(ctx context.Context, key config.DaemonKey) error {
	paths, err := config.DefaultPaths(os.Getenv)
	if err != nil {
		return fmt.Errorf("daemon %s: %w", key, err)
	}
	rec, paths, err := readKeyRecord(paths, key)
	if err != nil {
		return fmt.Errorf("daemon %s: %w: %w (run any mcpx command in the project directory to write it)", key, ErrConfig, err)
	}
	self, err := os.Executable()
	if err == nil {
		self, err = filepath.EvalSymlinks(self)
	}
	if err != nil {
		return fmt.Errorf("daemon %s: find own executable: %w", key, err)
	}
	// Trust is read from the state directory the client handed over (the
	// shell's, which a service manager's environment may lack).
	cfg, err := config.LoadWith(rec.Configs, config.LoadOptions{Self: self, Trust: trustStore(paths)})
	if err != nil {
		return fmt.Errorf("daemon %s: %w: %w", key, ErrConfig, err)
	}

	ready := takeReadyPipe()
	ln, manager, err := listen(paths, key)
	if err != nil {
		return fmt.Errorf("daemon %s: %w", key, err)
	}

	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	reload := make(chan struct{})
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				select {
				case reload <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return Run(ctx, ln, Options{
		Key:     key,
		Config:  cfg,
		Paths:   paths,
		Manager: manager,
		Self:    self,
		Reload:  reload,
		Ready:   ready,
		Getenv:  withTokenStore(os.Getenv, rec.TokenStore),
	})
}

// withTokenStore is getenv answering store for config.EnvTokenStore when the
// client chose one: the shell's choice reaches a daemon that launchd or
// systemd started with another environment.
func withTokenStore(getenv config.Getenv, store string) config.Getenv {
	if store == "" {
		return getenv
	}
	return func(k string) string {
		if k == config.EnvTokenStore {
			return store
		}
		return getenv(k)
	}
}

// ExitCode maps an error returned by Main to a process exit status
// (0 for nil, 2 for configuration errors, 1 otherwise).
func ExitCode(err error) int {
	var (
		parseErr *config.ParseError
		unset    *config.UnsetVarError
	)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, ErrConfig), errors.As(err, &parseErr), errors.As(err, &unset):
		return 2
	default:
		return 1
	}
}

// listen takes the socket: the listener systemd, or the direct manager
// that spawned us, passed (named "mcpx", trusted only when LISTEN_PID is
// ours or the direct manager marked the descriptors as ours; the LISTEN_*
// variables are unset so children do not inherit them), else launchd's,
// else a socket bound here. It returns the manager name that goes with it.
func listen(paths config.Paths, key config.DaemonKey) (net.Listener, string, error) {
	manager := "systemd"
	if adoptInherited() {
		manager = inheritedManager()
	}
	named, err := activation.ListenersWithNames()
	if err != nil {
		return nil, "", fmt.Errorf("take inherited socket: %w", err)
	}
	if lns := named["mcpx"]; len(lns) > 0 {
		for _, extra := range lns[1:] {
			extra.Close()
		}
		return lns[0], manager, nil
	}
	ln, err := activateLaunchd()
	if err != nil {
		return nil, "", err
	}
	if ln != nil {
		return ln, "launchd", nil
	}
	path := os.Getenv("MCPX_SOCKET")
	if path == "" {
		if err := paths.EnsureSocketDir(key); err != nil {
			return nil, "", err
		}
		path = paths.Socket(key)
	}
	ln, err = bind(path)
	if err != nil {
		return nil, "", err
	}
	return ln, "direct", nil
}

// errSocketInUse is a socket another process is serving.
var errSocketInUse = errors.New("socket in use")

// bind listens on a unix socket at path, mode 0600. A stale socket file is
// removed only after checking that nobody answers on it.
func bind(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != fs.ModeSocket {
			return nil, fmt.Errorf("bind %s: exists and is not a socket", path)
		}
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("bind %s: %w: another daemon answers on it", path, errSocketInUse)
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("bind %s: remove stale socket: %w", path, err)
		}
	}
	// The directory is 0700; the mode is tightened before anyone else
	// could have reached the socket.
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("bind %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("bind %s: %w", path, err)
	}
	return ln, nil
}
