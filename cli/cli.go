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
func Main(ctx context.Context, args []string, hooks Hooks) int {
	a := &App{
		Stdin:     os.Stdin,
		Stdout:    os.Stdout,
		Stderr:    os.Stderr,
		Getenv:    os.Getenv,
		LookupEnv: os.LookupEnv,
		Terminal:  isatty.IsTerminal(os.Stdin.Fd()) && isatty.IsTerminal(os.Stderr.Fd()),
		Hooks:     hooks,
	}
	return a.Run(ctx, args)
}

// factories build the commands; each command file registers one.
var factories []func(*App) *ucli.Command

// register adds a command to every App. Called from init in the command's
// file.
func register(f func(*App) *ucli.Command) { factories = append(factories, f) }

// Run parses args and runs the command, reporting any failure on a.Stderr.
func (a *App) Run(ctx context.Context, args []string) int {
	root := a.root()
	err := root.Run(ctx, args)
	if err == nil {
		return ExitOK
	}
	code, msg := a.describe(err)
	if msg != "" {
		fmt.Fprintln(a.Stderr, msg)
	}
	return code
}

func (a *App) root() *ucli.Command {
	var cmds []*ucli.Command
	for _, f := range factories {
		cmds = append(cmds, f(a))
	}
	slices.SortFunc(cmds, func(x, y *ucli.Command) int { return strings.Compare(x.Name, y.Name) })
	root := &ucli.Command{
		Name:    "mcpx",
		Usage:   "every configured MCP server behind one command",
		Version: version.String(),
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
				return usagef("unknown command %q", cmd.Args().First())
			}
			return ucli.ShowRootCommandHelp(cmd)
		},
	}
	onUsage := func(_ context.Context, cmd *ucli.Command, err error, _ bool) error {
		return &usageError{err: err, cmd: cmd.FullName()}
	}
	var walk func(*ucli.Command)
	walk = func(c *ucli.Command) {
		c.OnUsageError = onUsage
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
	Hooks    Hooks
	// RequestTimeout bounds every request to the daemon but calls (0: the
	// client's default, 2 m); calls are bounded by the server's timeouts.
	RequestTimeout time.Duration
}

// usageError is a command line that cannot be run as written (exit 2).
type usageError struct {
	err error
	cmd string // the command's full name, for the help hint
}

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return &usageError{err: fmt.Errorf(format, args...)}
}

// exitError ends the run with code; msg (may be empty) is printed as is.
type exitError struct {
	code int
	msg  string
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
