package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/owner"
	"github.com/mcpx-dev/mcpx/internal/proc"
	"github.com/mcpx-dev/mcpx/internal/version"
	"github.com/mcpx-dev/mcpx/service"
)

// Check results.
const (
	checkOK   = "ok"
	checkWarn = "warn"
	checkFail = "fail"
)

// check is one line of `mcpx doctor`.
type check struct {
	Name    string `json:"name"`
	Status  string `json:"status"` // ok | warn | fail
	Message string `json:"message"`
}

// doctorDoc is `mcpx doctor --json`.
type doctorDoc struct {
	Checks []check `json:"checks"`
}

// doctor checks what mcpx needs, one line per finding. It reads files and
// asks the service manager; it starts nothing and installs nothing.
func doctorCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:  "doctor",
		Usage: "check the config, the service manager, the units, the socket directory and server commands",
		Description: "One line per check, ok / warn / fail. Exits 2 when the configuration fails,\n" +
			"3 when something else fails, 0 otherwise. Starts and installs nothing.",
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() > 0 {
				return usagef("doctor takes no arguments")
			}
			doc := a.doctor(ctx, cmd)
			if jsonOut(cmd) {
				if err := writeJSON(a.Stdout, doc); err != nil {
					return err
				}
			} else if err := renderDoctor(a.Stdout, doc); err != nil {
				return err
			}
			return doctorExit(doc)
		},
	}
}

func (a *App) doctor(ctx context.Context, cmd *ucli.Command) doctorDoc {
	var doc doctorDoc
	add := func(name, status, format string, args ...any) {
		doc.Checks = append(doc.Checks, check{Name: name, Status: status, Message: fmt.Sprintf(format, args...)})
	}
	l, err := a.local()
	if err != nil {
		add("environment", checkFail, "%v", err)
		return doc
	}

	// Config.
	cfg, cfgErr := a.doctorConfig(cmd, l)
	switch {
	case cfgErr != nil:
		add("config", checkFail, "%v", cfgErr)
	case cfg.Builtin:
		add("config", checkOK, "no config file; the built-in demo server is in use (`mcpx init` writes one)")
	default:
		add("config", checkOK, "%d servers from %s (daemon %s)", len(cfg.Servers), strings.Join(cfg.Sources, ", "), cfg.DaemonKey())
	}
	if cfg != nil {
		for _, w := range cfg.Warnings {
			add("config", checkWarn, "%s", w)
		}
		for _, name := range cfg.Names() {
			if s := cfg.Servers[name]; s.Untrusted != "" {
				add("trust", checkWarn, "server %s does not start: %s", name, s.Untrusted)
			}
		}
		lookup := a.LookupEnv
		if lookup == nil {
			lookup = func(k string) (string, bool) { v := a.Getenv(k); return v, v != "" }
		}
		if err := client.CheckVars(cfg, lookup); err != nil {
			add("config", checkWarn, "%v: calls to that server fail until it is set", err)
		}
	}

	// Service manager.
	choice := a.Getenv("MCPX_SERVICE")
	if choice == "" {
		choice = "auto"
	}
	m, err := a.detect(ctx, l)
	if err != nil {
		add("manager", checkFail, "MCPX_SERVICE=%s: %v", choice, err)
	} else {
		why := map[string]string{
			service.NameSystemd: "the systemd user manager answers",
			service.NameLaunchd: "macOS",
			service.NameDirect:  "no service manager answers",
		}[m.Name()]
		if choice != "auto" {
			why = "MCPX_SERVICE=" + choice
		}
		if m.Name() == service.NameDirect && strings.Contains(l.self, string(filepath.Separator)+"go-build") {
			why = "this binary lives in a temporary build directory (go run) and is never written into a unit"
		}
		add("manager", checkOK, "%s (%s)", m.Name(), why)
		a.doctorUnits(add, m, l, cfg)
	}

	// Runtime (socket) directory.
	a.doctorRuntime(add, l)

	// The running daemon's build.
	if cfg != nil {
		doctorDaemonBuild(add, l, cfg.DaemonKey())
		if info, err := config.ReadInfo(l.paths.Info(cfg.DaemonKey())); err == nil {
			doctorInstances(ctx, add, info)
		}
	}

	// Server commands.
	if cfg != nil {
		doctorCommands(add, cfg, a.Getenv("PATH"))
	}
	return doc
}

func (a *App) doctorConfig(cmd *ucli.Command, l *local) (*config.Config, error) {
	dir, err := workDir(cmd)
	if err != nil {
		return nil, err
	}
	getenv := a.Getenv
	if file := cmd.String("config"); file != "" {
		abs, err := filepath.Abs(file)
		if err != nil {
			return nil, err
		}
		getenv = override(a.Getenv, "MCPX_CONFIG", abs)
	}
	return config.LoadDir(dir, getenv, l.self)
}

type addFunc func(name, status, format string, args ...any)

