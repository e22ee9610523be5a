package cli

import (
	"context"
	"fmt"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/proc"
)

// What the daemon's pools learned about a server's instances, said where a
// user looks: after the `ls` table and in `mcpx doctor`.

// instanceNotes is one sentence per server that exits after each answer or
// had hung instances replaced.
func instanceNotes(nss []api.Namespace) []string {
	var out []string
	for _, n := range nss {
		if n.ExitsAfterAnswer {
			out = append(out, fmt.Sprintf("%s exits after each answer, so each of its calls gets its own instance (as with scope: call); `mcpx restart %s` forgets this", n.Name, n.Name))
		}
		if n.Replaced > 0 {
			out = append(out, fmt.Sprintf("%s: %d hung %s replaced (no answer after a call was cut short by its callTimeout or by the caller)", n.Name, n.Replaced, plural(n.Replaced, "instance", "instances")))
		}
	}
	return out
}

// noteInstances prints instanceNotes on stderr.
func (a *App) noteInstances(nss []api.Namespace) {
	for _, s := range instanceNotes(nss) {
		fmt.Fprintf(a.Stderr, "mcpx: %s.\n", s)
	}
}

// doctorInstances adds a warning per instanceNotes sentence of the daemon
// the info file names, if it runs (asked without activating anything).
func doctorInstances(ctx context.Context, add addFunc, info *config.InfoFile) {
	if info == nil || info.Socket == "" || !proc.Alive(info.Pid) {
		return
	}
	st, err := liveStatus(ctx, info.Socket)
	if err != nil {
		return
	}
	for _, s := range instanceNotes(st.Namespaces) {
		add("instances", checkWarn, "%s", s)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
