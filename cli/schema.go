package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	ucli "github.com/urfave/cli/v3"
)

// schema prints tool definitions from the schema cache: as JSON (the
// definition exactly as the server sent it; an array for a namespace) or as
// TypeScript declarations.
//
// --json: api.ToolsResponse.
func schemaCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "schema",
		Usage:     "print the input/output schemas of a namespace's tools or of one tool",
		ArgsUsage: "NS[.TOOL]",
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "format", Value: "json", Usage: "json or ts (TypeScript declarations)"},
		},
		Action: func(ctx context.Context, cmd *ucli.Command) error { return a.schemaRun(ctx, cmd) },
	}
}

// schemaRun runs schema with the line cmd (parsed by urfave/cli, or lean.go).
func (a *App) schemaRun(ctx context.Context, cmd invocation) error {
	if cmd.NArg() != 1 {
		return usagef("schema takes one NS or NS.TOOL")
	}
	format := cmd.String("format")
	if format != "json" && format != "ts" {
		return usagef("--format must be json or ts, not %q", format)
	}
	ns, tool := splitTarget(cmd.Args().First())
	if ns == "" {
		return usagef("schema: %q names no namespace", cmd.Args().First())
	}
	r, err := a.schema(ctx, cmd, ns, tool)
	if err != nil {
		return err
	}
	if jsonOut(cmd) {
		return writeJSON(a.Stdout, r)
	}
	defs := make([]json.RawMessage, 0, len(r.Tools))
	for _, t := range r.Tools {
		defs = append(defs, t.Definition)
	}
	if format == "ts" {
		out, err := typeScript(ns, defs)
		if err != nil {
			return err
		}
		_, err = fmt.Fprint(a.Stdout, out)
		return err
	}
	var doc []byte
	if tool != "" && len(defs) == 1 {
		doc = defs[0]
	} else if doc, err = json.Marshal(defs); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, doc, "", "  "); err != nil {
		return fmt.Errorf("schema of %s: %w", cmd.Args().First(), err)
	}
	buf.WriteByte('\n')
	_, err = a.Stdout.Write(buf.Bytes())
	return err
}

// splitTarget splits "ns.tool" at the first dot ("ns" alone has no tool).
func splitTarget(s string) (ns, tool string) {
	ns, tool, _ = strings.Cut(s, ".")
	return ns, tool
}
