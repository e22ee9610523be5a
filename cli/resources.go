package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// resources lists resources and resource templates from the schema cache;
// it never starts a server.
//
// --json: api.ResourcesResponse.
func resourcesCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "resources",
		Usage:     "list the resources and resource templates of every namespace, or of one",
		ArgsUsage: "[NS]",
		Action: listAction(a, "resources", (*client.Client).Resources, func(r *api.ResourcesResponse) ([]string, [][]string, []api.Namespace) {
			rows := make([][]string, 0, len(r.Resources)+len(r.Templates))
			for _, res := range r.Resources {
				rows = append(rows, []string{res.Namespace, res.URI, res.MimeType, api.Summary(firstNonEmpty(res.Title, res.Name, res.Description))})
			}
			for _, t := range r.Templates {
				rows = append(rows, []string{t.Namespace, t.URITemplate, t.MimeType, api.Summary(firstNonEmpty(t.Title, t.Name, t.Description)) + " (template)"})
			}
			return []string{"NAMESPACE", "URI", "MIME", "NAME"}, rows, r.Namespaces
		}),
	}
}

// listAction is the action of a listing from the schema cache (resources,
// prompts): at most one namespace; --json prints what fetch returns,
// otherwise render's table (nothing when it has no rows), then which
// namespaces have not been read.
func listAction[R any](a *App, name string, fetch func(*client.Client, context.Context, string) (*R, error),
	render func(*R) (header []string, rows [][]string, namespaces []api.Namespace)) ucli.ActionFunc {
	return func(ctx context.Context, cmd *ucli.Command) error {
		if cmd.NArg() > 1 {
			return usagef("%s takes at most one namespace", name)
		}
		c, err := a.client(ctx, cmd)
		if err != nil {
			return err
		}
		r, err := fetch(c, ctx, cmd.Args().First())
		if err != nil {
			return err
		}
		if jsonOut(cmd) {
			return writeJSON(a.Stdout, r)
		}
		header, rows, namespaces := render(r)
		if len(rows) > 0 {
			if err := table(a.Stdout, header, rows); err != nil {
				return err
			}
		}
		unread(a.Stderr, namespaces)
		return nil
	}
}

// unread tells on stderr which namespaces have no cached lists yet, and
// how many were left out as untrusted (which `mcpx refresh` does not read).
func unread(w io.Writer, nss []api.Namespace) {
	untrusted := 0
	for _, n := range nss {
		switch n.State {
		case api.StateUnread:
			fmt.Fprintf(w, "mcpx: %s has not been read yet; run `mcpx refresh %s`.\n", n.Name, n.Name)
		case api.StateError:
			fmt.Fprintf(w, "mcpx: listing %s failed: %s\n", n.Name, api.FirstLine(n.Error))
		case api.StateUntrusted:
			untrusted++
		}
	}
	if untrusted > 0 {
		fmt.Fprintf(w, "mcpx: %d server(s) come from project files you have not trusted; `mcpx config --path` lists them, `mcpx trust` trusts this directory's.\n", untrusted)
	}
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// read reads one resource: text contents to stdout byte for byte, binary
// contents into the content-addressed store with their path printed (or
// copied into --save DIR).
//
// --json: api.ReadResponse.
func readCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "read",
		Usage:     "read a resource",
		ArgsUsage: "NS URI",
		Flags: []ucli.Flag{
			sessionFlag(),
			&ucli.StringFlag{Name: "save", Usage: "copy binary contents into `DIR`"},
		},
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() != 2 {
				return usagef("read needs NS and URI")
			}
			ns, uri := cmd.Args().Get(0), cmd.Args().Get(1)
			c, err := a.client(ctx, cmd)
			if err != nil {
				return err
			}
			r, err := c.Read(ctx, api.ReadRequest{Namespace: ns, URI: uri, Session: a.session(cmd), Elicit: a.elicitDefaults()})
			if err != nil {
				return err
			}
			if dir := cmd.String("save"); dir != "" {
				if err := saveBlobs(dir, "resource", r.Blobs); err != nil {
					return err
				}
			}
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, r)
			}
			var result struct {
				Contents []struct {
					URI  string  `json:"uri"`
					Text *string `json:"text"`
				} `json:"contents"`
			}
			if err := json.Unmarshal(r.Result, &result); err != nil {
				return fmt.Errorf("read the result of %s: %w", uri, err)
			}
			blobs := map[int]api.Blob{}
			for _, b := range r.Blobs {
				blobs[b.Index] = b
			}
			for i, item := range result.Contents {
				switch b, ok := blobs[i]; {
				case ok:
					fmt.Fprintln(a.Stdout, blobLine(b))
				case item.Text != nil:
					// Byte-exact: no newline added.
					if _, err := io.WriteString(a.Stdout, *item.Text); err != nil {
						return err
					}
				default:
					fmt.Fprintf(a.Stderr, "mcpx: content %d of %s has neither text nor binary data\n", i, item.URI)
				}
			}
			return nil
		},
	}
}
