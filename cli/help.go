package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/schemadoc"
)

// help shows the help of mcpx, of a command (`help cache gc`), or of a
// tool (`help NS.TOOL`, the same as `call NS.TOOL --help`).
func helpCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "help",
		Usage:     "show help for mcpx, a command, or a tool (NS.TOOL)",
		ArgsUsage: "[COMMAND [SUBCOMMAND] | NS.TOOL]",
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			root := cmd.Root()
			if cmd.NArg() == 0 {
				return ucli.ShowRootCommandHelp(root)
			}
			first := cmd.Args().First()
			if ns, tool := splitTarget(first); ns != "" && tool != "" {
				return a.toolHelp(ctx, cmd, ns, tool)
			}
			target := root
			for _, name := range cmd.Args().Slice() {
				sub := target.Command(name)
				if sub == nil {
					return unknownCommand(target, name)
				}
				target = sub
			}
			return showHelp(target)
		},
	}
}

// showHelp prints c's help page (as `mcpx c --help` would).
func showHelp(c *ucli.Command) error {
	ucli.HelpPrinter(c.Root().Writer, helpTemplate(c), c)
	return nil
}

// helpTemplate is the template of c's help page.
func helpTemplate(c *ucli.Command) string {
	if c.CustomHelpTemplate != "" {
		return c.CustomHelpTemplate
	}
	if len(c.VisibleCommands()) > 0 {
		return ucli.SubcommandHelpTemplate
	}
	return ucli.CommandHelpTemplate
}

// toolHelp prints a tool's parameters from the daemon's schema cache
// (reading a never-read server first): its title and description, each
// parameter with its type, whether it is required, its default and
// description, then an example call. --json prints the tool's entry.
func (a *App) toolHelp(ctx context.Context, cmd *ucli.Command, ns, tool string) error {
	r, err := a.schema(ctx, cmd, ns, tool)
	if err != nil {
		return err
	}
	if len(r.Tools) != 1 {
		return fmt.Errorf("the daemon answered %d tools for %s.%s", len(r.Tools), ns, tool)
	}
	t := r.Tools[0]
	if jsonOut(cmd) {
		return writeJSON(a.Stdout, t)
	}
	return writeToolHelp(a.Stdout, t)
}

// schema asks the daemon for the definitions of ns (tool "" for all of
// them, else that one); a namespace whose tools are not read is an error
// (unreadError).
func (a *App) schema(ctx context.Context, cmd invocation, ns, tool string) (*api.ToolsResponse, error) {
	c, err := a.client(ctx, cmd)
	if err != nil {
		return nil, err
	}
	r, err := c.Schema(ctx, ns, tool)
	if err != nil {
		return nil, err
	}
	if err := unreadError(r.Namespace); err != nil {
		return nil, err
	}
	return r, nil
}

// unreadError explains a namespace whose tools could not be read (its last
// listing failed), so an empty answer never looks like "no tools".
func unreadError(n api.Namespace) error {
	switch n.State {
	case api.StateError:
		// The server's stderr tail is quoted once, as a failed call's is.
		summary, tail := n.Error, n.Stderr
		return &exitError{code: ExitUnavailable, kind: codeServer,
			msg:  fmt.Sprintf("the tools of %s could not be read: %s", n.Name, strings.TrimSuffix(api.FirstLine(summary), ".")),
			hint: fmt.Sprintf("fix the server, then run `mcpx refresh %s`", n.Name), tail: tail}
	case api.StateUnread:
		return &exitError{code: ExitUnavailable, kind: codeServer,
			msg: fmt.Sprintf("the tools of %s have not been read. Run `mcpx refresh %s`.", n.Name, n.Name)}
	}
	return nil
}

