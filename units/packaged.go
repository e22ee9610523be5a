package units

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Units installed by a package. The .deb and .rpm put mcpx@.socket and
// mcpx@.service into /usr/lib/systemd/user, rendered for /usr/bin/mcpxd
// (`go run ./units/unitgen`). When those run the same mcpxd as mcpx would
// write into its own units, mcpx uses them and writes nothing into
// UnitDir; copies it wrote there earlier would shadow the package's
// (UnitDir comes first in the manager's search path), so Install removes
// them.

// searchDirs are the user manager's unit directories below UnitDir, in
// its order of precedence (systemd.unit(5), "User Unit Search Path";
// TestSearchDirsAreTheManagers compares them with a running manager's
// UnitPath): the administrator's, the runtime ones, the user's data
// directory, then the packages'. Generator, transient and control
// directories are left out: no package writes there.
func searchDirs(getenv func(string) string) []string {
	abs := func(list, def string) []string {
		var out []string
		for _, d := range filepath.SplitList(list) {
			if filepath.IsAbs(d) {
				out = append(out, d)
			}
		}
		if len(out) == 0 {
			out = filepath.SplitList(def)
		}
		return out
	}
	var dirs []string
	for _, d := range abs(getenv("XDG_CONFIG_DIRS"), "/etc/xdg") {
		dirs = append(dirs, filepath.Join(d, "systemd", "user"))
	}
	dirs = append(dirs, "/etc/systemd/user")
	if rt := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(rt) {
		dirs = append(dirs, filepath.Join(rt, "systemd", "user"))
	}
	dirs = append(dirs, "/run/systemd/user")
	if data := getenv("XDG_DATA_HOME"); filepath.IsAbs(data) {
		dirs = append(dirs, filepath.Join(data, "systemd", "user"))
	} else if home := getenv("HOME"); filepath.IsAbs(home) {
		dirs = append(dirs, filepath.Join(home, ".local", "share", "systemd", "user"))
	}
	for _, d := range abs(getenv("XDG_DATA_DIRS"), "/usr/local/share:/usr/share") {
		dirs = append(dirs, filepath.Join(d, "systemd", "user"))
	}
	dirs = append(dirs, "/usr/local/lib/systemd/user", "/usr/local/share/systemd/user",
		"/usr/lib/systemd/user", "/usr/share/systemd/user")
	var out []string
	seen := map[string]bool{}
	for _, d := range dirs {
		if d = filepath.Clean(d); !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

// Packaged describes templates installed outside UnitDir (by a package).
type Packaged struct {
	// Socket and Service are the template files the manager loads.
	Socket, Service string
	// Bin is the binary the service starts.
	Bin string
}

// Dir is the directory of the service template.
func (p Packaged) Dir() string { return filepath.Dir(p.Service) }

// Packaged finds the templates the manager would load from below UnitDir:
// the first of each in SearchDirs. ok is false when either is missing.
func (s *Systemd) Packaged() (p Packaged, ok bool, err error) {
	find := func(name string) (string, error) {
		for _, d := range s.SearchDirs {
			path := filepath.Join(d, name)
			if _, err := os.Stat(path); err == nil {
				return path, nil
			} else if !errors.Is(err, os.ErrNotExist) {
				return "", fmt.Errorf("look for packaged unit %s: %w", name, err)
			}
		}
		return "", nil
	}
	if p.Socket, err = find(SocketTemplate); err != nil || p.Socket == "" {
		return Packaged{}, false, err
	}
	if p.Service, err = find(ServiceTemplate); err != nil || p.Service == "" {
		return Packaged{}, false, err
	}
	if p.Bin, err = execBinary(p.Service); err != nil {
		return Packaged{}, false, err
	}
	return p, true, nil
}

// usesPackaged reports whether packaged templates start s.Bin, so mcpx
// has nothing of its own to install.
func (s *Systemd) usesPackaged() (Packaged, bool, error) {
	p, ok, err := s.Packaged()
	if err != nil || !ok {
		return Packaged{}, false, err
	}
	return p, sameFile(p.Bin, s.Bin), nil
}

// sameFile reports whether a and b name the same file (through symlinks
// or hard links), or are the same path.
func sameFile(a, b string) bool {
	if a == b {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// execBinary reads the binary of the first ExecStart= of a service file
// ("" when it has none).
func execBinary(path string) (string, error) {
	svc, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read unit: %w", err)
	}
	for _, line := range strings.Split(string(svc), "\n") {
		if v, found := strings.CutPrefix(strings.TrimSpace(line), "ExecStart="); found {
			bin, err := unquoteExec(v)
			if err != nil {
				return "", fmt.Errorf("parse ExecStart of %s: %w", path, err)
			}
			return bin, nil
		}
	}
	return "", nil
}

// writtenHeader starts every template mcpx writes itself.
const writtenHeader = "# Written by mcpx "

// writtenByMcpx reports whether the file at path is a template mcpx wrote
// (its first line says so), as opposed to one the user put there.
func writtenByMcpx(path string) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read unit: %w", err)
	}
	return bytes.HasPrefix(b, []byte(writtenHeader)), nil
}

// shadowing returns mcpx's own copies in UnitDir that would hide the
// packaged templates.
func (s *Systemd) shadowing() ([]string, error) {
	var out []string
	for _, p := range []string{s.SocketPath(), s.ServicePath()} {
		ours, err := writtenByMcpx(p)
		if err != nil {
			return nil, err
		}
		if ours {
			out = append(out, p)
		}
	}
	return out, nil
}

// Where is the directory of the templates mcpx uses: UnitDir when its own
// are there, a package's directory when only those are, else UnitDir.
func (s *Systemd) Where() string {
	if ok, _ := s.ownInstalled(); !ok && s.UnitDir != "" {
		if p, ok, err := s.Packaged(); err == nil && ok {
			return p.Dir()
		}
	}
	return s.UnitDir
}

// ownInstalled reports whether both templates are in UnitDir.
func (s *Systemd) ownInstalled() (bool, error) {
	for _, p := range []string{s.SocketPath(), s.ServicePath()} {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			return false, nil
		} else if err != nil {
			return false, fmt.Errorf("stat installed unit: %w", err)
		}
	}
	return true, nil
}
