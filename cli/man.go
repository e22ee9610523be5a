package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/internal/lazy"
	"github.com/mcpx-dev/mcpx/internal/version"
)

// man prints the manual page mcpx(1) in roff, made from the same command
// definitions `mcpx help` prints (TestManPageAgreesWithHelp holds them
// together). Hidden: the packages install its output; `mcpx man | man -l -`
// reads it without installing.
func manCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:   "man",
		Usage:  "print the mcpx(1) manual page (roff)",
		Hidden: true,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "date", Usage: "the page's `DATE` (default: the commit date of this build, if known)"},
		},
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() > 0 {
				return usagef("man takes no arguments")
			}
			date := cmd.String("date")
			if date == "" {
				date = buildDate()
			}
			return writeManPage(a.Stdout, cmd.Root(), date)
		},
	}
}

// buildDate is the day of the commit this binary was built from (the Go
// toolchain stamps it into builds from a checkout), or "".
func buildDate() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.time" {
			if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
				return t.UTC().Format("2006-01-02")
			}
		}
	}
	return ""
}

// manEnvironment are the variables mcpx and its daemon read
// (docs/environment.md explains each at length; TestManPageEnvironment
// keeps the two lists the same).
var manEnvironment = []struct{ name, text string }{
	{"MCPX_CONFIG", "Use exactly this config file and no other, like --config (which wins over it)."},
	{"MCPX_SOCKET", "The socket to dial instead of $XDG_RUNTIME_DIR/mcpx/<key>.sock; a daemon started by the direct manager binds it."},
	{"MCPX_SERVICE", "The service manager that owns daemons: auto (the default: systemd when the user manager answers and XDG_RUNTIME_DIR is set, launchd on macOS, else direct), systemd, launchd or direct."},
	{"MCPX_SESSION_ID", "The session a server with scope \"session\" belongs to (call --session overrides it)."},
	{"MCPX_ELICIT", "Who answers when a server asks for input during a call: ask (on the terminal), defaults (accept a form's defaults) or decline; unset, ask on a terminal, else decline (call --elicit overrides it)."},
	{"MCPX_TOKEN_STORE", "Where the daemon keeps OAuth tokens: keyring, file or auto (the default: the OS keyring when one answers, else files); handed to the daemon in its key record, applied when it next starts."},
	{"MCPX_DEBUG", "Read by the daemon: 1 serves Go's profiles under /debug/pprof/ on the daemon's socket."},
	{"XDG_RUNTIME_DIR", "Sockets, info files, captured environments and start locks (mcpx/); without it $TMPDIR/mcpx-<uid>. Also where the user bus and systemd's private socket are found."},
	{"XDG_STATE_HOME", "Key records, trust records, OAuth token files and daemon logs (mcpx/); default ~/.local/state."},
	{"XDG_CACHE_HOME", "The content-addressed cache and the schema cache (mcpx/); default ~/.cache."},
	{"XDG_CONFIG_HOME", "The user config mcpx/config.json, other hosts' user configs, and systemd/user/ for the unit templates; default ~/.config."},
	{"HOME", "The base of the defaults above; ~/Library/LaunchAgents on macOS; where other hosts' user configs are looked for."},
	{"CODEX_HOME", "Where Codex's config.toml is read from; default ~/.codex."},
	{"TMPDIR", "The runtime directory's parent when XDG_RUNTIME_DIR is unset (Linux; on macOS the per-user temporary directory comes from confstr instead)."},
	{"DBUS_SESSION_BUS_ADDRESS", "The user bus mcpx asks systemd on; without it $XDG_RUNTIME_DIR/bus, then systemd's private socket. mcpx never starts a bus."},
}

