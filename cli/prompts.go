package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// prompts lists prompts with their arguments from the schema cache; it never
// starts a server.
//
// --json: api.PromptsResponse.
func promptsCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "prompts",
		Usage:     "list the prompts of every namespace, or of one",
		ArgsUsage: "[NS]",
		Action: listAction(a, "prompts", (*client.Client).Prompts, func(r *api.PromptsResponse) ([]string, [][]string, []api.Namespace) {
			rows := make([][]string, 0, len(r.Prompts))
			for _, p := range r.Prompts {
				args := make([]string, 0, len(p.Arguments))
				for _, arg := range p.Arguments {
					if arg.Required {
						args = append(args, arg.Name)
					} else {
						args = append(args, "["+arg.Name+"]")
					}
				}
				rows = append(rows, []string{p.Namespace + "." + p.Name, strings.Join(args, " "), api.Summary(firstNonEmpty(p.Description, p.Title))})
			}
			return []string{"PROMPT", "ARGUMENTS", "DESCRIPTION"}, rows, r.Namespaces
		}),
	}
}

// prompt gets one prompt's messages, filled with key=value arguments
// (prompt arguments are strings). Text content prints as text, one message
// after another; other content prints as one line naming it.
//
// --json: api.PromptResponse (the GetPromptResult whole).
func promptCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "prompt",
		Usage:     "get a prompt's messages",
		ArgsUsage: "NS.NAME [key=value ...]",
		Flags: []ucli.Flag{
			sessionFlag(),
		},
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() == 0 {
				return usagef("prompt needs NS.NAME")
			}
			target := cmd.Args().First()
			ns, name := splitTarget(target)
			if ns == "" || name == "" {
				return usagef("prompt: %q is not NS.NAME", target)
			}
			args := map[string]string{}
			for _, kv := range cmd.Args().Tail() {
				k, v, ok := strings.Cut(kv, "=")
				if !ok || k == "" {
					return usagef("prompt: argument %q is not key=value", kv)
				}
				args[k] = v
			}
			c, err := a.client(ctx, cmd)
			if err != nil {
				return err
			}
			r, err := c.Prompt(ctx, api.PromptRequest{Namespace: ns, Name: name, Arguments: args, Session: a.session(cmd), Elicit: a.elicitDefaults()})
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, r)
			}
			text, err := promptText(r.Result)
			if err != nil {
				return fmt.Errorf("read the messages of %s: %w", target, err)
			}
			fmt.Fprintln(a.Stdout, text)
			return nil
		},
	}
}

// promptText renders a GetPromptResult's messages for people: with more
// than one message each starts with its role.
func promptText(raw json.RawMessage) (string, error) {
	var result struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content api.ContentItem `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &result); err != nil {
		return "", err
	}
	var parts []string
	for _, m := range result.Messages {
		var body string
		switch c := m.Content; {
		case c.Type == "text":
			body = c.Text
		case c.Type == "resource" && c.Resource != nil && c.Resource.Text != "":
			body = c.Resource.Text
		case c.Type == "resource" && c.Resource != nil:
			body = c.Resource.URI
		case c.Type == "resource_link":
			body = c.URI
		default:
			body = "(" + c.Type + " content; see --json)"
		}
		if len(result.Messages) > 1 {
			body = m.Role + ": " + body
		}
		parts = append(parts, body)
	}
	return strings.Join(parts, "\n\n"), nil
}
