package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/proc"
	"github.com/mcpx-dev/mcpx/service"
)

// statusDoc is `mcpx status --json` (documented in docs/service.md).
type statusDoc struct {
	DaemonKey string   `json:"daemonKey"`
	Configs   []string `json:"configs"`
	Manager   string   `json:"manager"`
	// Units are the systemd unit names or the launchd label; [] for direct.
	Units   []string      `json:"units"`
	Socket  statusSocket  `json:"socket"`
	Service statusService `json:"service"`
	// Binary is the mcpxd of this mcpx (mcpxd.Path); InstalledBinary the
	// one the installed units or agent start ("" when nothing is installed
	// or for direct).
	Binary          string `json:"binary"`
	InstalledBinary string `json:"installedBinary"`
	BinaryMismatch  bool   `json:"binaryMismatch"`
	// Live is the daemon's own GET /v1/status, only when it already runs
	// and is not stopping (service.State.Serving).
	Live *api.Status `json:"live"`
	// LiveError says why Live is null although the service runs.
	LiveError string `json:"liveError,omitempty"`
}

type statusSocket struct {
	Path  string `json:"path"`
	State string `json:"state"` // listening | absent
}

type statusService struct {
	// State is running | idle | failed | not-installed | stale.
	State string `json:"state"`
	Pid   int    `json:"pid,omitempty"`
	// Since is when the service last started (running) or changed state.
	Since *time.Time `json:"since,omitempty"`
	// Uptime is whole seconds since Since while running, else 0.
	Uptime   int64  `json:"uptime"`
	LastExit string `json:"lastExit,omitempty"`
	// Detail is the manager's own words (systemd Load/Active/SubState of
	// both units, launchd's job state, direct's file paths).
	Detail map[string]string `json:"detail,omitempty"`
}

// status reports this directory's daemon as the service manager sees it,
// without connecting to its socket.
func statusCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:  "status",
		Usage: "show the daemon's key, configs, socket and service state (never starts it)",
		Description: "Reports the daemon key and configs of this directory, the service manager\n" +
			"and its unit or agent names, whether the socket is listening, and the service\n" +
			"state (running with pid and uptime, idle, failed with the last exit, not\n" +
			"installed). Everything comes from the service manager and files: status never\n" +
			"connects to a socket that is not already served, so it never activates the\n" +
			"daemon, and it never installs units. Live pools are shown only when the\n" +
			"service is already running. --json prints the document of docs/service.md.",
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() > 0 {
				return usagef("status takes no arguments")
			}
			doc, err := a.status(ctx, cmd)
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, doc)
			}
			return renderStatus(a.Stdout, doc, time.Now())
		},
	}
}

func (a *App) status(ctx context.Context, cmd *ucli.Command) (*statusDoc, error) {
	l, err := a.local()
	if err != nil {
		return nil, err
	}
	t, err := a.target(cmd, l)
	if err != nil {
		return nil, err
	}
	m, err := a.detect(ctx, l)
	if err != nil {
		return nil, err
	}
	st, err := m.State(ctx, t.key)
	if err != nil {
		return nil, fmt.Errorf("state of daemon %s: %w", t.key, err)
	}
	doc := &statusDoc{
		DaemonKey: string(t.key),
		Configs:   t.configs,
		Manager:   m.Name(),
		Units:     nonNilStrings(st.Units),
		Socket:    statusSocket{Path: t.socket, State: st.Socket},
		Service:   statusService{State: st.Service, Pid: st.PID, LastExit: st.LastExit, Detail: st.Detail},
		Binary:    l.self,
	}
	if !st.Since.IsZero() {
		since := st.Since.UTC()
		doc.Service.Since = &since
		if st.Service == service.ServiceRunning {
			doc.Service.Uptime = int64(time.Since(st.Since) / time.Second)
		}
	}
	doc.InstalledBinary = installedBinary(m, t.key, st)
	doc.BinaryMismatch = doc.InstalledBinary != "" && !sameBinary(doc.InstalledBinary, l.self)
	if st.Serving() {
		live, err := liveStatus(ctx, t.socket)
		if err != nil {
			doc.LiveError = err.Error()
			if st.PID > 0 && proc.Stopped(st.PID) {
				doc.LiveError += fmt.Sprintf("; its process (pid %d) is stopped (SIGSTOP or a debugger): `kill -CONT %d` resumes it, `mcpx stop` ends it", st.PID, st.PID)
			}
		} else {
			doc.Live = live
		}
	}
	return doc, nil
}

