package cli

import (
	"context"
	"errors"
	"strings"

	ucli "github.com/urfave/cli/v3"
)

// The commands an agent runs most (call, ls, search, schema) are mostly
// written without flags: `mcpx call NS.TOOL key=value`, `mcpx ls NS`.
// Such a line runs its command directly, without urfave/cli: building the
// command tree, parsing and looking each flag up by name cost a warm call
// about a third of the CLI's instructions. Any other line (a flag, "-",
// "--", help) goes through urfave/cli as before; both run the same code
// with the same values.

// invocation is how a command reads its command line: a *ucli.Command, or
// a leanLine.
type invocation interface {
	Bool(name string) bool
	String(name string) string
	Int(name string) int
	IsSet(name string) bool
	Args() ucli.Args
	NArg() int
	FullName() string
}

// leanCommand is the command a lean line may run: how to build it (for
// its flags' defaults) and its action. Switches, not maps: a package-level
// map is built at init, in every process.
func leanCommand(name string) (build func(*App) *ucli.Command, run func(*App, context.Context, invocation) error, ok bool) {
	switch name {
	case "call":
		return callCommand, (*App).callRun, true
	case "ls":
		return lsCommand, (*App).lsRun, true
	case "search":
		return searchCommand, (*App).searchRun, true
	case "schema":
		return schemaCommand, (*App).schemaRun, true
	case "version":
		return versionCommand, (*App).versionRun, true
	}
	return nil, nil, false
}

// leanGlobal names the global flag a lean line may give (each once):
// --json, and -C/--directory and --config with a value ("-C DIR" or
// "-C=DIR").
func leanGlobal(flag string) (name string, ok bool) {
	switch flag {
	case "--json":
		return "json", true
	case "-C", "--directory":
		return "directory", true
	case "--config":
		return "config", true
	}
	return "", false
}

// runLean runs args when they are a lean line (parseLean); ok is false for
// any other line, which urfave/cli then runs.
func (a *App) runLean(ctx context.Context, args []string) (ok bool, err error) {
	if a.noLean {
		return false, nil
	}
	line, run, ok := a.parseLean(args)
	if !ok {
		return false, nil
	}
	err = run(a, ctx, line)
	var ue *usageError
	if errors.As(err, &ue) && ue.cmd == "" {
		ue.cmd = line.name // as the wrapper in root does
	}
	return true, err
}

// parseLean reads args as a lean line: a lean command whose other
// arguments are positional, with the global flags of leanGlobal anywhere.
func (a *App) parseLean(args []string) (line *leanLine, run func(*App, context.Context, invocation) error, ok bool) {
	given := map[string]bool{}
	line = &leanLine{flags: map[string]any{"json": false, "config": "", "directory": ""}, given: given}
	var name string
	for i := 1; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") {
			if name == "" {
				name = arg
			} else {
				line.args = append(line.args, arg)
			}
			continue
		}
		flag, value, hasValue := strings.Cut(arg, "=")
		global, known := leanGlobal(flag)
		if !known || given[global] {
			return nil, nil, false
		}
		given[global] = true
		if global == "json" {
			if hasValue {
				return nil, nil, false
			}
			line.flags["json"] = true
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return nil, nil, false
			}
			i++
			value = args[i]
		}
		if value == "" || strings.HasPrefix(value, "-") {
			return nil, nil, false
		}
		line.flags[global] = value
	}
	build, run, found := leanCommand(name)
	if !found {
		return nil, nil, false
	}
	line.name = "mcpx " + name
	for _, f := range build(a).Flags {
		switch f := f.(type) {
		case *ucli.BoolFlag:
			line.flags[f.Name] = f.Value
		case *ucli.StringFlag:
			line.flags[f.Name] = f.Value
		case *ucli.IntFlag:
			line.flags[f.Name] = f.Value
		default:
			return nil, nil, false // a flag kind lean lines do not know
		}
	}
	return line, run, true
}

// leanLine is a lean command line: every flag at its default but the
// global ones given.
type leanLine struct {
	name  string
	flags map[string]any
	given map[string]bool // the global flags on the line
	args  leanArgs
}

func (l *leanLine) IsSet(name string) bool { return l.given[name] }

func (l *leanLine) Bool(name string) bool     { v, _ := l.flags[name].(bool); return v }
func (l *leanLine) String(name string) string { v, _ := l.flags[name].(string); return v }
func (l *leanLine) Int(name string) int       { v, _ := l.flags[name].(int); return v }
func (l *leanLine) Args() ucli.Args           { return &l.args }
func (l *leanLine) NArg() int                 { return len(l.args) }
func (l *leanLine) FullName() string          { return l.name }

// leanArgs are a lean line's positional arguments, with ucli.Args's
// meaning.
type leanArgs []string

func (a *leanArgs) Get(n int) string {
	if n < len(*a) {
		return (*a)[n]
	}
	return ""
}
func (a *leanArgs) First() string { return a.Get(0) }
func (a *leanArgs) Tail() []string {
	if len(*a) < 2 {
		return []string{}
	}
	return append([]string(nil), (*a)[1:]...)
}
func (a *leanArgs) Len() int        { return len(*a) }
func (a *leanArgs) Present() bool   { return len(*a) != 0 }
func (a *leanArgs) Slice() []string { return append([]string{}, (*a)...) }
