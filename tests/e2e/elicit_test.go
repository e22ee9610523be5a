package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// tsServer returns the command line of the TypeScript SDK v2 test server
// (tests/ts/server.mjs), skipping (failing under CI) when tests/npm is not
// installed.
func tsServer(t testing.TB) (string, []string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(repoRoot, "tests", "npm", "node_modules", "@modelcontextprotocol", "server", "package.json")); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("@modelcontextprotocol/server is not installed: scripts/setup installs tests/npm (%v)", err)
		}
		t.Skipf("@modelcontextprotocol/server is not installed; run scripts/setup")
	}
	return "node", []string{filepath.Join(repoRoot, "tests", "ts", "server.mjs")}
}

// elicitConfig writes a config with the fixture and the TypeScript server,
// each restricted to one generation: fx/tm 2026-07-28, fl/tl 2025-11-25.
func elicitConfig(t *testing.T, e *Env) {
	t.Helper()
	node, args := tsServer(t)
	entry := func(cmd string, args []string, env map[string]string) map[string]any {
		return map[string]any{"command": cmd, "args": args, "env": env}
	}
	cfg := map[string]any{"mcpServers": map[string]any{
		"fx": entry(fixtureBin, nil, map[string]string{"FIXTURE_PROTOCOL": "modern"}),
		"fl": entry(fixtureBin, nil, map[string]string{"FIXTURE_PROTOCOL": "legacy"}),
		"tm": entry(node, args, map[string]string{"TS_PROTOCOL": "modern"}),
		"tl": entry(node, args, map[string]string{"TS_PROTOCOL": "legacy"}),
	}}
	b, _ := json.Marshal(cfg)
	e.WriteFile(filepath.Join(e.Work, ".mcpx.json"), string(b))
}

// answerForm answers the fields a form asks, in whatever order they come
// (a 2025-11-25 server's form reaches mcpx without its order), until the
// question whether to send: answers maps a field's label to what to type,
// the first answer of a label that is refused followed by the next.
func answerForm(t *testing.T, tm *terminal, answers map[string][]string) {
	t.Helper()
	labels := []string{"Send these answers"}
	for l := range answers {
		labels = append(labels, "  "+l)
	}
	for {
		got, ok := tm.expectAny(30*time.Second, labels...)
		if !ok {
			t.Fatalf("no question came; the terminal shows:\n%s", tm.shown())
		}
		if got == "Send these answers" {
			return
		}
		tm.expect(": ")
		l := strings.TrimPrefix(got, "  ")
		list := answers[l]
		if len(list) == 0 {
			t.Fatalf("%s asked again; the terminal shows:\n%s", l, tm.shown())
		}
		tm.send(list[0])
		answers[l] = list[1:]
	}
}

