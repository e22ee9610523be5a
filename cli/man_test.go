package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// runInProcess runs the command line with empty input and environment and
// returns what it printed; it fails the test unless the run succeeded.
func runInProcess(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	a := &App{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
	if code := a.Run(context.Background(), args); code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", strings.Join(args, " "), code, out.String(), errOut.String())
	}
	return out.String()
}

// helpPage is one `mcpx help …` page, cut into its sections.
type helpPage struct {
	name        string   // NAME: the one-line usage after " - "
	usage       string   // USAGE:
	description []string // DESCRIPTION: its lines, unindented
	commands    []string // COMMANDS: the names
	options     []string // OPTIONS (GLOBAL OPTIONS on the root page): "spec usage"
}

func parseHelpPage(t *testing.T, page string) helpPage {
	t.Helper()
	var h helpPage
	section := ""
	optionsHeading := "OPTIONS:"
	if strings.Contains(page, "\nCOMMANDS:\n") && !strings.Contains(page, "\nOPTIONS:\n") {
		optionsHeading = "GLOBAL OPTIONS:" // the root page
	}
	for _, line := range strings.Split(page, "\n") {
		if line != "" && !strings.HasPrefix(line, " ") {
			section = line
			continue
		}
		body := strings.TrimPrefix(line, "   ")
		switch section {
		case "NAME:":
			if _, usage, ok := strings.Cut(body, " - "); ok {
				h.name = usage
			}
		case "USAGE:":
			if body != "" {
				h.usage = body
			}
		case "DESCRIPTION:":
			h.description = append(h.description, body)
		case "COMMANDS:":
			if f := strings.Fields(body); len(f) > 0 {
				h.commands = append(h.commands, strings.TrimSuffix(f[0], ","))
			}
		case optionsHeading:
			if body != "" {
				h.options = append(h.options, norm(body))
			}
		}
	}
	if h.usage == "" || h.name == "" {
		t.Fatalf("help page without NAME or USAGE:\n%s", page)
	}
	return h
}

// manPage is the manual page as text: its sections, and under COMMANDS
// one entry per subsection heading.
type manPage struct {
	all      string
	sections map[string]string
	commands map[string]string
	order    []string
}

