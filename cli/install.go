package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/service"
	"github.com/mcpx-dev/mcpx/units"
)

// installDoc is `mcpx install --json` and `mcpx uninstall --json`.
type installDoc struct {
	Manager string `json:"manager"`
	// Files are the unit files or agent plists written (install) or
	// removed (uninstall); [] when there was nothing to do.
	Files []string `json:"files"`
	// Changed is false when everything already was as asked.
	Changed bool `json:"changed"`
	// Note says why nothing is installed (the direct manager).
	Note string `json:"note,omitempty"`
}

// install writes the systemd unit templates (or rewrites the launchd
// agents) for this binary and reloads the manager. Idempotent.
func installCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:  "install",
		Usage: "write the systemd unit templates (or launchd agents) for this binary",
		Description: "Under systemd, writes mcpx@.socket and mcpx@.service to the user unit\n" +
			"directory and reloads the user manager. Under launchd, rewrites every mcpx\n" +
			"agent for this binary (agents are written per key on first use). The direct\n" +
			"manager has nothing to install. Safe to run again; commands install on first\n" +
			"use anyway.",
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			l, m, err := a.unitsManager(ctx, cmd)
			if err != nil {
				return err
			}
			before := unitFiles(m)
			snap, present := snapshot(before), existing(before)
			if err := m.Install(); err != nil {
				return fmt.Errorf("install %s units: %w", m.Name(), err)
			}
			files := unitFiles(m)
			doc := installDoc{Manager: m.Name(), Files: files, Changed: changed(snap, snapshot(files))}
			if m.Name() == service.NameDirect {
				doc.Note = "the direct manager starts daemons itself; there is nothing to install"
			}
			var removed []string
			if p, ok := packagedUnits(m); ok {
				removed = gone(present)
				doc.Files = []string{p.Socket, p.Service}
				doc.Note = fmt.Sprintf("the systemd units in %s, installed by a package, start %s: mcpx uses them and writes none of its own", p.Dir(), p.Bin)
			}
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, doc)
			}
			for _, f := range removed {
				fmt.Fprintf(a.Stdout, "removed %s (it hid the package's unit)\n", f)
			}
			switch {
			case doc.Note != "":
				fmt.Fprintln(a.Stdout, sentence(doc.Note))
			case !doc.Changed:
				for _, f := range files {
					fmt.Fprintf(a.Stdout, "unchanged %s\n", f)
				}
				fmt.Fprintf(a.Stdout, "%s units already installed for %s\n", m.Name(), l.self)
			default:
				for _, f := range files {
					fmt.Fprintf(a.Stdout, "wrote %s\n", f)
				}
				fmt.Fprintf(a.Stdout, "installed %s units for %s\n", m.Name(), l.self)
			}
			return nil
		},
	}
}

// uninstall stops every instance and removes the unit templates or agents.
func uninstallCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:  "uninstall",
		Usage: "stop every daemon and remove the systemd unit templates (or launchd agents)",
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			_, m, err := a.unitsManager(ctx, cmd)
			if err != nil {
				return err
			}
			present := existing(unitFiles(m))
			if err := m.Uninstall(); err != nil {
				return fmt.Errorf("uninstall %s units: %w", m.Name(), err)
			}
			removed := gone(present)
			doc := installDoc{Manager: m.Name(), Files: removed, Changed: len(removed) > 0}
			if m.Name() == service.NameDirect {
				doc.Note = "the direct manager installs nothing; use `mcpx stop --all` to stop its daemons"
			}
			if p, ok := packagedUnits(m); ok {
				doc.Note = fmt.Sprintf("every daemon is stopped; the systemd units in %s belong to a package and stay until it is removed", p.Dir())
			}
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, doc)
			}
			for _, f := range removed {
				fmt.Fprintf(a.Stdout, "removed %s\n", f)
			}
			switch {
			case doc.Note != "":
				fmt.Fprintln(a.Stdout, sentence(doc.Note))
			case len(removed) == 0:
				fmt.Fprintf(a.Stdout, "no %s units were installed\n", m.Name())
			}
			return nil
		},
	}
}

// unitsManager is what install and uninstall act on: the manager chosen
// as every command would, without installing anything on the way.
func (a *App) unitsManager(ctx context.Context, cmd *ucli.Command) (*local, service.Manager, error) {
	if cmd.NArg() > 0 {
		return nil, nil, usagef("%s takes no arguments", cmd.Name)
	}
	l, err := a.local()
	if err != nil {
		return nil, nil, err
	}
	m, err := a.detect(ctx, l)
	return l, m, err
}

// unitFiles are the files the manager installs: both templates under
// systemd, every agent plist under launchd, none for direct.
func unitFiles(m service.Manager) []string {
	switch m := m.(type) {
	case *service.Systemd:
		return []string{m.Units.SocketPath(), m.Units.ServicePath()}
	case *service.Launchd:
		keys, _ := m.Agents.Keys()
		out := []string{}
		for _, k := range keys {
			out = append(out, m.Agents.PlistPath(k))
		}
		return out
	}
	return []string{}
}

// packagedUnits returns the templates a package installed when the
// manager uses those (mcpx has none of its own in the unit directory).
func packagedUnits(m service.Manager) (units.Packaged, bool) {
	s, ok := m.(*service.Systemd)
	if !ok || s.Units.Where() == s.Units.UnitDir {
		return units.Packaged{}, false
	}
	p, ok, err := s.Units.Packaged()
	return p, ok && err == nil
}

// gone returns the files of list that no longer exist.
func gone(list []string) []string {
	out := []string{}
	for _, f := range list {
		if _, err := os.Stat(f); errors.Is(err, fs.ErrNotExist) {
			out = append(out, f)
		}
	}
	return out
}

func existing(files []string) []string {
	out := []string{}
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			out = append(out, f)
		}
	}
	return out
}

// snapshot is each file's content ("" when absent), to tell whether an
// install changed anything.
func snapshot(files []string) map[string]string {
	out := map[string]string{}
	for _, f := range files {
		b, _ := os.ReadFile(f)
		out[f] = string(b)
	}
	return out
}

func changed(before, after map[string]string) bool {
	if len(before) != len(after) {
		return true
	}
	for f, b := range after {
		if before[f] != b {
			return true
		}
	}
	return false
}
