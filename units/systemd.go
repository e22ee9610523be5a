// Package units installs and drives mcpx's systemd user units: the
// templates mcpx@.socket and mcpx@.service (embedded, rendered with
// text/template), one instance per daemon key. It talks to the user manager
// over D-Bus — the user bus when there is one, else systemd's private
// socket — and never starts a bus to ask a question.
//
// Keys are plain strings here so this package stays a leaf: package service
// adapts it to service.Manager.
package units

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/mcpx-dev/mcpx/internal/daemonkey"
	"github.com/mcpx-dev/mcpx/internal/lazy"
	"github.com/mcpx-dev/mcpx/internal/version"
)

// Unit template names.
const (
	SocketTemplate  = "mcpx@.socket"
	ServiceTemplate = "mcpx@.service"
)

// DocURL is linked from the units' Documentation= lines.
const DocURL = "https://github.com/mcpx-dev/mcpx/blob/main/docs/service.md"

// Errors, testable with errors.Is.
var (
	// ErrUnavailable: no systemd user manager answers.
	ErrUnavailable = errors.New("systemd user manager unavailable")
	// ErrBadKey: the key cannot be a unit instance name.
	ErrBadKey = daemonkey.ErrInvalid
	// ErrBadBinary: the binary cannot be written into ExecStart.
	ErrBadBinary = errors.New("binary path unusable in a unit")
	// ErrJobFailed: systemd ran the job and it did not succeed.
	ErrJobFailed = errors.New("systemd job failed")
)

//go:embed templates
var templates embed.FS

// tmpl is parsed on first use: nothing runs at package init.
var tmpl = lazy.Value[*template.Template]{New: func() *template.Template { return template.Must(template.ParseFS(templates, "templates/*")) }}

// Systemd installs and drives the units of one user manager. It is not safe
// for concurrent use; Close releases its D-Bus connection.
type Systemd struct {
	// Bin is the absolute path of the mcpxd binary written into ExecStart.
	Bin string
	// UnitDir is the user unit directory ($XDG_CONFIG_HOME/systemd/user),
	// where mcpx writes its templates.
	UnitDir string
	// SearchDirs are the manager's other unit directories, in its order,
	// where a package's templates are found (packaged.go).
	SearchDirs []string
	// ForPackage makes Render write the header of a package's units.
	ForPackage bool
	// RuntimeDir is $XDG_RUNTIME_DIR (%t), where the user bus, systemd's
	// private socket and the mcpx sockets live.
	RuntimeDir string
	// BusAddress is DBUS_SESSION_BUS_ADDRESS ("" or autolaunch: = unset).
	BusAddress string
	// NoBus skips the user bus and uses systemd's private socket only.
	NoBus bool

	conn *conn
}

// New returns a Systemd for the environment getenv describes and the
// binary bin.
func New(getenv func(string) string, bin string) *Systemd {
	cfg := getenv("XDG_CONFIG_HOME")
	if cfg == "" && getenv("HOME") != "" {
		cfg = filepath.Join(getenv("HOME"), ".config")
	}
	s := &Systemd{
		Bin:        bin,
		RuntimeDir: getenv("XDG_RUNTIME_DIR"),
		BusAddress: getenv("DBUS_SESSION_BUS_ADDRESS"),
		SearchDirs: searchDirs(getenv),
	}
	if cfg != "" {
		s.UnitDir = filepath.Join(cfg, "systemd", "user")
	}
	return s
}

// CheckKey reports whether key can name a unit instance (daemonkey.Check).
func CheckKey(key string) error { return daemonkey.Check(key) }

// SocketUnit and ServiceUnit name the instances for key.
func SocketUnit(key string) string  { return "mcpx@" + key + ".socket" }
func ServiceUnit(key string) string { return "mcpx@" + key + ".service" }

// Render returns the two unit files for s.Bin.
func (s *Systemd) Render() (socket, service []byte, err error) {
	exec, err := QuoteExec(s.Bin)
	if err != nil {
		return nil, nil, err
	}
	data := struct {
		Version, DocURL, ExecStart string
		ForPackage                 bool
	}{version.String(), DocURL, exec, s.ForPackage}
	var sb, vb bytes.Buffer
	if err := tmpl.Get().ExecuteTemplate(&sb, SocketTemplate, data); err != nil {
		return nil, nil, fmt.Errorf("render %s: %w", SocketTemplate, err)
	}
	if err := tmpl.Get().ExecuteTemplate(&vb, ServiceTemplate, data); err != nil {
		return nil, nil, fmt.Errorf("render %s: %w", ServiceTemplate, err)
	}
	return sb.Bytes(), vb.Bytes(), nil
}

