package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// runArgs runs the CLI on args in a process-less App (what fails here fails
// while parsing, before any daemon is reached).
func runArgs(args ...string) (int, string) {
	var out, errb bytes.Buffer
	a := &App{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }}
	code := a.Run(context.Background(), append([]string{"mcpx"}, args...))
	return code, errb.String()
}

// A mistyped flag is pointed to a flag it is a likely typo of, never to
// one that changes what is safe (--yes, --force) and never from afar; on
// call, an unknown --NAME is shown as the tool argument NAME=VALUE.
func TestFlagSuggestions(t *testing.T) {
	for _, c := range []struct {
		args       []string
		want, deny []string
	}{
		{[]string{"call", "demo.add", "--a", "2"}, []string{"unknown flag --a.", "NAME=VALUE", "a=2"}, []string{"-y", "--yes", "did you mean"}},
		{[]string{"call", "demo.add", "-a=2"}, []string{"unknown flag -a.", "a=2"}, []string{"-y", "did you mean"}},
		{[]string{"call", "demo.echo", "--confirm"}, []string{"unknown flag --confirm.", "confirm=VALUE"}, []string{"--config", "did you mean"}},
		{[]string{"call", "demo.echo", "--ye"}, []string{"ye=VALUE"}, []string{"--yes", "did you mean"}},
		{[]string{"call", "demo.echo", "--yess"}, []string{"unknown flag --yess."}, []string{"did you mean"}},
		{[]string{"call", "demo.echo", "--jsno"}, []string{"did you mean --json?"}, nil},
		{[]string{"call", "--raww", "demo.echo"}, []string{"did you mean --raw?"}, nil},
		{[]string{"call", "demo.echo", "--no-valdiate"}, []string{"did you mean --no-validate?"}, nil},
		{[]string{"ls", "--jsn"}, []string{"unknown flag --jsn; did you mean --json?"}, nil},
		{[]string{"ls", "--count"}, []string{"unknown flag --count."}, []string{"did you mean", "NAME=VALUE"}},
		{[]string{"config", "add", "x", "--forc", "--", "srv"}, []string{"unknown flag --forc."}, []string{"--force"}},
		{[]string{"prompt", "demo.greet", "--topic", "cats"}, []string{"Prompt arguments", "topic=cats"}, nil},
	} {
		code, stderr := runArgs(c.args...)
		if code != ExitUsage {
			t.Errorf("%v: exit %d, want 2\n%s", c.args, code, stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr lacks %q:\n%s", c.args, w, stderr)
			}
		}
		for _, d := range c.deny {
			if strings.Contains(stderr, d) {
				t.Errorf("%v: stderr has %q:\n%s", c.args, d, stderr)
			}
		}
	}
}

func TestTypoDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"json", "json", 0}, {"jsno", "json", 1}, {"raww", "raw", 1}, {"confirm", "config", 2}, {"a", "y", 1}, {"", "ab", 2}, {"ab", "ba", 1},
	} {
		if got := typoDistance(c.a, c.b); got != c.want {
			t.Errorf("typoDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

// A flag value of the wrong kind is a usage error naming the flag and what
// it takes, not the parser's strconv error.
func TestInvalidFlagValue(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"logs", "-n", "abc"}, `-n (--lines) takes a whole number, not "abc"`},
		{[]string{"logs", "--lines=1.5"}, `--lines takes a whole number, not "1.5"`},
		{[]string{"search", "x", "--limit", "ten"}, `--limit takes a whole number, not "ten"`},
		{[]string{"call", "demo.echo", "--raw=maybe"}, `--raw takes true or false, not "maybe"`},
	} {
		code, stderr := runArgs(c.args...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "strconv") {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", c.args, code, c.want, stderr)
		}
	}
}
