package cli

import (
	"context"
	"strings"

	ucli "github.com/urfave/cli/v3"
)

func init() { register(searchCommand) }

// search ranks tools by the given words.
//
// --json: api.SearchResponse.
func searchCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "search",
		Usage:     "find tools by words in their names and descriptions",
		ArgsUsage: "WORDS...",
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() == 0 {
				return usagef("search needs at least one word")
			}
			c, err := a.client(ctx, cmd)
			if err != nil {
				return err
			}
			r, err := c.Search(ctx, strings.Join(cmd.Args().Slice(), " "))
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, r)
			}
			rows := make([][]string, 0, len(r.Results))
			for _, h := range r.Results {
				rows = append(rows, []string{h.Namespace + "." + h.Name, summary(h.Description)})
			}
			return table(a.Stdout, nil, rows)
		},
	}
}
