package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/units"
)

// ErrUnknownService is an MCPX_SERVICE value other than auto, systemd,
// launchd or direct.
var ErrUnknownService = errors.New("unknown service manager")

// ErrNoServiceManager is an MCPX_SERVICE that names a manager this
// machine does not have.
var ErrNoServiceManager = errors.New("service manager not available")

// Detect picks the manager from MCPX_SERVICE (auto|systemd|launchd|direct).
// note is a sentence for stderr when the choice deserves one (e.g. "the
// binary lives in a temporary build directory; using the direct manager").
//
// auto means systemd when the user manager answers, launchd on macOS, else
// direct. On first use with systemd the unit templates are installed (the
// note says where); units that run a binary which no longer exists are
// rewritten for self. A binary in a temporary build directory (`go run`)
// is never written into a unit: the direct manager is used instead.
func Detect(ctx context.Context, getenv config.Getenv, paths config.Paths, self string) (m Manager, note string, err error) {
	m, note, err = Choose(ctx, getenv, paths, self)
	if s, ok := m.(*Systemd); ok && err == nil {
		note, err = s.ensureInstalled(ctx)
	}
	return m, note, err
}

// Choose picks the manager exactly as Detect does but installs nothing, for
// the commands that must leave the system as they found it (status,
// daemons, resolve, doctor, logs, install, uninstall). Asking the user
// manager whether it answers starts nothing.
func Choose(ctx context.Context, getenv config.Getenv, paths config.Paths, self string) (m Manager, note string, err error) {
	mode := getenv("MCPX_SERVICE")
	switch mode {
	case "":
		mode = "auto"
	case "auto", NameSystemd, NameLaunchd, NameDirect:
	default:
		return nil, "", fmt.Errorf("MCPX_SERVICE=%q: %w (want auto, systemd, launchd or direct)", mode, ErrUnknownService)
	}
	if mode == NameDirect {
		return NewDirect(paths, self), "", nil
	}
	if why := unfitForUnits(self); why != "" {
		return NewDirect(paths, self), why + "; using the direct manager (the daemon is started by mcpx itself)", nil
	}
	if why := socketOutsideRuntime(paths); why != "" && mode != NameLaunchd {
		return NewDirect(paths, self), why + "; using the direct manager (the daemon is started by mcpx itself)", nil
	}

	if mode == "auto" || mode == NameSystemd {
		err := outsideUnitRuntime(getenv, paths)
		if err == nil {
			s := newSystemd(getenv, paths, self)
			if err = s.Units.Ping(ctx); err == nil {
				return s, "", nil
			}
		}
		if mode == NameSystemd {
			return nil, "", fmt.Errorf("MCPX_SERVICE=systemd: %w: %w", ErrNoServiceManager, err)
		}
	}
	if runtime.GOOS == "darwin" {
		return NewLaunchd(getenv, paths, self), "", nil
	}
	if mode == NameLaunchd {
		return nil, "", fmt.Errorf("MCPX_SERVICE=launchd: %w: launchd exists only on macOS", ErrNoServiceManager)
	}
	return NewDirect(paths, self), "", nil
}

// ensureInstalled installs the templates when they are missing, stale (same
// binary, older template) or point at a binary that is gone, and returns a
// note when it wrote anything.
func (s *Systemd) ensureInstalled(ctx context.Context) (string, error) {
	ok, bin, err := s.Units.Installed()
	if err != nil {
		return "", err
	}
	var note string
	switch {
	case !ok:
		note = fmt.Sprintf("installed systemd user units %s and %s in %s", units.SocketTemplate, units.ServiceTemplate, s.Units.UnitDir)
	case bin == s.Self:
		if cur, err := s.Units.Current(); err != nil || cur {
			return "", err
		}
		note = fmt.Sprintf("updated systemd user units %s and %s in %s", units.SocketTemplate, units.ServiceTemplate, s.Units.UnitDir)
	default:
		if _, err := os.Stat(bin); err == nil {
			return "", nil // another mcpx owns the units; State tells
		}
		note = fmt.Sprintf("rewrote systemd user units in %s: they ran %s, which no longer exists", s.Units.UnitDir, bin)
	}
	if err := s.Units.Install(ctx); err != nil {
		return "", err
	}
	return note, nil
}

// unfitForUnits says why self must not be written into a unit, or "".
func unfitForUnits(self string) string {
	if !filepath.IsAbs(self) {
		return fmt.Sprintf("the binary path %q is not absolute", self)
	}
	tmp := filepath.Clean(os.TempDir()) + string(filepath.Separator)
	if strings.Contains(self, string(filepath.Separator)+"go-build") ||
		strings.HasPrefix(self, tmp) && strings.HasPrefix(strings.TrimPrefix(self, tmp), "go-build") {
		return fmt.Sprintf("the binary %s lives in a temporary build directory (go run)", self)
	}
	if _, err := units.QuoteExec(self); err != nil {
		return fmt.Sprintf("the binary path cannot be written into a unit (%v)", err)
	}
	return ""
}

// socketOutsideRuntime says why a systemd socket unit cannot serve the
// sockets mcpx dials, or "". The unit listens on %t/mcpx/<key>.sock, but
// when that path is too long for a unix socket, config.Paths moves the
// socket to a short directory the unit does not know about.
func socketOutsideRuntime(paths config.Paths) string {
	longest := config.DaemonKey(strings.Repeat("0", 12)) // keys are 12 hex digits or "builtin"
	if sock := paths.Socket(longest); filepath.Dir(sock) != paths.Runtime {
		return fmt.Sprintf("socket paths under %s are too long for a unix socket (mcpx uses %s)", paths.Runtime, filepath.Dir(sock))
	}
	return ""
}

// outsideUnitRuntime explains why the socket units cannot hold this
// client's sockets, or returns nil: they listen in the user manager's
// runtime directory (%t, which is XDG_RUNTIME_DIR), and a client without
// XDG_RUNTIME_DIR keeps its sockets elsewhere (even when a bus address
// lets it reach the manager, as DBUS_SESSION_BUS_ADDRESS may after su).
func outsideUnitRuntime(getenv config.Getenv, paths config.Paths) error {
	rt := getenv("XDG_RUNTIME_DIR")
	if !filepath.IsAbs(rt) || paths.Runtime != filepath.Join(filepath.Clean(rt), "mcpx") {
		return fmt.Errorf("XDG_RUNTIME_DIR is not set, so the sockets (in %s) are not where socket units listen", paths.Runtime)
	}
	return nil
}