// manFiles are the files mcpx reads and writes (TestManPageFiles checks
// each is described in docs/).
var manFiles = []struct{ path, text string }{
	{".mcpx.json, .mcpx/config.json, .mcp.json", "Project configs, looked for from the working directory up to /, with the project files of other MCP hosts."},
	{"$XDG_CONFIG_HOME/mcpx/config.json", "The user-wide config."},
	{"$XDG_RUNTIME_DIR/mcpx/<key>.sock", "A daemon's socket; <key>.json is its info file, <key>.env the captured environment (0600), <key>.lock the start lock."},
	{"$XDG_STATE_HOME/mcpx/keys/<key>.json", "The key record of a daemon key (see mcpx daemons)."},
	{"$XDG_STATE_HOME/mcpx/trust/", "Trust records (mcpx trust)."},
	{"$XDG_STATE_HOME/mcpx/auth/<serverHash>.json", "OAuth tokens when they are kept in files (0600)."},
	{"$XDG_STATE_HOME/mcpx/<key>.log", "The daemon's log when it does not run under systemd."},
	{"$XDG_CACHE_HOME/mcpx/cas/", "The content-addressed cache (mcpx cache)."},
	{"$XDG_CACHE_HOME/mcpx/schemas/<serverHash>.json", "The schema cache's references."},
	{"$XDG_CONFIG_HOME/systemd/user/mcpx@.socket, mcpx@.service", "The systemd unit templates mcpx writes (mcpx install, mcpx uninstall); not written when a package installed them in /usr/lib/systemd/user."},
	{"~/Library/LaunchAgents/dev.mcpx.<key>.plist", "A launchd agent on macOS, one per daemon key."},
}

// writeManPage writes mcpx(1) for the command tree under root.
func writeManPage(w io.Writer, root *ucli.Command, date string) error {
	var b bytes.Buffer
	b.WriteString(".\\\" Generated by `mcpx man` from mcpx's command definitions; do not edit.\n")
	fmt.Fprintf(&b, ".TH MCPX 1 %s %s \"User Commands\"\n", roffArg(date), roffArg("mcpx "+version.String()))

	b.WriteString(".SH NAME\nmcpx \\- " + roffLine(root.Usage) + "\n")

	b.WriteString(".SH SYNOPSIS\n.B mcpx\n[\\fIglobal options\\fR] \\fIcommand\\fR [\\fIcommand options\\fR] [\\fIarguments\\fR ...]\n")

	b.WriteString(".SH DESCRIPTION\n")
	b.WriteString(roffText("mcpx puts every MCP (Model Context Protocol) server you have configured behind one command. " +
		"A per-config daemon, mcpxd, keeps the servers warm and their tool schemas cached on disk; " +
		"the operating system's service manager (systemd user units, launchd agents on macOS) starts it " +
		"on the first connection to its socket, and where there is none, mcpx starts it itself."))
	b.WriteString(".PP\n" + roffText(aboutStart))
	b.WriteString(".PP\n" + roffText(aboutConfigs))

	b.WriteString(".SH GLOBAL OPTIONS\n")
	for _, f := range root.VisibleFlags() {
		writeManFlag(&b, f)
	}
	b.WriteString(".PP\nEvery command also takes \\fB\\-\\-help\\fR (\\fB\\-h\\fR).\n")

	b.WriteString(".SH COMMANDS\n")
	var walk func(c *ucli.Command, path []string)
	walk = func(c *ucli.Command, path []string) {
		// Every command help lists (at the top, VisibleCommands would
		// leave out `help` itself).
		for _, sub := range c.Commands {
			if sub.Hidden {
				continue
			}
			p := append(append([]string{}, path...), sub.Name)
			writeManCommand(&b, sub, p)
			walk(sub, p)
		}
	}
	walk(root, []string{root.Name})

	b.WriteString(".SH JSON OUTPUT\n" + roffText(aboutJSON))

	b.WriteString(".SH EXIT STATUS\n")
	for _, e := range exitCodes {
		fmt.Fprintf(&b, ".TP\n.B %d\n%s", e.code, roffText(e.meaning))
	}

	b.WriteString(".SH ENVIRONMENT\n")
	for _, e := range manEnvironment {
		b.WriteString(".TP\n.B " + roffLine(e.name) + "\n" + roffText(e.text))
	}

	b.WriteString(".SH FILES\n")
	for _, f := range manFiles {
		b.WriteString(".TP\n.I " + roffArg(f.path) + "\n" + roffText(f.text))
	}

	b.WriteString(".SH SEE ALSO\n" +
		".BR systemctl (1),\n.BR journalctl (1),\n.BR systemd.socket (5),\n.BR launchctl (1)\n" +
		".PP\n" + roffText("The guides in the docs/ directory of the source: "+
		"https://github.com/mcpx-dev/mcpx/tree/main/docs"))
	_, err := w.Write(b.Bytes())
	return err
}