// doctorDaemonBuild warns when the daemon running for key is another build
// than the mcpxd this mcpx starts (an upgrade not yet taken up: the next
// command that reaches it has it drain and exit).
func doctorDaemonBuild(add addFunc, l *local, key config.DaemonKey) {
	info, err := config.ReadInfo(l.paths.Info(key))
	if err != nil || !proc.Alive(info.Pid) || info.Binary == "" {
		return
	}
	mine := version.BinaryID(l.self)
	if mine == "" || mine == info.Binary {
		add("daemon", checkOK, "daemon %s (pid %d) runs this build (%s)", key, info.Pid, info.Version)
		return
	}
	if version.BinaryPath(info.Binary) != version.BinaryPath(mine) {
		add("daemon", checkWarn, "daemon %s (pid %d) runs %s, not %s; stop it (`mcpx stop`) or reinstall the units (`mcpx install`) to use this one",
			key, info.Pid, version.BinaryPath(info.Binary), l.self)
		return
	}
	add("daemon", checkWarn, "daemon %s (pid %d) runs an older build (%s) of %s than the one installed (%s); the next command replaces it",
		key, info.Pid, info.Version, l.self, version.String())
}

// doctorUnits checks that the units (or the key's agent) are installed and
// start this binary.
func (a *App) doctorUnits(add addFunc, m service.Manager, l *local, cfg *config.Config) {
	switch m := m.(type) {
	case *service.Systemd:
		ok, bin, err := m.Units.Installed()
		switch {
		case err != nil:
			add("units", checkFail, "%v", err)
		case !ok:
			add("units", checkWarn, "mcpx@.socket/mcpx@.service are not installed in %s; the first command installs them (or run `mcpx install`)", m.Units.UnitDir)
		case bin != l.self:
			add("units", checkWarn, "the installed units start %s, not this binary (%s); run `mcpx install`", bin, l.self)
		default:
			if cur, err := m.Units.Current(); err == nil && !cur {
				add("units", checkWarn, "the installed units differ from what this version writes; run `mcpx install`")
			} else {
				add("units", checkOK, "installed in %s, starting %s", m.Units.Where(), bin)
			}
		}
	case *service.Launchd:
		if cfg == nil {
			return
		}
		key := string(cfg.DaemonKey())
		ok, bin, err := m.Agents.Installed(key)
		switch {
		case err != nil:
			add("units", checkFail, "%v", err)
		case !ok:
			add("units", checkOK, "no agent for %s yet; the first command writes it", key)
		case bin != l.self:
			add("units", checkWarn, "agent %s starts %s, not this binary (%s); run `mcpx install`", m.Agents.PlistPath(key), bin, l.self)
		default:
			add("units", checkOK, "agent %s starts %s", m.Agents.PlistPath(key), bin)
		}
	default:
		add("units", checkOK, "nothing to install for the %s manager", m.Name())
	}
}

// doctorRuntime checks the directory that holds sockets and info files: a
// directory of ours with mode 0700, or absent (created on first use).
func (a *App) doctorRuntime(add addFunc, l *local) {
	dir := l.paths.Runtime
	switch err := (owner.Rule{User: os.Getuid(), Exact: 0o700}).CheckDir(dir); {
	case errors.Is(err, fs.ErrNotExist):
		add("socket dir", checkOK, "%s does not exist yet; it is created 0700 on first use", dir)
	case err != nil:
		add("socket dir", checkFail, "%v", err)
	default:
		add("socket dir", checkOK, "%s (0700, yours)", dir)
	}
}

// doctorCommands checks that every stdio server's command is found on PATH,
// and node beside npx (npx is a node script).
func doctorCommands(add addFunc, cfg *config.Config, path string) {
	for _, name := range cfg.Names() {
		s := cfg.Servers[name]
		if s.Transport != config.TransportStdio || s.Command == "" {
			continue
		}
		bin, err := lookPath(s.Command, path)
		if err != nil {
			add("server "+name, checkFail, "command %q not found on PATH", s.Command)
			continue
		}
		if base := filepath.Base(s.Command); base == "npx" || base == "npm" {
			if _, err := lookPath("node", path); err != nil {
				add("server "+name, checkFail, "%s found (%s) but node is not on PATH", base, bin)
				continue
			}
		}
		add("server "+name, checkOK, "command %s", bin)
	}
}

// lookPath is exec.LookPath against an explicit PATH (the one captured for
// the daemon is this process's).
func lookPath(file, path string) (string, error) {
	if strings.Contains(file, "/") {
		if fi, err := os.Stat(file); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", exec.ErrNotFound
		}
		return file, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, file)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func renderDoctor(w io.Writer, doc doctorDoc) error {
	width := 0
	for _, c := range doc.Checks {
		width = max(width, len(c.Name))
	}
	for _, c := range doc.Checks {
		if _, err := fmt.Fprintf(w, "%-4s  %-*s  %s\n", c.Status, width, c.Name, c.Message); err != nil {
			return err
		}
	}
	return nil
}

// doctorExit is 2 when the config failed, 3 when anything else failed.
func doctorExit(doc doctorDoc) error {
	code := ExitOK
	for _, c := range doc.Checks {
		if c.Status != checkFail {
			continue
		}
		if c.Name == "config" {
			return silent(ExitUsage)
		}
		code = ExitUnavailable
	}
	if code != ExitOK {
		return silent(code)
	}
	return nil
}