// An elicitation during `mcpx call` reaches the terminal: mcpx asks field
// by field (bounds checked, choices numbered, a secret not echoed), and the
// answer reaches the tool; a URL is shown and opened with consent. With a
// 2026-07-28 server (input_required) and a 2025-11-25 one
// (elicitation/create), the Go fixture and the official TypeScript SDK.
func TestElicitOnTerminal(t *testing.T) {
	e := NewEnv(t)
	elicitConfig(t, e)
	for _, ns := range []string{"fx", "fl"} {
		t.Run(ns+" form", func(t *testing.T) {
			tm := e.OnTerminal(nil, "call", ns+".ask_profile")
			tm.expect(ns + " asks: Tell the fixture about yourself")
			answerForm(t, tm, map[string][]string{
				"Name":      {"Grace"},
				"Age":       {"200", "85"},
				"Score":     {""},
				"Colour":    {"3"},
				"Subscribe": {"y"},
				"Email":     {"not-an-email", "grace@example.com"},
				"PIN":       {"4321"},
			})
			tm.send("")
			if code := tm.wait(); code != 0 {
				t.Fatalf("exit %d:\n%s", code, tm.shown())
			}
			out := tm.shown()
			for _, want := range []string{"at most 150", "not an email address", "3) Blue", "not shown as you type",
				`accept {"age":85,"colour":"blue","email":"grace@example.com","name":"Grace","pin":"4321","subscribe":true}`} {
				if !strings.Contains(out, want) {
					t.Errorf("the terminal lacks %q:\n%s", want, out)
				}
			}
			if strings.Count(out, "4321") != 1 { // only in the tool's answer
				t.Errorf("the PIN was echoed:\n%s", out)
			}
		})
	}
	for _, ns := range []string{"tm", "tl"} {
		t.Run(ns+" form", func(t *testing.T) {
			tm := e.OnTerminal(nil, "call", ns+".book")
			tm.expect(ns + " asks: Book a room")
			answerForm(t, tm, map[string][]string{
				"City":      {"Porto"},
				"Nights":    {"20", "5"},
				"Room":      {"1"},
				"Breakfast": {"n"},
			})
			tm.send("y")
			if code := tm.wait(); code != 0 {
				t.Fatalf("exit %d:\n%s", code, tm.shown())
			}
			if out := tm.shown(); !strings.Contains(out, `accept {"breakfast":false,"city":"Porto","nights":5,"room":"single"}`) {
				t.Errorf("result:\n%s", out)
			}
		})
	}

	opened := filepath.Join(e.Root, "opened")
	// A browser slower to start than mcpx is to exit still opens the page:
	// the terminal's hang-up must not reach it.
	browser := e.WriteUntrusted("browser.sh", "#!/bin/sh\nsleep 0.5\necho \"$1\" >> "+opened+"\n")
	if err := os.Chmod(browser, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ns, tool, url string }{
		{"fx", "ask_url", "https://example.com/mcpx-fixture/authorize?state=xyz"},
		{"fl", "ask_url", "https://example.com/mcpx-fixture/authorize?state=xyz"},
		{"tm", "verify", "https://example.org/verify?session=ts"},
		{"tl", "verify", "https://example.org/verify?session=ts"},
	} {
		t.Run(c.ns+" url", func(t *testing.T) {
			os.Remove(opened)
			tm := e.OnTerminal([]string{"BROWSER=" + browser}, "call", c.ns+"."+c.tool)
			tm.expect(c.url)
			tm.expect("Open it")
			tm.send("y")
			if code := tm.wait(); code != 0 {
				t.Fatalf("exit %d:\n%s", code, tm.shown())
			}
			if out := tm.shown(); !strings.Contains(out, "\naccept") {
				t.Errorf("result:\n%s", out)
			}
			// The browser is started, not waited for.
			testkit.Eventually(t, 10*time.Second, "the browser to open "+c.url, func() bool {
				b, _ := os.ReadFile(opened)
				return strings.TrimSpace(string(b)) == c.url
			})
		})
	}

	t.Run("decline and cancel", func(t *testing.T) {
		tm := e.OnTerminal(nil, "call", "fx.ask_profile")
		answerForm(t, tm, map[string][]string{"Name": {""}, "Age": {""}, "Score": {""}, "Colour": {""}, "Subscribe": {""}, "Email": {""}, "PIN": {""}})
		tm.send("n")
		if code := tm.wait(); code != 0 || !strings.Contains(tm.shown(), "\ndecline") {
			t.Errorf("exit %d:\n%s", code, tm.shown())
		}
		tm = e.OnTerminal(nil, "call", "fl.ask_profile")
		tm.expect("fl asks:")
		tm.expect(": ")
		tm.eof()
		if code := tm.wait(); code != 0 || !strings.Contains(tm.shown(), "\ncancel") {
			t.Errorf("exit %d:\n%s", code, tm.shown())
		}
	})

	t.Run("json never prompts", func(t *testing.T) {
		tm := e.OnTerminal(nil, "--json", "call", "fx.ask_profile")
		if code := tm.wait(); code != 0 {
			t.Fatalf("exit %d:\n%s", code, tm.shown())
		}
		out := tm.shown()
		if strings.Contains(out, "asks:") || !strings.Contains(out, `"text": "decline"`) {
			t.Errorf("--json on a terminal:\n%s", out)
		}
		tm = e.OnTerminal([]string{"MCPX_ELICIT=ask"}, "--json", "call", "fx.ask_profile")
		if code := tm.wait(); code != 0 || strings.Contains(tm.shown(), "asks:") {
			t.Errorf("MCPX_ELICIT=ask --json: exit %d:\n%s", code, tm.shown())
		}
		r := e.Mcpx("--json", "call", "--elicit", "ask", "fx.ask_profile")
		if r.Code != 2 || !strings.Contains(r.Stdout, `"code": "usage"`) {
			t.Errorf("--json --elicit ask: %s", r)
		}
	})
}

