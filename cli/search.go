package cli

import (
	"context"
	"fmt"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// search ranks tools by the given words (the search package, in the
// daemon: names, titles, descriptions, parameters, enum values and server
// instructions, with a thesaurus of tool vocabulary). It never starts a
// server: namespaces never read are named on stderr.
//
// --json: api.SearchResponse, each hit with why it matched.
func searchCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "search",
		Usage:     "find the tool for a task, in words (\"open a ticket\", \"list the pods\")",
		ArgsUsage: "[NS:]WORDS...",
		Description: "Results are ranked: a word in a tool's name counts most, then its title and description, then\n" +
			"its parameters and their allowed values. Words are stemmed (\"creating\" finds create_entities),\n" +
			"common words (a, the, of…) are ignored, and a thesaurus of tool vocabulary matches what the\n" +
			"tools say differently (\"ticket\" finds issues, \"k8s\" Kubernetes, \"erase\" delete). --json says\n" +
			"why each tool matched. Limit to one namespace with --ns NS or an NS: prefix.",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "ns", Usage: "search only namespace `NS`"},
			&ucli.IntFlag{Name: "limit", Aliases: []string{"n"}, Value: 10, Usage: "show at most `N` results"},
		},
		Action: func(ctx context.Context, cmd *ucli.Command) error { return a.searchRun(ctx, cmd) },
	}
}

// searchRun runs search with the line cmd (parsed by urfave/cli, or lean.go).
func (a *App) searchRun(ctx context.Context, cmd invocation) error {
	if cmd.NArg() == 0 {
		return usagef("search needs at least one word")
	}
	limit := cmd.Int("limit")
	if limit < 1 {
		return usagef("--limit must be at least 1, not %d", limit)
	}
	c, err := a.client(ctx, cmd)
	if err != nil {
		return err
	}
	r, err := c.SearchIn(ctx, strings.Join(cmd.Args().Slice(), " "), cmd.String("ns"), int(limit), !jsonOut(cmd))
	if err != nil {
		return err
	}
	if jsonOut(cmd) {
		return writeJSON(a.Stdout, r)
	}
	rows := make([][]string, 0, len(r.Results))
	for _, h := range r.Results {
		rows = append(rows, []string{h.Namespace + "." + h.Name, api.Summary(h.Description)})
	}
	if err := table(a.Stdout, nil, rows); err != nil {
		return err
	}
	switch len(r.Unread) + r.UnreadMore {
	case 0:
	case 1:
		fmt.Fprintf(a.Stderr, "mcpx: %s has not been read yet and was not searched; `mcpx refresh` reads it.\n", r.Unread[0])
	default:
		fmt.Fprintf(a.Stderr, "mcpx: %s have not been read yet and were not searched; `mcpx refresh` reads them.\n", someNames(r.Unread, r.UnreadMore))
	}
	if r.Untrusted > 0 {
		fmt.Fprintf(a.Stderr, "mcpx: %d server(s) come from project files you have not trusted and were not searched; `mcpx config --path` lists them, `mcpx trust` trusts this directory's.\n", r.Untrusted)
	}
	if len(r.Results) == 0 && len(r.Unread) == 0 && r.Untrusted == 0 {
		fmt.Fprintln(a.Stderr, "mcpx: no tool matches.")
	}
	return nil
}