// renderStatus prints the document for people.
func renderStatus(w io.Writer, d *statusDoc, now time.Time) error {
	configs := strings.Join(d.Configs, "\n")
	if len(d.Configs) == 0 {
		configs = "(none: built-in default)"
	}
	rows := [][2]string{
		{"daemon", d.DaemonKey},
		{"configs", configs},
		{"manager", d.Manager},
	}
	if len(d.Units) > 0 {
		rows = append(rows, [2]string{"units", strings.Join(d.Units, "\n")})
	}
	rows = append(rows,
		[2]string{"socket", d.Socket.Path + " (" + d.Socket.State + ")"},
		[2]string{"service", serviceLine(d.Service, now)},
	)
	if d.BinaryMismatch {
		rows = append(rows, [2]string{"warning", fmt.Sprintf("the installed units start %s, not this binary (%s); run `mcpx install` to point them here", d.InstalledBinary, d.Binary)})
	}
	if err := fields(w, rows); err != nil {
		return err
	}
	if d.Live == nil {
		if d.LiveError != "" {
			_, err := fmt.Fprintf(w, "\nlive status unavailable: %s\n", d.LiveError)
			return err
		}
		return nil
	}
	s := d.Live
	fmt.Fprintf(w, "\n%d servers, %d live, %d calls; schema %s; version %s\n", s.Servers, s.Live, s.Calls, s.SchemaHash, s.Version)
	if len(s.Namespaces) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	rows2 := make([][]string, 0, len(s.Namespaces))
	for _, n := range s.Namespaces {
		rows2 = append(rows2, []string{n.Name, strconv.Itoa(n.Live), n.Sharing, n.Scope, strconv.Itoa(n.Tools), n.State})
	}
	return table(w, []string{"NAMESPACE", "LIVE", "SHARING", "SCOPE", "TOOLS", "SCHEMA"}, rows2)
}

// serviceLine is "running (pid 123, up 3m2s)", "idle", "failed (exit-code
// 2)", "not installed", "stale (...)".
func serviceLine(s statusService, now time.Time) string {
	switch s.State {
	case service.ServiceRunning:
		parts := []string{}
		if s.Pid > 0 {
			parts = append(parts, "pid "+strconv.Itoa(s.Pid))
		}
		if s.Since != nil {
			parts = append(parts, "up "+ago(now.Sub(*s.Since)))
		}
		if len(parts) == 0 {
			return "running"
		}
		return "running (" + strings.Join(parts, ", ") + ")"
	case service.ServiceNotInstalled:
		return "not installed (`mcpx install`, or any command installs it on first use)"
	case service.ServiceFailed, service.ServiceStale:
		if s.LastExit != "" {
			return s.State + " (" + s.LastExit + ")"
		}
		return s.State
	default:
		if s.LastExit != "" {
			return s.State + " (last exit: " + s.LastExit + ")"
		}
		return s.State
	}
}

// sameBinary reports whether installed, a path written into a unit or an
// agent, runs self (a symlink-resolved path): a launchd agent names mcpxd
// by its stable link (/opt/homebrew/bin/mcpxd) rather than the versioned
// file it leads to.
func sameBinary(installed, self string) bool {
	if installed == self {
		return true
	}
	real, err := filepath.EvalSymlinks(installed)
	return err == nil && real == self
}

// installedBinary is the binary the installed units (systemd) or the key's
// agent (launchd) start; "" for direct or when nothing is installed.
func installedBinary(m service.Manager, key config.DaemonKey, st service.State) string {
	switch m := m.(type) {
	case *service.Systemd:
		if ok, bin, err := m.Units.Installed(); err == nil && ok {
			return bin
		}
	case *service.Launchd:
		if ok, bin, err := m.Agents.Installed(string(key)); err == nil && ok {
			return bin
		}
	}
	return st.Detail["installedBinary"]
}
