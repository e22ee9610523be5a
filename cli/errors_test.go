package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/service"
)

func apiErr(status int, code, msg string) error {
	return fmt.Errorf("GET /v1/x: %w", &client.APIError{Status: status, Body: api.Error{Error: msg, Code: code}})
}

func TestExitCodeMapping(t *testing.T) {
	later := time.Now().Add(20 * time.Second)
	cases := []struct {
		name string
		err  error
		code int
		msg  []string
	}{
		{"usage", usagef("call needs NS.TOOL"), ExitUsage, []string{"mcpx: call needs NS.TOOL.", "--help"}},
		{"parse error", &client.ConfigError{Err: &config.ParseError{File: "/p/.mcp.json", Line: 3, Col: 7, Msg: "unexpected }"}},
			ExitUsage, []string{"/p/.mcp.json:3:7: unexpected }"}},
		{"unset var", &client.ConfigError{Err: &config.UnsetVarError{Server: "gh", Var: "TOKEN"}}, ExitUsage, []string{"gh", "${TOKEN}", "Export TOKEN"}},
		{"other config error", &client.ConfigError{Err: errors.New("config file /x (MCPX_CONFIG): not found")}, ExitUsage, []string{"/x"}},
		{"unknown namespace", &client.APIError{Status: 404, Body: api.Error{Error: "no namespace demi", Code: api.CodeUnknownNamespace, Suggestion: "demo"}},
			ExitUsage, []string{"no namespace demi; did you mean demo?"}},
		{"login required", &client.APIError{Status: 401, Body: api.Error{Error: "server lin needs a login: no login yet", Code: api.CodeLoginRequired, Namespace: "lin"}},
			ExitUnavailable, []string{"mcpx: server lin needs a login: no login yet. Run `mcpx login lin`"}},
		{"insufficient scope", &client.APIError{Status: 403, Body: api.Error{Error: "server lin needs the scope write, which its login does not hold", Code: api.CodeInsufficientScope, Namespace: "lin", Scope: "read write"}},
			ExitUnavailable, []string{"mcpx: server lin needs the scope write, which its login does not hold. Run `mcpx login lin`, which asks for the scope read write."}},
		{"insufficient scope, held", &client.APIError{Status: 403, Body: api.Error{Error: "server lin refused the request for want of the scope read, which its login already holds", Code: api.CodeInsufficientScope, Namespace: "lin"}},
			ExitUnavailable, []string{"which its login already holds."}},
		{"unknown tool", &client.APIError{Status: 404, Body: api.Error{Error: "no tool ech", Code: api.CodeUnknownTool, Namespace: "demo", Suggestion: "echo"}},
			ExitUsage, []string{"did you mean demo.echo?"}},
		{"bad request", apiErr(400, api.CodeBadRequest, "arguments must be an object"), ExitUsage, nil},
		{"confirmation", apiErr(409, api.CodeConfirmation, "demo.delete_note needs confirmation"), ExitPolicy, []string{"--yes"}},
		{"denied", apiErr(403, api.CodePolicyDenied, "denied"), ExitPolicy, nil},
		{"annotations unknown", apiErr(409, api.CodeAnnotationsUnknown, "cannot decide"), ExitPolicy, nil},
		{"server error", apiErr(502, api.CodeServerError, "invalid params"), ExitToolError, nil},
		{"start failed", &client.APIError{Status: 502, Body: api.Error{Error: "server demo failed to start", Code: api.CodeStartFailed, Namespace: "demo", Stderr: "line one\nline two\n"}},
			ExitUnavailable, []string{"mcpx: server demo failed to start.", "\n  | line one\n  | line two"}},
		{"cooldown", &client.APIError{Status: 503, Body: api.Error{Error: "server demo is cooling down", Code: api.CodeCooldown, RetryAfter: &later}},
			ExitUnavailable, []string{"cooling down until " + later.Local().Format("15:04:05")}},
		{"timeout", apiErr(504, api.CodeTimeout, "call timed out"), ExitUnavailable, []string{"mcpx status"}},
		{"unavailable", fmt.Errorf("GET /v1/namespaces: %w: connection refused", client.ErrDaemonUnavailable), ExitUnavailable, []string{"Run `mcpx status`"}},
		{"start error", fmt.Errorf("dial: %w", &service.StartError{Key: "k", Log: "/l", Reason: "exited: exit status 2", Tail: "boom"}),
			ExitUnavailable, []string{"exit status 2", "  | boom"}},
		{"interrupted", fmt.Errorf("POST /v1/call: %w", context.Canceled), ExitInterrupted, nil},
		{"silent", silent(ExitToolError), ExitToolError, nil},
		{"other", errors.New("disk full"), ExitUnavailable, []string{"mcpx: disk full."}},
	}
	a := &App{}
	for _, c := range cases {
		code, msg := a.describe(c.err)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d (message %q)", c.name, code, c.code, msg)
		}
		for _, want := range c.msg {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: message %q does not contain %q", c.name, msg, want)
			}
		}
		if c.msg == nil && c.code == ExitInterrupted && msg != "" {
			t.Errorf("%s: message %q, want none", c.name, msg)
		}
	}
}

