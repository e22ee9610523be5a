package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// ls lists namespaces, or one namespace's tools, from the daemon's schema
// cache; it never starts a server.
//
// --json: api.NamespacesResponse without NS, api.ToolsResponse with NS.
func lsCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "ls",
		Usage:     "list namespaces, or the tools of one",
		ArgsUsage: "[NS]",
		Action:    func(ctx context.Context, cmd *ucli.Command) error { return a.lsRun(ctx, cmd) },
	}
}

// lsRun runs ls with the line cmd (parsed by urfave/cli, or lean.go).
func (a *App) lsRun(ctx context.Context, cmd invocation) error {
	if cmd.NArg() > 1 {
		return usagef("ls takes at most one namespace")
	}
	c, err := a.client(ctx, cmd)
	if err != nil {
		return err
	}
	if ns := cmd.Args().First(); ns != "" {
		return a.lsTools(ctx, cmd, c, ns)
	}
	return a.lsNamespaces(ctx, cmd, c)
}

// lsTools is `ls NS`.
func (a *App) lsTools(ctx context.Context, cmd invocation, c *client.Client, ns string) error {
	if jsonOut(cmd) {
		r, err := c.Tools(ctx, ns)
		if err != nil {
			return err
		}
		// The same failure as the table's, as a JSON document.
		if err := unreadError(r.Namespace); err != nil {
			return err
		}
		return writeJSON(a.Stdout, r)
	}
	// The table needs no definitions.
	r, err := c.ToolsBrief(ctx, ns)
	if err != nil {
		return err
	}
	if err := unreadError(r.Namespace); err != nil {
		return err
	}
	return tableOf(a.Stdout, []string{"TOOL", "DESCRIPTION"}, len(r.Rows), func(i int, buf []string) []string {
		buf[0], buf[1] = r.Rows[i].Name, r.Rows[i].Summary
		return buf
	})
}

// lsNamespaces is `ls`: the table, then notes on stderr about untrusted,
// unread and unavailable servers.
func (a *App) lsNamespaces(ctx context.Context, cmd invocation, c *client.Client) error {
	if jsonOut(cmd) {
		r, err := c.Namespaces(ctx)
		if err != nil {
			return err
		}
		return writeJSON(a.Stdout, r)
	}
	r, err := c.NamespacesBrief(ctx)
	if err != nil {
		return err
	}
	rows := make([][]string, 0, len(r.Namespaces))
	untrusted := 0
	var beside []api.Namespace // "NAME (untrusted)" rows
	for _, n := range r.Namespaces {
		if n.State == api.StateUntrusted {
			untrusted++
			if strings.HasSuffix(n.Name, config.UntrustedSuffix) {
				beside = append(beside, n)
			}
		}
		rows = append(rows, []string{n.Name, strconv.Itoa(n.Tools), strconv.Itoa(n.Live), nsState(n), api.Summary(n.Description)})
	}
	if err := table(a.Stdout, []string{"NAMESPACE", "TOOLS", "LIVE", "STATE", "DESCRIPTION"}, rows); err != nil {
		return err
	}
	if untrusted > 0 {
		fmt.Fprintf(a.Stderr, "mcpx: %d server(s) come from project files you have not trusted; `mcpx config --path` lists them, `mcpx trust` trusts this directory's.\n", untrusted)
	}
	for _, n := range beside {
		name := strings.TrimSuffix(n.Name, config.UntrustedSuffix)
		fmt.Fprintf(a.Stderr, "mcpx: %s, which you have not trusted, defines %s too; %s.TOOL calls the trusted %s until you trust that file.\n", n.Source, name, name, name)
	}
	a.noteUnread(r.Namespaces)
	a.noteInstances(r.Namespaces)
	for _, u := range r.Unavailable {
		fmt.Fprintf(a.Stderr, "mcpx: %s.\n", u.Sentence())
	}
	return nil
}

// nsState is a namespace's STATE column: the state, with the first line
// of its error or the untrusted file.
func nsState(n api.Namespace) string {
	switch {
	case (n.State == api.StateError || n.State == api.StateInvalid || n.State == api.StateSkipped) && n.Error != "":
		return n.State + ": " + api.FirstLine(n.Error)
	case n.State == api.StateUntrusted && n.Source != "":
		return n.State + ": " + n.Source
	}
	return n.State
}

// noteUnread tells on stderr which namespaces have never been read (broad
// commands do not start servers) and how to read them.
func (a *App) noteUnread(nss []api.Namespace) {
	var unread []string
	for _, n := range nss {
		if n.State == api.StateUnread {
			unread = append(unread, n.Name)
		}
	}
	switch len(unread) {
	case 0:
	case 1:
		fmt.Fprintf(a.Stderr, "mcpx: %s has not been read yet; `mcpx refresh` reads it (or name it: `mcpx ls %s`).\n", unread[0], unread[0])
	default:
		named := min(len(unread), api.UnreadNamed)
		fmt.Fprintf(a.Stderr, "mcpx: %s have not been read yet; `mcpx refresh` reads them.\n", someNames(unread[:named], len(unread)-named))
	}
}

// someNames is "a, b, c" or, with more left out, "a, b, c and 495 more".
func someNames(names []string, more int) string {
	s := strings.Join(names, ", ")
	if more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}