// Without a terminal nobody is asked: decline by default, the form's
// defaults with --elicit defaults or MCPX_ELICIT=defaults (a URL is still
// declined), and --elicit decline declines on a terminal too.
func TestElicitNonInteractive(t *testing.T) {
	e := NewEnv(t)
	elicitConfig(t, e)
	defaults := map[string]string{
		"fx.ask_profile": `accept {"age":36,"colour":"green","name":"Ada","subscribe":false}`,
		"fl.ask_profile": `accept {"age":36,"colour":"green","name":"Ada","subscribe":false}`,
		"tm.book":        `accept {"breakfast":true,"city":"Lisbon","nights":3,"room":"double"}`,
		"tl.book":        `accept {"breakfast":true,"city":"Lisbon","nights":3,"room":"double"}`,
		"fx.ask_url":     "decline",
		"tl.verify":      "decline",
	}
	for target, want := range defaults {
		if r := e.MustOK("call", "--elicit", "defaults", target); r.Stdout != want {
			t.Errorf("--elicit defaults %s = %q, want %q", target, r.Stdout, want)
		}
		if r := e.MustOK("call", target); r.Stdout != "decline" {
			t.Errorf("%s without a terminal = %q, want decline", target, r.Stdout)
		}
	}
	e.Set("MCPX_ELICIT", "defaults")
	if r := e.MustOK("call", "tm.book"); r.Stdout != defaults["tm.book"] {
		t.Errorf("MCPX_ELICIT=defaults: %q", r.Stdout)
	}
	if r := e.MustOK("call", "--elicit", "decline", "tm.book"); r.Stdout != "decline" {
		t.Errorf("--elicit decline over MCPX_ELICIT: %q", r.Stdout)
	}
	e.Set("MCPX_ELICIT", "sometimes")
	if r := e.Mcpx("call", "fx.echo", "text=x"); r.Code != 2 || !strings.Contains(r.Stderr, `MCPX_ELICIT "sometimes"`) {
		t.Errorf("bad MCPX_ELICIT: %s", r)
	}
	e.Set("MCPX_ELICIT", "")

	tm := e.OnTerminal(nil, "call", "--elicit", "decline", "fl.ask_profile")
	if code := tm.wait(); code != 0 || strings.Contains(tm.shown(), "asks:") || !strings.Contains(tm.shown(), "decline") {
		t.Errorf("--elicit decline on a terminal: exit %d:\n%s", code, tm.shown())
	}
}

