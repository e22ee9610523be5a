package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/resolve"
	"github.com/mcpx-dev/mcpx/service"
)

// Daemon states of `mcpx daemons`.
const (
	daemonRunning = "running" // a process serves the key
	daemonIdle    = "idle"    // known, no process; the next command starts one
	daemonFailed  = "failed"  // the service manager says the last run failed
	daemonStale   = "stale"   // an info file whose process is gone (--prune removes it)
)

// daemonEntry is one key in `mcpx daemons --json`.
type daemonEntry struct {
	DaemonKey string   `json:"daemonKey"`
	State     string   `json:"state"`
	Pid       int      `json:"pid,omitempty"`
	Manager   string   `json:"manager"`
	Configs   []string `json:"configs"`
	Socket    string   `json:"socket"`
	// ConfigsExist is false when a config file of the key is gone.
	ConfigsExist bool     `json:"configsExist"`
	SchemaHash   string   `json:"schemaHash,omitempty"`
	Units        []string `json:"units,omitempty"`
	LastExit     string   `json:"lastExit,omitempty"`
}

// daemonsDoc is `mcpx daemons --json`.
type daemonsDoc struct {
	Daemons []daemonEntry `json:"daemons"`
	// Pruned lists the files --prune removed (absent without --prune).
	Pruned *[]string `json:"pruned,omitempty"`
}

// daemons lists every daemon key this user has, from key records, info
// files and the service manager, without connecting to any socket.
func daemonsCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:  "daemons",
		Usage: "list every daemon of this user (never connects to one)",
		Description: "Lists every known daemon key, from the key records, the info files of running\n" +
			"daemons and the service manager's units, with its state (running, idle,\n" +
			"failed, stale), pid, configs and socket. It never connects to a socket.\n" +
			"--prune first removes the info files of daemons whose process is gone and the\n" +
			"key records of keys whose config files no longer exist.",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "prune", Usage: "remove stale info files and records of deleted configs first"},
		},
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() > 0 {
				return usagef("daemons takes no arguments")
			}
			l, err := a.local()
			if err != nil {
				return err
			}
			doc := daemonsDoc{}
			if cmd.Bool("prune") {
				removed, err := resolve.Prune(l.paths)
				if err != nil {
					return err
				}
				removed = nonNilStrings(removed)
				doc.Pruned = &removed
			}
			keys, err := resolve.ListKeys(l.paths)
			if err != nil {
				return err
			}
			var states []service.State
			manager := ""
			if m, err := a.detect(ctx, l); err != nil {
				fmt.Fprintf(a.Stderr, "mcpx: %s; listing from files only.\n", strings.TrimSuffix(err.Error(), "."))
			} else {
				manager = m.Name()
				if states, err = m.List(ctx); err != nil {
					fmt.Fprintf(a.Stderr, "mcpx: %s; listing from files only.\n", strings.TrimSuffix(err.Error(), "."))
				}
			}
			doc.Daemons = mergeDaemons(keys, states, manager, l.paths)
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, doc)
			}
			return renderDaemons(a.Stdout, doc)
		},
	}
}

// mergeDaemons joins what the files say (keys) with what the service
// manager says (states), one entry per key, sorted by key.
func mergeDaemons(keys []resolve.KeyInfo, states []service.State, manager string, paths config.Paths) []daemonEntry {
	byKey := map[string]*daemonEntry{}
	var order []string
	entry := func(k string) *daemonEntry {
		if e, ok := byKey[k]; ok {
			return e
		}
		e := &daemonEntry{DaemonKey: k, State: daemonIdle, Manager: manager, Configs: []string{},
			Socket: paths.Socket(config.DaemonKey(k)), ConfigsExist: true}
		byKey[k] = e
		order = append(order, k)
		return e
	}
	for _, ki := range keys {
		e := entry(ki.DaemonKey)
		e.Configs = nonNilStrings(ki.Configs)
		e.Socket = ki.Socket
		e.ConfigsExist = ki.ConfigsExist
		e.SchemaHash = ki.SchemaHash
		if ki.Manager != "" {
			e.Manager = ki.Manager
		}
		switch ki.State {
		case api.DaemonRunning:
			e.State, e.Pid = daemonRunning, ki.Pid
		case api.DaemonStale:
			e.State = daemonStale
		}
	}
	for _, st := range states {
		e := entry(string(st.Key))
		e.Units = st.Units
		switch st.Service {
		case service.ServiceRunning:
			e.State = daemonRunning
			if st.PID > 0 {
				e.Pid = st.PID
			}
		case service.ServiceFailed:
			if e.State != daemonRunning {
				e.State = daemonFailed
			}
		case service.ServiceStale:
			if e.State != daemonRunning {
				e.State = daemonStale
			}
		}
		if e.State != daemonRunning {
			e.LastExit = st.LastExit
		}
	}
	slices.Sort(order)
	out := make([]daemonEntry, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	return out
}

func renderDaemons(w io.Writer, doc daemonsDoc) error {
	if doc.Pruned != nil {
		for _, p := range *doc.Pruned {
			fmt.Fprintf(w, "removed %s\n", p)
		}
		if len(*doc.Pruned) == 0 {
			fmt.Fprintln(w, "nothing to prune")
		}
		fmt.Fprintln(w)
	}
	if len(doc.Daemons) == 0 {
		_, err := fmt.Fprintln(w, "no daemons known")
		return err
	}
	rows := make([][]string, 0, len(doc.Daemons))
	for _, d := range doc.Daemons {
		state := d.State
		if d.LastExit != "" {
			state += " (" + d.LastExit + ")"
		}
		pid := "-"
		if d.Pid > 0 {
			pid = strconv.Itoa(d.Pid)
		}
		configs := "(built-in)"
		if len(d.Configs) > 0 {
			configs = strings.Join(d.Configs, ", ")
			if !d.ConfigsExist {
				configs += " (gone)"
			}
		}
		rows = append(rows, []string{d.DaemonKey, state, pid, d.Manager, configs, d.Socket})
	}
	return table(w, []string{"KEY", "STATE", "PID", "MANAGER", "CONFIGS", "SOCKET"}, rows)
}
