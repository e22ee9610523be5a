// Package cli is mcpx's command line: every command (urfave/cli v3), their
// text and --json rendering, prompts, and the mapping of failures to exit
// codes (DESIGN §8). It talks to the daemon only through package client and
// never imports the daemon side: what needs an MCP library (daemon,
// demo-server) is the other binary, mcpxd, which those commands exec.
//
// Layout: one file per command, each registering one *cli.Command factory
// with register; shared helpers live in app.go (the per-run environment and
// client construction), errors.go (exit codes and messages) and output.go
// (rendering).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/version"
	"github.com/mcpx-dev/mcpx/search"
	"github.com/mcpx-dev/mcpx/service"
)

// Hooks are parts of mcpx the CLI runs but must not import. The daemon and
// the demo server are no longer hooks: they are mcpxd, which `mcpx daemon`
// and `mcpx demo-server` exec (execDaemonBinary).
type Hooks struct{}

// Exit codes (DESIGN §8).
const (
	ExitOK          = 0
	ExitToolError   = 1 // the tool returned isError (or the server answered the call with an error)
	ExitUsage       = 2 // usage or configuration error
	ExitUnavailable = 3 // daemon or transport failure, or any other failure of mcpx itself
	ExitPolicy      = 4 // refused by policy
	ExitInterrupted = 130
)

// Main runs the command line args (args[0] is the program name) and returns
// the process exit code. It reads os.Stdin and writes os.Stdout/os.Stderr.
// After a command took over an interrupt, Main ends the process by that
// signal instead of returning (cli/interrupt.go).
func Main(ctx context.Context, args []string, hooks Hooks) int {
	a := &App{
		Stdin:     os.Stdin,
		Stdout:    os.Stdout,
		Stderr:    os.Stderr,
		Getenv:    os.Getenv,
		LookupEnv: os.LookupEnv,
		Terminal:  isatty.IsTerminal(os.Stdin.Fd()) && isatty.IsTerminal(os.Stderr.Fd()),
		StdoutTTY: isatty.IsTerminal(os.Stdout.Fd()),
		StderrTTY: isatty.IsTerminal(os.Stderr.Fd()),
		Hooks:     hooks,
	}
	code := a.Run(ctx, args)
	endBySignal()
	return code
}

// factories build the commands, one a command (root sorts them by name).
// A list the compiler lays out, not an init in each command's file: 34
// init functions spread over the package's code cost every process, `mcpx
// version` included, a page fault for each page of code they touch, and
// the list's growth a few heap spans.
var factories = [...]func(*App) *ucli.Command{
	authCommand,
	cacheCommand,
	callCommand,
	configCommand,
	daemonCommand,
	daemonsCommand,
	demoServerCommand,
	doctorCommand,
	helpCommand,
	initCommand,
	installCommand,
	loginCommand,
	logoutCommand,
	logsCommand,
	lsCommand,
	manCommand,
	promptCommand,
	promptsCommand,
	readCommand,
	refreshCommand,
	resolveCommand,
	resourcesCommand,
	restartCommand,
	schemaCommand,
	searchCommand,
	serveCommand,
	statusCommand,
	stopCommand,
	taskCommand,
	tasksCommand,
	trustCommand,
	uninstallCommand,
	untrustCommand,
	versionCommand,
}

// Run parses args and runs the command, reporting any failure on a.Stderr.
func (a *App) Run(ctx context.Context, args []string) int {
	args = toolHelpArgs(args)
	lean, err := a.runLean(ctx, args)
	if !lean {
		err = a.root(args).Run(ctx, args)
	}
	if err == nil {
		return ExitOK
	}
	f := classify(err)
	if msg := f.text(); msg != "" {
		fmt.Fprintln(a.Stderr, msg)
	}
	if wantsJSON(args) {
		if doc, ok := f.doc(); ok {
			_ = writeJSON(a.Stdout, doc)
		}
	}
	return f.exit
}

// wantsJSON reports whether the command line asks for JSON output (--json,
// or --output json of call), looked for in the raw arguments so that a
// line that does not even parse still gets its error as JSON.
func wantsJSON(args []string) bool {
	for i, arg := range args {
		if i == 0 {
			continue
		}
		switch arg {
		case "--":
			return false
		case "--json", "-json", "--json=true", "--output=json", "-o=json":
			return true
		case "--output", "-o":
			if i+1 < len(args) && args[i+1] == "json" {
				return true
			}
		}
	}
	return false
}

func (a *App) root(args []string) *ucli.Command {
	var cmds []*ucli.Command
	for _, f := range factories {
		cmds = append(cmds, f(a))
	}
	slices.SortFunc(cmds, func(x, y *ucli.Command) int { return strings.Compare(x.Name, y.Name) })
	cmds = onlyInvoked(cmds, args)
	root := &ucli.Command{
		Name:        "mcpx",
		Usage:       "every configured MCP server behind one command",
		Version:     version.String(),
		Description: rootDescription(),
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "json", Usage: "print a stable JSON document instead of text"},
			&ucli.StringFlag{Name: "config", Usage: "use exactly this config `FILE` (like MCPX_CONFIG)"},
			&ucli.StringFlag{Name: "directory", Aliases: []string{"C"}, Usage: "act as if started in `DIR`"},
		},
		Commands:  cmds,
		Reader:    a.Stdin,
		Writer:    a.Stdout,
		ErrWriter: a.Stderr,
		// Errors are reported once, by Run; nothing exits from inside.
		ExitErrHandler:  func(context.Context, *ucli.Command, error) {},
		HideHelpCommand: true,
		Suggest:         true,
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() > 0 {
				return unknownCommand(cmd, cmd.Args().First())
			}
			return ucli.ShowRootCommandHelp(cmd)
		},
	}
	onUsage := func(_ context.Context, cmd *ucli.Command, err error, _ bool) error {
		return flagError(cmd, err, args)
	}
	var walk func(*ucli.Command)
	walk = func(c *ucli.Command) {
		c.OnUsageError = onUsage
		if len(c.Commands) > 0 && c.Action == nil {
			c.Action = groupAction
		}
		if action := c.Action; action != nil {
			// Usage errors name the command whose help to read.
			c.Action = func(ctx context.Context, cmd *ucli.Command) error {
				err := action(ctx, cmd)
				var ue *usageError
				if errors.As(err, &ue) && ue.cmd == "" {
					ue.cmd = cmd.FullName()
				}
				return err
			}
		}
		for _, sub := range c.Commands {
			walk(sub)
		}
	}
	enableCompletion(root)
	walk(root)
	return root
}