// Sampling is refused with a clear error; roots are offered only from the
// entry's mcpx.roots, relative to its config file's directory.
func TestSamplingAndRoots(t *testing.T) {
	e := NewEnv(t)
	data := filepath.Join(e.Work, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{"mcpServers": map[string]any{
		"fx":     map[string]any{"command": fixtureBin, "env": map[string]string{"FIXTURE_PROTOCOL": "modern"}},
		"fl":     map[string]any{"command": fixtureBin, "env": map[string]string{"FIXTURE_PROTOCOL": "legacy"}},
		"rooted": map[string]any{"command": fixtureBin, "env": map[string]string{"FIXTURE_PROTOCOL": "legacy"}, "mcpx": map[string]any{"roots": []string{"data"}}},
	}}
	b, _ := json.Marshal(cfg)
	e.WriteFile(filepath.Join(e.Work, ".mcpx.json"), string(b))

	r := e.Mcpx("call", "fx.ask_sample")
	if r.Code != 1 || !strings.Contains(r.Stderr, "sampling/createMessage") || !strings.Contains(r.Stderr, "does not sample") {
		t.Errorf("modern sampling: %s", r)
	}
	r = e.Mcpx("call", "--progress", "fl.ask_sample")
	if r.Code != 1 || !strings.Contains(r.Stderr, "does not sample") {
		t.Errorf("legacy sampling: %s", r)
	}
	if r := e.Mcpx("call", "fx.roots"); r.Code != 1 {
		t.Errorf("roots without mcpx.roots: %s", r)
	}
	if r := e.MustOK("call", "rooted.roots"); r.Stdout != "file://"+data {
		t.Errorf("roots = %q, want file://%s", r.Stdout, data)
	}
}

// methods reads a method log (FIXTURE_METHOD_LOG, TS_METHOD_LOG) and
// empties it.
func methods(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	os.Remove(path)
	return strings.Fields(string(b))
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The protocol generation is learned at a server's first start and
// remembered in its snapshot: the next daemon starts it with the right
// handshake and no probe. A server that changes generation (here the same
// definition, its ${GEN} set otherwise) fails the remembered handshake, is
// asked the other way at once, and is remembered anew.
func TestGenerationRemembered(t *testing.T) {
	e := NewEnv(t)
	node, args := tsServer(t)
	fxLog, tsLog := filepath.Join(e.Root, "fixture.log"), filepath.Join(e.Root, "ts.log")
	cfg := map[string]any{"mcpServers": map[string]any{
		"gen": map[string]any{"command": fixtureBin, "env": map[string]string{"FIXTURE_PROTOCOL": "${GEN}", "FIXTURE_METHOD_LOG": fxLog}},
		"ts":  map[string]any{"command": node, "args": args, "env": map[string]string{"TS_METHOD_LOG": tsLog}},
	}}
	b, _ := json.Marshal(cfg)
	e.WriteFile(filepath.Join(e.Work, ".mcpx.json"), string(b))
	e.Set("GEN", "legacy")

	// First start: the probe, then the handshake of the older generation.
	e.MustOK("call", "gen.echo", "text=one")
	if m := methods(t, fxLog); !has(m, "server/discover") || !has(m, "initialize") {
		t.Errorf("first start sent %q, want server/discover then initialize", m)
	}
	e.MustOK("call", "ts.echo", "text=one")
	if m := methods(t, tsLog); !has(m, "server/discover") || has(m, "initialize") {
		t.Errorf("the TypeScript server's first start sent %q, want server/discover and no initialize", m)
	}

	// A new daemon: straight to the remembered handshake.
	e.MustOK("stop")
	e.MustOK("call", "gen.echo", "text=two")
	if m := methods(t, fxLog); has(m, "server/discover") || !has(m, "initialize") {
		t.Errorf("remembered start sent %q, want initialize and no server/discover", m)
	}
	e.MustOK("call", "ts.echo", "text=two")
	if m := methods(t, tsLog); !has(m, "server/discover") || has(m, "initialize") {
		t.Errorf("the TypeScript server's remembered start sent %q, want server/discover and no initialize", m)
	}

	// The server now speaks 2026-07-28 only.
	e.Set("GEN", "modern")
	if r := e.MustOK("call", "gen.echo", "text=three"); r.Stdout != "three" {
		t.Errorf("echo after the change: %s", r)
	}
	// Its snapshot is read again with the new version.
	var seen []string
	testkit.Eventually(t, 30*time.Second, "the snapshot to be read again", func() bool {
		seen = append(seen, methods(t, fxLog)...)
		return has(seen, "tools/list")
	})
	if !has(seen, "initialize") || !has(seen, "server/discover") {
		t.Errorf("after the change the server got %q, want the refused initialize, then server/discover", seen)
	}
	e.MustOK("stop")
	e.MustOK("call", "gen.echo", "text=four")
	if m := methods(t, fxLog); !has(m, "server/discover") || has(m, "initialize") {
		t.Errorf("start after re-learning sent %q, want server/discover and no initialize", m)
	}
}