// helpDef is the part of a tool definition help reads.
type helpDef struct {
	Name        string         `json:"name"`
	Title       string         `json:"title"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
	Annotations struct {
		Title           string `json:"title"`
		ReadOnlyHint    *bool  `json:"readOnlyHint"`
		DestructiveHint *bool  `json:"destructiveHint"`
	} `json:"annotations"`
}

// param is one parameter as help shows it.
type param struct {
	name, typ, def, desc string
	required             bool
	nested               []param        // an object's properties, one level
	schema               map[string]any // the property's schema (resolved)
}

func writeToolHelp(w io.Writer, t api.Tool) error {
	var d helpDef
	if err := json.Unmarshal(t.Definition, &d); err != nil {
		return fmt.Errorf("read the schema of %s.%s: %w", t.Namespace, t.Name, err)
	}
	full := t.Namespace + "." + t.Name
	var b strings.Builder
	title := d.Title
	if title == "" {
		title = d.Annotations.Title
	}
	b.WriteString(full)
	if title != "" {
		b.WriteString(" — " + title)
	}
	b.WriteString("\n")
	if d.Annotations.DestructiveHint != nil && *d.Annotations.DestructiveHint && (d.Annotations.ReadOnlyHint == nil || !*d.Annotations.ReadOnlyHint) {
		b.WriteString("(destructive: asks for confirmation unless --yes)\n")
	}
	if desc := strings.TrimSpace(d.Description); desc != "" {
		b.WriteString("\n" + indent(desc, "  ") + "\n")
	}
	params := params(d.InputSchema, d.InputSchema, true)
	root := d.InputSchema
	b.WriteString("\nPARAMETERS:\n")
	if len(params) == 0 {
		b.WriteString("  (none)\n")
	}
	writeParams(&b, params, "  ")
	b.WriteString("\nEXAMPLE:\n  " + example(root, full, params) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeParams(b *strings.Builder, ps []param, pad string) {
	for _, p := range ps {
		req := "optional"
		if p.required {
			req = "required"
		}
		fmt.Fprintf(b, "%s%s (%s, %s", pad, p.name, p.typ, req)
		if p.def != "" {
			fmt.Fprintf(b, ", default %s", p.def)
		}
		b.WriteString(")\n")
		if p.desc != "" {
			b.WriteString(indent(p.desc, pad+"    ") + "\n")
		}
		writeParams(b, p.nested, pad+"    ")
	}
}

// params lists the properties of an object schema: required ones first in
// the schema's order of required, then the rest by name. Nested objects are
// described one level deep.
func params(root, s map[string]any, nest bool) []param {
	s = schemadoc.Resolve(root, s)
	props, _ := s["properties"].(map[string]any)
	required := map[string]bool{}
	var order []string
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				if _, there := props[name]; there && !required[name] {
					order = append(order, name)
				}
				required[name] = true
			}
		}
	}
	var rest []string
	for name := range props {
		if !required[name] {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	var out []param
	for _, name := range append(order, rest...) {
		ps := schemadoc.Resolve(root, schemadoc.Object(props[name]))
		p := param{name: name, typ: typeName(root, ps), required: required[name], desc: description(ps), schema: ps}
		if def, ok := ps["default"]; ok {
			b, _ := json.Marshal(def)
			p.def = string(b)
		}
		if nest && ps["properties"] != nil {
			p.nested = params(root, ps, false)
		} else if items := schemadoc.Resolve(root, schemadoc.Object(ps["items"])); nest && items["properties"] != nil {
			p.nested = params(root, items, false)
		}
		out = append(out, p)
	}
	return out
}

func description(s map[string]any) string {
	d, _ := s["description"].(string)
	if d == "" {
		d, _ = s["title"].(string)
	}
	return strings.TrimSpace(d)
}

// typeName describes a schema's type for people: string, integer, one of
// "a" | "b", array of string, object, string | null…
func typeName(root, s map[string]any) string {
	s = schemadoc.Resolve(root, s)
	if s == nil {
		return "any"
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		vals := make([]string, len(enum))
		for i, v := range enum {
			b, _ := json.Marshal(v)
			vals[i] = string(b)
		}
		return "one of " + strings.Join(vals, " | ")
	}
	if c, ok := s["const"]; ok {
		b, _ := json.Marshal(c)
		return "const " + string(b)
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[key].([]any); ok && len(alts) > 0 {
			var names []string
			for _, alt := range alts {
				n := typeName(root, schemadoc.Object(alt))
				if !slices.Contains(names, n) {
					names = append(names, n)
				}
			}
			return strings.Join(names, " | ")
		}
	}
	types := schemadoc.Types(s)
	if len(types) == 0 {
		return "any"
	}
	for i, t := range types {
		if t == "array" {
			if items := schemadoc.Object(s["items"]); items != nil {
				types[i] = "array of " + typeName(root, items)
			}
		}
		if t == "string" {
			if f, ok := s["format"].(string); ok {
				types[i] = "string (" + f + ")"
			}
		}
	}
	return strings.Join(types, " | ")
}

// example is an mcpx call line with a value for each required parameter
// (or the first parameter when none is required).
func example(root map[string]any, full string, ps []param) string {
	parts := []string{"mcpx call " + full}
	pick := ps
	var req []param
	for _, p := range ps {
		if p.required {
			req = append(req, p)
		}
	}
	if len(req) > 0 {
		pick = req
	} else if len(ps) > 1 {
		pick = ps[:1]
	}
	for _, p := range pick {
		parts = append(parts, exampleArg(root, p))
	}
	return strings.Join(parts, " ")
}

// exampleArg is key=value for a string, number or boolean (and for an
// array of them: one value makes an array of one), key:=JSON otherwise.
func exampleArg(root map[string]any, p param) string {
	v := exampleValue(root, p.schema, p.name, 0)
	if s, ok := v.(string); ok {
		return shellArg(p.name + "=" + s)
	}
	if arr, ok := v.([]any); ok && len(arr) == 1 {
		if s, ok := arr[0].(string); ok {
			return shellArg(p.name + "=" + s)
		}
	}
	b, _ := json.Marshal(v)
	switch v.(type) {
	case float64, bool:
		return p.name + "=" + string(b)
	}
	return shellArg(p.name + ":=" + string(b))
}

// exampleValue makes a value the schema accepts, for the example line:
// the default, the first enum value, else a placeholder of the right type
// (strings are the parameter's name in capitals).
func exampleValue(root, s map[string]any, name string, depth int) any {
	s = schemadoc.Resolve(root, s)
	if def, ok := s["default"]; ok {
		return def
	}
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	if c, ok := s["const"]; ok {
		return c
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[key].([]any); ok && len(alts) > 0 {
			return exampleValue(root, schemadoc.Object(alts[0]), name, depth)
		}
	}
	t, _ := s["type"].(string)
	if list, ok := s["type"].([]any); ok && len(list) > 0 {
		t, _ = list[0].(string)
	}
	if t == "" && s["properties"] != nil {
		t = "object"
	}
	switch t {
	case "integer", "number":
		return float64(1)
	case "boolean":
		return true
	case "null":
		return nil
	case "array":
		if depth > 3 {
			return []any{}
		}
		return []any{exampleValue(root, schemadoc.Object(s["items"]), name, depth+1)}
	case "object":
		out := map[string]any{}
		if depth > 3 {
			return out
		}
		props := schemadoc.Object(s["properties"])
		req, _ := s["required"].([]any)
		for _, r := range req {
			if k, ok := r.(string); ok && props[k] != nil {
				out[k] = exampleValue(root, schemadoc.Object(props[k]), k, depth+1)
			}
		}
		return out
	}
	return strings.ToUpper(strings.NewReplacer("-", "_", " ", "_").Replace(name))
}

// shellArg quotes s for a POSIX shell when it needs it.
func shellArg(s string) string {
	if strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=:./@,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func indent(s, pad string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = pad + strings.TrimRight(l, " \t\r")
		} else {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}