// roffEscapes undoes what man.go escapes, and drops font changes.
var roffEscapes = strings.NewReplacer(`\fB`, "", `\fI`, "", `\fR`, "", `\fP`, "",
	`\-`, "-", `\(ga`, "`", `\(aq`, "'", `\(dq`, `"`, `\(em`, "—", `\&`, "", `\e`, `\`)

var knownEscape = regexp.MustCompile(`\\(f[BIRP]|-|\(ga|\(aq|\(dq|\(em|&|e)`)

func parseManPage(t *testing.T, src string) manPage {
	t.Helper()
	m := manPage{sections: map[string]string{}, commands: map[string]string{}}
	var all, sec, cmd strings.Builder
	section, command := "", ""
	flush := func() {
		if section != "" {
			m.sections[section] = norm(sec.String())
		}
		if command != "" {
			m.commands[command] = norm(cmd.String())
		}
		sec.Reset()
		cmd.Reset()
	}
	for _, line := range strings.Split(src, "\n") {
		text := ""
		switch {
		case strings.HasPrefix(line, `.\"`), strings.HasPrefix(line, ".TH "):
			continue
		case strings.HasPrefix(line, ".SH "):
			flush()
			section, command = roffEscapes.Replace(line[4:]), ""
			continue
		case strings.HasPrefix(line, ".SS "):
			heading := roffEscapes.Replace(line[4:])
			if command != "" {
				m.commands[command] = norm(cmd.String())
				cmd.Reset()
			}
			command = heading
			if _, dup := m.commands[heading]; dup || slices.Contains(m.order, heading) {
				t.Errorf("man page: two subsections %q", heading)
			}
			m.order = append(m.order, heading)
			text = heading
		case strings.HasPrefix(line, ".B "), strings.HasPrefix(line, ".I "):
			text = strings.Trim(roffEscapes.Replace(line[3:]), `"`)
		case strings.HasPrefix(line, ".BR "):
			text = strings.ReplaceAll(roffEscapes.Replace(line[4:]), " (", "(")
		case strings.HasPrefix(line, "."):
			// .TP .PP .RS .RE .nf .fi: a break, no text.
		default:
			if strings.Contains(knownEscape.ReplaceAllString(line, ""), `\`) {
				t.Errorf("man page: an escape the test does not know in %q", line)
			}
			text = roffEscapes.Replace(line)
		}
		all.WriteString(text + "\n")
		sec.WriteString(text + "\n")
		if command != "" && !strings.HasPrefix(line, ".SS ") {
			cmd.WriteString(text + "\n")
		}
	}
	flush()
	m.all = norm(all.String())
	return m
}

// norm collapses runs of white space, as roff's filling does.
func norm(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestManPageAgreesWithHelp walks every command `mcpx help` lists and
// checks the manual page has it with the same usage line, one-line usage,
// description and options (names, placeholders and usage text), and
// nothing help does not list.
func TestManPageAgreesWithHelp(t *testing.T) {
	src := runInProcess(t, "mcpx", "man", "--date", "2025-01-02")
	man := parseManPage(t, src)
	for _, s := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "GLOBAL OPTIONS", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "FILES"} {
		if _, ok := man.sections[s]; !ok {
			t.Errorf("man page has no section %s", s)
		}
	}
	if !strings.Contains(src, `.TH MCPX 1 "2025\-01\-02" "mcpx `) {
		t.Errorf("man page header: %q", strings.SplitN(src, "\n", 3)[1])
	}

	root := parseHelpPage(t, runInProcess(t, "mcpx", "help"))
	if want := "mcpx - " + root.name; !strings.HasPrefix(man.sections["NAME"], want) {
		t.Errorf("NAME section %q, want %q", man.sections["NAME"], want)
	}
	for _, opt := range root.options {
		if !strings.Contains(man.sections["GLOBAL OPTIONS"], opt) {
			t.Errorf("GLOBAL OPTIONS lack %q", opt)
		}
	}
	exitLine := regexp.MustCompile(`^\s*(\d+)\s+(.*)$`)
	for _, line := range root.description {
		switch m := exitLine.FindStringSubmatch(line); {
		case strings.TrimSpace(line) == "" || line == "Exit codes:":
		case m != nil:
			if !strings.Contains(man.sections["EXIT STATUS"], m[1]+" "+norm(m[2])) {
				t.Errorf("EXIT STATUS lacks %q", line)
			}
		default:
			if !strings.Contains(man.all, norm(line)) {
				t.Errorf("man page lacks the line %q of mcpx help", line)
			}
		}
	}

	seen := map[string]bool{}
	var visit func(path []string)
	visit = func(path []string) {
		h := parseHelpPage(t, runInProcess(t, append([]string{"mcpx", "help"}, path...)...))
		seen[h.usage] = true
		sec, ok := man.commands[h.usage]
		if !ok {
			t.Errorf("man page has no subsection %q (mcpx help %s)", h.usage, strings.Join(path, " "))
			return
		}
		if !strings.HasPrefix(sec, norm(h.name)) {
			t.Errorf("%s: man page says %q, help says %q", h.usage, firstWords(sec, 12), h.name)
		}
		for _, line := range h.description {
			if !strings.Contains(sec, norm(line)) {
				t.Errorf("%s: man page lacks the description line %q", h.usage, line)
			}
		}
		for _, opt := range h.options {
			if strings.HasPrefix(opt, "--help, -h ") {
				continue // said once under GLOBAL OPTIONS
			}
			if !strings.Contains(sec, opt) {
				t.Errorf("%s: man page lacks the option %q", h.usage, opt)
			}
		}
		for _, sub := range h.commands {
			visit(append(append([]string{}, path...), sub))
		}
	}
	for _, c := range root.commands {
		visit([]string{c})
	}
	if len(seen) < 30 {
		t.Errorf("help listed only %d commands", len(seen))
	}
	for _, heading := range man.order {
		if !seen[heading] {
			t.Errorf("man page documents %q, which mcpx help does not list", heading)
		}
	}
}

func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

// docVariables are the variables of docs/environment.md's tables in the
// sections given (the first column's `NAME`).
func docVariables(t *testing.T, doc string, sections ...string) []string {
	t.Helper()
	var out []string
	in := false
	row := regexp.MustCompile("^\\| `([A-Z_]+)` \\|")
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "## ") {
			in = slices.Contains(sections, strings.TrimPrefix(line, "## "))
			continue
		}
		if m := row.FindStringSubmatch(line); in && m != nil {
			out = append(out, m[1])
		}
	}
	return out
}

// TestManPageEnvironment: the ENVIRONMENT section names exactly the
// variables docs/environment.md lists as mcpx's own and as where files
// live, plus the user bus, and each is documented there.
func TestManPageEnvironment(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "environment.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	want := docVariables(t, doc, "mcpx's own", "Where files live (XDG)")
	if len(want) < 10 {
		t.Fatalf("found only %v in docs/environment.md", want)
	}
	want = append(want, "DBUS_SESSION_BUS_ADDRESS")
	var got []string
	for _, e := range manEnvironment {
		got = append(got, e.name)
		if !strings.Contains(doc, "`"+e.name+"`") {
			t.Errorf("the man page's %s is not in docs/environment.md", e.name)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("man page ENVIRONMENT:\n  %v\ndocs/environment.md:\n  %v", got, want)
	}
	man := parseManPage(t, runInProcess(t, "mcpx", "man"))
	for _, e := range manEnvironment {
		if !strings.Contains(man.sections["ENVIRONMENT"], e.name+" "+norm(e.text)) {
			t.Errorf("ENVIRONMENT lacks %s", e.name)
		}
	}
}

// TestManPageFiles: every file the man page names is described in docs/.
func TestManPageFiles(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil || len(paths) == 0 {
		t.Fatal(paths, err)
	}
	var docs strings.Builder
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs.Write(b)
	}
	for _, f := range manFiles {
		for _, p := range strings.Split(f.path, ", ") {
			if i := strings.Index(p, "/"); strings.HasPrefix(p, "$") && i > 0 {
				p = p[i+1:] // $XDG_STATE_HOME/mcpx/keys/… → mcpx/keys/…
			}
			p = strings.TrimPrefix(p, "~/")
			whole := strings.Contains(docs.String(), p)
			parts := strings.Contains(docs.String(), filepath.Dir(p)) && strings.Contains(docs.String(), filepath.Base(p))
			if !whole && !parts {
				t.Errorf("the man page's file %q (%s) is described nowhere in docs/", p, f.path)
			}
		}
	}
}
