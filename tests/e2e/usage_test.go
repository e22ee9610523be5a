package e2e

import (
	"encoding/json"
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