// onlyInvoked keeps, of cmds, just the command args invoke when it is
// named exactly. urfave/cli prepares every command of the tree (help
// subcommands, flag tables) before running one, which was most of a warm
// call's time in the CLI; the others cannot run anyway. Whatever needs the
// whole tree keeps it: no command, a misspelt one (suggestions), and help
// and man, which describe other commands.
func onlyInvoked(cmds []*ucli.Command, args []string) []*ucli.Command {
	i := commandAt(args)
	if i >= len(args) || args[i] == "help" || args[i] == "man" {
		return cmds
	}
	for _, c := range cmds {
		if c.HasName(args[i]) {
			return []*ucli.Command{c}
		}
	}
	return cmds
}

// App is one run of the command line: its streams, environment and hooks.
type App struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv config.Getenv
	// LookupEnv tells set-but-empty variables from unset ones (optional).
	LookupEnv func(string) (string, bool)
	// Detect picks the service manager (default service.Detect).
	Detect func(ctx context.Context, getenv config.Getenv, paths config.Paths, self string) (service.Manager, string, error)
	// Terminal is true when stdin and stderr are terminals, so the user
	// can be asked to confirm a destructive call.
	Terminal bool
	// StdoutTTY is true when stdout is a terminal: text output then ends
	// with a newline even when the tool's text does not.
	StdoutTTY bool
	// StderrTTY is true when stderr is a terminal (progress bars, "starting
	// NS…").
	StderrTTY bool
	Hooks     Hooks
	// RequestTimeout bounds every request to the daemon but calls (0: the
	// client's default, 2 m); calls are bounded by the server's timeouts.
	RequestTimeout time.Duration
	// noLean sends every line through urfave/cli (lean.go; tests compare
	// the two).
	noLean bool
}

// usageError is a command line that cannot be run as written (exit 2).
type usageError struct {
	err     error
	cmd     string // the command's full name, for the help hint
	suggest string // the nearest command or flag, for "did you mean"
	hint    string // what to do instead, when there is nothing to suggest
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// exitError ends the run with code; msg (may be empty) is printed as is.
// kind is its stable --json code (empty: the command printed its own answer
// and no error document follows).
type exitError struct {
	code int
	msg  string
	kind string
	// hint is what to do; tail a server's own output, quoted apart.
	hint, tail string
}

func (e *exitError) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.msg
}

// silent ends the run with code without printing anything more (the command
// already said what happened).
func silent(code int) error { return &exitError{code: code} }

// groupAction runs a command that only groups subcommands (cache,
// completion…): without arguments it shows its help; anything else is an
// unknown subcommand, a usage error with the nearest name.
func groupAction(ctx context.Context, cmd *ucli.Command) error {
	if cmd.NArg() == 0 {
		return ucli.ShowSubcommandHelp(cmd)
	}
	return unknownCommand(cmd, cmd.Args().First())
}

// unknownCommand is the usage error for name, which is not a subcommand of
// cmd, suggesting the nearest one.
func unknownCommand(cmd *ucli.Command, name string) error {
	var names []string
	for _, c := range cmd.Commands {
		if !c.Hidden {
			names = append(names, c.Name)
			names = append(names, c.Aliases...)
		}
	}
	what := fmt.Sprintf("unknown command %q", name)
	if cmd.Root() != cmd {
		what = fmt.Sprintf("%s has no subcommand %q (it has %s)", cmd.FullName(), name, strings.Join(names, ", "))
	}
	return &usageError{err: errors.New(what), cmd: cmd.FullName(), suggest: search.Suggest(name, names)}
}

// commandAt is the index in args of the command's name: the first
// argument after the global flags (len(args) when there is none).
func commandAt(args []string) int {
	i := 1
	for i < len(args) {
		switch a := args[i]; {
		case a == "--config" || a == "-config" || a == "--directory" || a == "-directory" || a == "-C":
			i += 2
			continue
		case strings.HasPrefix(a, "-"):
			i++
			continue
		}
		break
	}
	return i
}

// toolHelpArgs turns `mcpx [global flags] call [flags] NS.TOOL … --help`
// into `mcpx [global flags] help NS.TOOL`: --help after a tool asks for the
// tool's parameters, not for the call command's help page.
func toolHelpArgs(args []string) []string {
	i := commandAt(args)
	if i >= len(args) || args[i] != "call" {
		return args
	}
	target, help, json := "", false, false
scan:
	for _, a := range args[i+1:] {
		switch {
		case a == "--":
			break scan
		case a == "--help" || a == "-h" || a == "-help":
			help = true
		case a == "--json" || a == "-json":
			json = true
		case target == "" && !strings.HasPrefix(a, "-") && strings.Contains(a, "."):
			target = a
		}
	}
	if !help || target == "" {
		return args
	}
	out := append([]string{}, args[:i]...)
	if json {
		out = append(out, "--json")
	}
	return append(out, "help", target)
}