func TestResultText(t *testing.T) {
	resp := &api.CallResponse{
		Result: []byte(`{"content":[
			{"type":"text","text":"first"},
			{"type":"image","mimeType":"image/png","_mcpx":{"blob":1}},
			{"type":"text","text":"second"},
			{"type":"resource","resource":{"uri":"file:///a.txt","text":"inside"}},
			{"type":"resource_link","uri":"file:///b.bin","name":"b"}]}`),
		Blobs: []api.Blob{{Index: 1, Path: "/cache/ab/abcd", MimeType: "image/png", Size: 1234}},
	}
	got, err := resultText(resp)
	if err != nil {
		t.Fatal(err)
	}
	want := "first\n/cache/ab/abcd (image/png, 1234 bytes)\nsecond\ninside\nfile:///b.bin"
	if got != want {
		t.Fatalf("resultText =\n%s\nwant\n%s", got, want)
	}

	structured := &api.CallResponse{Result: []byte(`{"content":[],"structuredContent":{"id":7}}`)}
	if got, _ := resultText(structured); got != "{\n  \"id\": 7\n}" {
		t.Fatalf("structured only: %q", got)
	}
}

func TestExtension(t *testing.T) {
	for mt, want := range map[string]string{"image/png": ".png", "image/jpeg": ".jpg", "audio/wav": ".wav",
		"text/plain; charset=utf-8": ".txt", "application/x-nothing-known": ".bin", "": ".bin"} {
		if got := extension(mt); got != want {
			t.Errorf("extension(%q) = %q, want %q", mt, got, want)
		}
	}
}

func TestTableAlignsAndFlattens(t *testing.T) {
	var b strings.Builder
	if err := table(&b, []string{"A", "B"}, [][]string{{"x", "one\ntwo"}, {"longer", "z"}}); err != nil {
		t.Fatal(err)
	}
	want := "A       B\nx       one two\nlonger  z\n"
	if b.String() != want {
		t.Fatalf("table =\n%q\nwant\n%q", b.String(), want)
	}
}

func TestSaveBlobsNamesAndNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	src := dir + "/cached"
	if err := os.WriteFile(src, []byte("PNG"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := dir + "/out"
	for range 2 {
		blobs := []api.Blob{{Index: 2, Path: src, MimeType: "image/png"}, {Index: 3, Path: src, Name: "../evil.txt"}}
		if err := saveBlobs(out, "shot", blobs); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"shot-2.png", "shot-2-1.png", "evil.txt", "evil-1.txt"} {
		if b, err := os.ReadFile(out + "/" + name); err != nil || string(b) != "PNG" {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
}

// An interrupt while the prompt waits for an answer ends the wait: the call
// is not made and the run ends as interrupted, not stuck on stdin.
func TestConfirmEndsOnInterrupt(t *testing.T) {
	r, w := io.Pipe() // a terminal nobody types into
	defer w.Close()
	var stderr bytes.Buffer
	a := &App{Stdin: r, Stderr: &stderr}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ok, err := a.confirm(ctx, "Call demo.delete_note (destructive)? [y/N] ")
	if ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("confirm = %v, %v; want false, context.Canceled", ok, err)
	}
	if code, _ := a.describe(err); code != ExitInterrupted {
		t.Fatalf("exit code %d, want %d", code, ExitInterrupted)
	}
	if !strings.Contains(stderr.String(), "[y/N]") {
		t.Fatalf("no prompt on stderr: %q", stderr.String())
	}
}

func TestConfirmReadsAnswer(t *testing.T) {
	for answer, want := range map[string]bool{"y\n": true, "YES\n": true, "n\n": false, "\n": false, "": false} {
		a := &App{Stdin: strings.NewReader(answer), Stderr: io.Discard}
		ok, err := a.confirm(context.Background(), "? ")
		if ok != want || err != nil {
			t.Errorf("answer %q: confirm = %v, %v; want %v", answer, ok, err, want)
		}
	}
}

func TestToolHelpArgs(t *testing.T) {
	for in, want := range map[string]string{
		"mcpx call demo.echo --help":                 "mcpx help demo.echo",
		"mcpx --json -C /x call --raw demo.echo -h":  "mcpx --json -C /x help demo.echo",
		"mcpx call demo.echo --help --json":          "mcpx --json help demo.echo",
		"mcpx call --help":                           "mcpx call --help",
		"mcpx call demo.echo text=x":                 "mcpx call demo.echo text=x",
		"mcpx call demo.echo -- --help":              "mcpx call demo.echo -- --help",
		"mcpx --config c.json call demo.echo --help": "mcpx --config c.json help demo.echo",
	} {
		if got := strings.Join(toolHelpArgs(strings.Fields(in)), " "); got != want {
			t.Errorf("%s → %s, want %s", in, got, want)
		}
	}
}

func TestUndouble(t *testing.T) {
	for in, want := range map[string]string{
		"failed to send request: failed to send request: EOF": "failed to send request: EOF",
		"a: b: a: b": "a: b: a: b",
		"plain":      "plain",
		"x: x: x: y": "x: y",
	} {
		if got := undouble(in); got != want {
			t.Errorf("undouble(%q) = %q, want %q", in, got, want)
		}
	}
}