// writeManCommand writes one command's subsection: the usage line exactly
// as `mcpx help` prints it, the one-line usage, the description and the
// options (--help is said once, under GLOBAL OPTIONS).
func writeManCommand(b *bytes.Buffer, c *ucli.Command, path []string) {
	b.WriteString(".SS " + roffLine(usageLine(c)) + "\n")
	if c.Usage != "" {
		b.WriteString(roffText(c.Usage))
	}
	if c.Description != "" {
		b.WriteString(".PP\n" + roffText(c.Description))
	}
	for _, f := range c.VisibleFlags() {
		if isHelpFlag(f) {
			continue
		}
		writeManFlag(b, f)
	}
}

// usageLine is the USAGE line of c's help page, taken from the page
// itself so the two cannot drift.
func usageLine(c *ucli.Command) string {
	var b strings.Builder
	ucli.HelpPrinter(&b, helpTemplate(c), c)
	_, page, _ := strings.Cut(b.String(), "USAGE:\n")
	line, _, _ := strings.Cut(page, "\n")
	return strings.TrimSpace(line)
}

func isHelpFlag(f ucli.Flag) bool {
	for _, n := range f.Names() {
		if n == "help" {
			return true
		}
	}
	return false
}

// writeManFlag writes a flag as help's OPTIONS line does: its names and
// placeholders (bold and italic), then its usage.
func writeManFlag(b *bytes.Buffer, f ucli.Flag) {
	spec, usage, _ := strings.Cut(flagLine(f), "\t")
	b.WriteString(".TP\n")
	var words []string
	for _, w := range strings.Fields(spec) {
		comma := strings.HasSuffix(w, ",")
		w = strings.TrimSuffix(w, ",")
		switch {
		case strings.HasPrefix(w, "-"):
			w = `\fB` + roffEscape(w) + `\fR`
		case w == "[" || w == "]":
		default:
			w = `\fI` + roffEscape(w) + `\fR`
		}
		if comma {
			w += ","
		}
		words = append(words, w)
	}
	b.WriteString(strings.Join(words, " ") + "\n")
	b.WriteString(roffText(usage))
}

// flagLine is the flag as help prints it: "names PLACEHOLDER\tusage".
func flagLine(f ucli.Flag) string {
	if s, ok := f.(fmt.Stringer); ok {
		return s.String()
	}
	return "--" + f.Names()[0]
}

// roffEscape makes s safe inside a roff line: backslashes, hyphens (a
// plain '-' may print as a Unicode hyphen, which breaks copied flags) and
// quotes that roff would turn typographic.
func roffEscape(s string) string { return roffEscaper.Get().Replace(s) }

// roffEscaper is built on first use: at init it would cost every process.
var roffEscaper = lazy.Value[*strings.Replacer]{New: func() *strings.Replacer {
	return strings.NewReplacer(`\`, `\e`, "-", `\-`, "`", `\(ga`, "'", `\(aq`)
}}

// roffLine escapes s for a text line, or the arguments of a macro line
// (where a double quote would start a quoted argument).
func roffLine(s string) string {
	return strings.ReplaceAll(roffEscape(s), `"`, `\(dq`)
}

// roffArg is s as one quoted macro argument.
func roffArg(s string) string { return `"` + roffLine(s) + `"` }

// roffText turns help text into roff: runs of plain lines are filled as a
// paragraph, indented lines (examples, lists) are kept as they are.
func roffText(s string) string {
	var b strings.Builder
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := 0; i < len(lines); {
		switch l := lines[i]; {
		case strings.TrimSpace(l) == "":
			b.WriteString(".PP\n")
			i++
		case l[0] == ' ' || l[0] == '\t':
			j := i
			for j < len(lines) && strings.TrimSpace(lines[j]) != "" && (lines[j][0] == ' ' || lines[j][0] == '\t') {
				j++
			}
			block := lines[i:j]
			pad := len(block[0])
			for _, bl := range block {
				pad = min(pad, len(bl)-len(strings.TrimLeft(bl, " \t")))
			}
			b.WriteString(".RS 4\n.nf\n")
			for _, bl := range block {
				b.WriteString(textLine(bl[pad:]) + "\n")
			}
			b.WriteString(".fi\n.RE\n")
			i = j
		default:
			b.WriteString(textLine(l) + "\n")
			i++
		}
	}
	return b.String()
}

// textLine escapes a line of text; a line that would start with a control
// character is protected with \&.
func textLine(l string) string {
	l = roffEscape(l)
	if strings.HasPrefix(l, ".") || strings.HasPrefix(l, `\(aq`) {
		l = `\&` + l
	}
	return l
}
