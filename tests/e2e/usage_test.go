package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// Flag mistakes are usage errors that help (issue 18, row 12): a mistyped
// flag is never pointed to --yes/-y or to an unrelated flag; an unknown
// --NAME on call is shown as the tool argument NAME=VALUE; a value of the
// wrong kind names the flag and what it takes.
func TestFlagMistakes(t *testing.T) {
	e := NewEnv(t)
	for _, c := range []struct {
		args       []string
		want, deny string
	}{
		{[]string{"call", "demo.add", "--a", "2", "b=3"}, "Tool arguments are written NAME=VALUE, not as flags: a=2", "-y"},
		{[]string{"call", "demo.echo", "--confirm"}, "unknown flag --confirm", "--config"},
		{[]string{"call", "demo.echo", "--yse"}, "unknown flag --yse", "--yes"},
		{[]string{"call", "demo.echo", "--jsno"}, "did you mean --json?", ""},
		{[]string{"logs", "-n", "abc"}, `-n (--lines) takes a whole number, not "abc"`, "strconv"},
	} {
		r := e.Mcpx(c.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || (c.deny != "" && strings.Contains(r.Stderr, c.deny)) {
			t.Errorf("want exit 2 saying %q (and not %q):\n%s", c.want, c.deny, r)
		}
		r = e.Mcpx(append([]string{"--json"}, c.args...)...)
		var doc struct {
			Error struct {
				Code    string
				Message string
				Hint    string
			}
		}
		if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil || r.Code != 2 || doc.Error.Code != "usage" ||
			!strings.Contains(doc.Error.Message+" "+doc.Error.Hint, strings.TrimPrefix(c.want, "did you mean ")) {
			t.Errorf("--json: want a usage error saying %q:\n%s", c.want, r)
		}
	}
	// The tool argument written as the hint says works.
	if r := e.MustOK("call", "demo.add", "a=2", "b=3"); strings.TrimSpace(r.Stdout) != "5" {
		t.Errorf("demo.add a=2 b=3: %s", r)
	}
}

// `mcpx help serve` (and the man page made from it) lists the flags
// `mcpxd serve` parses, no more and no fewer, and a mistyped one is named
// with the nearest as on every other command. Found walking through
// docs/serve.md: `mcpx help serve` listed only --help, and `mcpx serve
// --bogus` printed Go's "flag provided but not defined" and the usage.
func TestServeFlagsMatchMcpxd(t *testing.T) {
	e := NewEnv(t)
	help := e.MustOK("help", "serve")
	own, _, _ := strings.Cut(help.Stdout, "GLOBAL OPTIONS")
	var declared []string
	for _, line := range strings.Split(own, "\n") {
		if f, ok := strings.CutPrefix(strings.TrimSpace(line), "--"); ok {
			declared = append(declared, strings.FieldsFunc(f, func(r rune) bool { return r == ' ' || r == ',' })[0])
		}
	}
	r := e.Mcpx("serve", "--help")
	var parsed []string
	for _, line := range strings.Split(r.Stderr, "\n") {
		if f, ok := strings.CutPrefix(line, "  -"); ok {
			// -C, -config and -json are the global flags, carried over.
			if name := strings.Fields(f)[0]; name != "C" && name != "config" && name != "json" {
				parsed = append(parsed, name)
			}
		}
	}
	parsed = append(parsed, "help")
	slices.Sort(declared)
	slices.Sort(parsed)
	if len(parsed) < 7 || !slices.Equal(declared, parsed) {
		t.Fatalf("mcpx help serve lists %q; mcpxd serve parses %q\n%s\n%s", declared, parsed, help, r)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--expsoe=search"}, "unknown flag --expsoe; did you mean --expose?"},
		{[]string{"serve", "--ns", "memory", "--htp", "127.0.0.1:1"}, "unknown flag --htp; did you mean --http?"},
		{[]string{"serve", "--bogus"}, "unknown flag --bogus. See `mcpx serve --help`"},
	} {
		r := e.Mcpx(c.args...)
		if r.Code != 2 || !strings.Contains(r.Stderr, c.want) || strings.Contains(r.Stderr, "flag provided") {
			t.Errorf("want exit 2 saying %q:\n%s", c.want, r)
		}
	}
}
