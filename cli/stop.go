package cli

import (
	"context"
	"fmt"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/service"
)

// stopResult is one daemon `stop` acted on.
type stopResult struct {
	DaemonKey  config.DaemonKey `json:"daemonKey"`
	Manager    string           `json:"manager"`
	WasRunning bool             `json:"wasRunning"`
	Socket     bool             `json:"socketStopped"`
}

// stop stops this directory's daemon (or every daemon) through the service
// manager; it never connects to a socket, so it never starts a daemon.
//
// --json: {"stopped": [{"daemonKey", "manager", "wasRunning", "socketStopped"}]}.
func stopCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:  "stop",
		Usage: "stop this config's daemon (the socket stays; the next command starts it again)",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "all", Usage: "stop every daemon"},
			&ucli.BoolFlag{Name: "socket", Usage: "also stop the socket unit (systemd) or agent (launchd), so nothing starts the daemon until the next mcpx command sets it up again"},
		},
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() > 0 {
				return usagef("stop takes no arguments")
			}
			m, err := a.manager()
			if err != nil {
				return err
			}
			var targets []stopTarget
			if cmd.Bool("all") {
				if targets, err = a.everyDaemon(ctx, m); err != nil {
					return err
				}
			} else {
				c, err := a.client(ctx, cmd)
				if err != nil {
					return err
				}
				targets = []stopTarget{{key: c.Key(), m: m}}
			}
			results := []stopResult{}
			for _, t := range targets {
				key, m := t.key, t.m
				st, err := m.State(ctx, key)
				if err != nil {
					return fmt.Errorf("state of daemon %s: %w", key, err)
				}
				running := st.Service == service.ServiceRunning
				if err := m.Stop(ctx, key, cmd.Bool("socket")); err != nil {
					return fmt.Errorf("stop daemon %s: %w", key, err)
				}
				results = append(results, stopResult{DaemonKey: key, Manager: m.Name(), WasRunning: running,
					Socket: cmd.Bool("socket") && m.Name() != service.NameDirect})
			}
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, map[string]any{"stopped": results})
			}
			for _, r := range results {
				if r.WasRunning {
					fmt.Fprintf(a.Stdout, "stopped daemon %s (%s)\n", r.DaemonKey, r.Manager)
				} else {
					fmt.Fprintf(a.Stdout, "daemon %s was not running\n", r.DaemonKey)
				}
				if r.Socket {
					fmt.Fprintf(a.Stdout, "stopped the socket of daemon %s\n", r.DaemonKey)
				}
			}
			return nil
		},
	}
}