// QuoteExec writes path as the first word of an ExecStart= line: '%' is
// doubled (specifiers; '$' is not expanded in the executable name) and a
// path with anything beyond plain characters is double-quoted. systemd
// refuses quotes, backslashes and control characters in an executable
// name, so such a path is an ErrBadBinary.
func QuoteExec(path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("%w: %q is not absolute", ErrBadBinary, path)
	}
	for _, r := range path {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\'' || r == '\\' {
			return "", fmt.Errorf("%w: systemd refuses quotes, backslashes and control characters in %q", ErrBadBinary, path)
		}
	}
	s := strings.ReplaceAll(path, "%", "%%")
	for _, r := range path {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._+-,:@=%$", r)) {
			return `"` + s + `"`, nil
		}
	}
	return s, nil
}

// unquoteExec reverses QuoteExec on an ExecStart= value and returns the
// binary.
func unquoteExec(v string) (string, error) {
	v = strings.TrimLeft(v, "@-:+!") // systemd's ExecStart prefixes
	word := v
	if rest, ok := strings.CutPrefix(v, `"`); ok {
		var found bool
		if word, _, found = strings.Cut(rest, `"`); !found {
			return "", fmt.Errorf("unterminated quote in %q", v)
		}
	} else {
		word, _, _ = strings.Cut(v, " ")
	}
	return strings.ReplaceAll(word, "%%", "%"), nil
}

// Paths of the installed templates.
func (s *Systemd) SocketPath() string  { return filepath.Join(s.UnitDir, SocketTemplate) }
func (s *Systemd) ServicePath() string { return filepath.Join(s.UnitDir, ServiceTemplate) }

// Installed reports whether both templates are installed and which
// binary the installed service starts: mcpx's own in the unit directory,
// else a package's (see Packaged).
func (s *Systemd) Installed() (ok bool, installedBin string, err error) {
	if s.UnitDir == "" {
		return false, "", fmt.Errorf("locate systemd user unit directory: neither XDG_CONFIG_HOME nor HOME is set")
	}
	if _, err := os.Stat(s.ServicePath()); err == nil {
		if installedBin, err = execBinary(s.ServicePath()); err != nil {
			return false, "", err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, "", fmt.Errorf("stat installed unit: %w", err)
	}
	own, err := s.ownInstalled()
	if err != nil || own {
		return own, installedBin, err
	}
	p, ok, err := s.Packaged()
	if err != nil {
		return false, installedBin, err
	}
	if ok {
		return true, p.Bin, nil
	}
	return false, installedBin, nil
}

// Current reports whether the installed templates are exactly what Render
// produces now; with a package's templates that start s.Bin, whether no
// copy of mcpx's own hides them.
func (s *Systemd) Current() (bool, error) {
	if _, uses, err := s.usesPackaged(); err != nil {
		return false, err
	} else if uses {
		copies, err := s.shadowing()
		return len(copies) == 0, err
	}
	sock, svc, err := s.Render()
	if err != nil {
		return false, err
	}
	for path, want := range map[string][]byte{s.SocketPath(): sock, s.ServicePath(): svc} {
		got, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read installed unit: %w", err)
		}
		if !bytes.Equal(got, want) {
			return false, nil
		}
	}
	return true, nil
}

// writeUnits writes both templates (temp file + rename, only when the
// content differs) and reports whether anything changed.
func (s *Systemd) writeUnits() (bool, error) {
	if s.UnitDir == "" {
		return false, fmt.Errorf("install systemd units: neither XDG_CONFIG_HOME nor HOME is set")
	}
	sock, svc, err := s.Render()
	if err != nil {
		return false, fmt.Errorf("install systemd units: %w", err)
	}
	if err := os.MkdirAll(s.UnitDir, 0o755); err != nil {
		return false, fmt.Errorf("install systemd units: %w", err)
	}
	changed := false
	for _, f := range []struct {
		path string
		data []byte
	}{{s.SocketPath(), sock}, {s.ServicePath(), svc}} {
		if old, err := os.ReadFile(f.path); err == nil && bytes.Equal(old, f.data) {
			continue
		}
		if err := writeFile(f.path, f.data); err != nil {
			return false, fmt.Errorf("install systemd unit %s: %w", f.path, err)
		}
		changed = true
	}
	return changed, nil
}

func writeFile(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
