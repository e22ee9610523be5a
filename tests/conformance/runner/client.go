package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// The client under test: the suites start a test server per client
// scenario and run a command with its URL as the last argument. That
// command is this program's as-client mode, which plays a user of mcpx
// through its public command line only:
//
//  1. a fresh HOME and XDG tree whose config has one server, t, with the
//     scenario's URL (and, where the scenario hands over a pre-registered
//     OAuth client in MCP_CONFORMANCE_CONTEXT, that client in mcpx.auth;
//     otherwise the client ID metadata document URL the suite's
//     authorization servers know, which mcpx uses only where supported);
//  2. `mcpx refresh t`; while t is then in error and `mcpx auth` says it
//     is not logged in, `mcpx login t` with a BROWSER that follows the
//     authorisation redirects (this program's browse mode) and `mcpx
//     refresh t` again, twice at most (a login ends when the server moves
//     to another authorization server, as a user reading "Run `mcpx login
//     t`" would see);
//  3. `mcpx ls t`, then `mcpx call t.TOOL ARGS --yes` for every tool, with
//     arguments made from the tool's input schema; a call answered
//     login_required is followed by `mcpx login t` and made once more.
//     Two scenarios tell the client which calls to make, and the user
//     makes those instead (see scenarioCalls);
//  4. elicitation answered with the schema's defaults (MCPX_ELICIT=defaults).
//
// Each step is printed to stderr, which the suites keep beside the checks.

// cimdURL is the client ID metadata document URL the suites'
// authorization servers expect from a client that publishes one.
const cimdURL = "https://conformance-test.local/client-metadata.json"

// secretEnv names the variable holding a pre-registered client's secret.
const secretEnv = "CONFORMANCE_CLIENT_SECRET"

// asClient is the client under test for one scenario against url.
func asClient(mcpx, url string) int {
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	for _, skip := range strings.Split(os.Getenv(skipEnv), ",") {
		if skip != "" && skip == scenario {
			fmt.Fprintf(os.Stderr, "as-client: %s runs alone, not here\n", scenario)
			return 0
		}
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "as-client:", err)
		return 2
	}
	u, err := newUser("mxc")
	if err != nil {
		fmt.Fprintln(os.Stderr, "as-client:", err)
		return 2
	}
	defer u.close(mcpx)
	u.set("MCPX_ELICIT", "defaults")
	u.set("BROWSER", self+" browse")

	var sc scenarioContext
	if c := os.Getenv("MCP_CONFORMANCE_CONTEXT"); c != "" {
		if err := json.Unmarshal([]byte(c), &sc); err != nil {
			fmt.Fprintln(os.Stderr, "as-client: MCP_CONFORMANCE_CONTEXT:", err)
		}
	}
	auth := map[string]any{"clientMetadataUrl": cimdURL}
	if sc.ClientID != "" {
		auth = map[string]any{"clientId": sc.ClientID}
		if sc.ClientSecret != "" {
			auth["clientSecretEnv"] = secretEnv
			u.set(secretEnv, sc.ClientSecret)
		}
	}
	if err := u.writeConfig(map[string]any{"t": map[string]any{"url": url, "mcpx": map[string]any{"auth": auth}}}); err != nil {
		fmt.Fprintln(os.Stderr, "as-client:", err)
		return 2
	}

	c := cliUser{user: u, mcpx: mcpx}
	if r := c.refresh(); r.exit != 0 {
		return r.exit
	}
	r := c.run("ls", "t")
	if r.exit != 0 {
		return r.exit
	}
	var listing struct {
		Tools []struct {
			Name       string `json:"name"`
			Definition struct {
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"definition"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(r.stdout, &listing); err != nil {
		fmt.Fprintln(os.Stderr, "as-client: read `mcpx ls t`:", err)
		return 2
	}
	status := 0
	defer func() { fmt.Fprintf(os.Stderr, "as-client: exit %d\n", status) }()
	calls, err := scenarioCalls(scenario, sc, c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "as-client:", err)
		status = 2
		return status
	}
	if calls == nil {
		for _, t := range listing.Tools {
			args, _ := json.Marshal(argumentsFor(t.Definition.InputSchema))
			calls = append(calls, toolCall{Name: t.Name, Arguments: args})
		}
	}
	for _, call := range calls {
		r := c.withLogin("call", "t."+call.Name, string(call.Arguments), "--yes")
		if r.code == "invalid_arguments" && call.given {
			// mcpx checks arguments against the tool's schema before
			// sending them and refuses what the scenario wants on the
			// wire as given (a null for an optional boolean): the user
			// sends them unchecked, which --no-validate is for.
			r = c.withLogin("call", "t."+call.Name, string(call.Arguments), "--yes", "--no-validate")
		}
		// Exit 1 is the tool's own error (isError): an answer, not a failure.
		if r.exit > 1 {
			status = r.exit
		}
	}
	return status
}

// scenarioContext is what a scenario hands its client in
// MCP_CONFORMANCE_CONTEXT.
type scenarioContext struct {
	// A pre-registered OAuth client (auth/pre-registration).
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// The tool calls the scenario asks for (http-custom-headers).
	ToolCalls []toolCall `json:"toolCalls"`
}

// toolCall is one `mcpx call t.NAME ARGUMENTS`.
type toolCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// given: the scenario prescribes these arguments, to be sent as they
	// are.
	given bool
}

// echoedTool and echoTool are the tools of json-schema-2020-12-preservation:
// the first carries a JSON Schema 2020-12 input schema, the second takes
// an inputSchema back (its "schema" parameter says: "The inputSchema the
// client observed for json_schema_2020_12_tool, passed back verbatim").
const (
	echoedTool = "json_schema_2020_12_tool"
	echoTool   = "json_schema_echo"
)

// scenarioCalls are the calls a scenario asks the user to make, as its
// description and its tools' descriptions say, instead of one call of
// every tool with arguments made from its schema; nil where it asks for
// nothing in particular. mcpx does the protocol work of each: these only
// choose what the user types.
//
//   - http-custom-headers hands over the calls in toolCalls, with values
//     whose Mcp-Param-* headers must be base64-encoded (non-ASCII, control
//     characters, surrounding whitespace) or omitted (null). The user types
//     them as given (and sends them unchecked where mcpx's schema check
//     refuses them: see asClient).
//   - json-schema-2020-12-preservation asks for json_schema_2020_12_tool's
//     inputSchema, as the client holds it, to be passed to
//     json_schema_echo. The user reads it with `mcpx schema` (the
//     definition from mcpx's schema cache) and passes it back untouched.
func scenarioCalls(scenario string, sc scenarioContext, c cliUser) ([]toolCall, error) {
	if len(sc.ToolCalls) > 0 {
		calls := make([]toolCall, len(sc.ToolCalls))
		for i, tc := range sc.ToolCalls {
			calls[i] = toolCall{Name: tc.Name, Arguments: tc.Arguments, given: true}
		}
		return calls, nil
	}
	if scenario != "json-schema-2020-12-preservation" {
		return nil, nil
	}
	r := c.run("schema", "t."+echoedTool)
	if r.exit != 0 {
		return nil, fmt.Errorf("`mcpx schema t.%s` exited %d", echoedTool, r.exit)
	}
	var doc struct {
		Tools []struct {
			Definition struct {
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"definition"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(r.stdout, &doc); err != nil || len(doc.Tools) != 1 || len(doc.Tools[0].Definition.InputSchema) == 0 {
		return nil, fmt.Errorf("`mcpx schema t.%s` printed no inputSchema (%v)", echoedTool, err)
	}
	args, err := json.Marshal(map[string]json.RawMessage{"schema": doc.Tools[0].Definition.InputSchema})
	if err != nil {
		return nil, err
	}
	return []toolCall{{Name: echoTool, Arguments: args}}, nil
}

// cliUser runs mcpx as the user would.
type cliUser struct {
	*user
	mcpx string
}

type result struct {
	exit   int
	stdout []byte
	code   string // the error code of a --json failure
}

// run runs `mcpx --json ARGS…` and echoes it to stderr.
func (c cliUser) run(args ...string) result {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.mcpx, append([]string{"--json"}, args...)...)
	cmd.Env = c.environ()
	cmd.Dir = c.home
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	err := cmd.Run()
	r := result{stdout: out.Bytes()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.exit = exit.ExitCode()
	case err != nil:
		r.exit = 2
	}
	var doc struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	if r.exit != 0 && json.Unmarshal(r.stdout, &doc) == nil {
		r.code = doc.Error.Code
	}
	fmt.Fprintf(os.Stderr, "$ mcpx --json %q → exit %d %s\n%s\n", args, r.exit, r.code, oneLine(string(r.stdout), 2000))
	return r
}

// refresh reads t's tools, logging in first when t needs it (twice at
// most).
func (c cliUser) refresh() result {
	r := c.run("refresh", "t")
	for range 2 {
		// A refresh that leaves t in error exits 3 and prints its
		// answer, which says why; anything else is the result.
		if !c.inError(r.stdout) || c.loggedIn() {
			return r
		}
		if l := c.run("login", "t"); l.exit != 0 {
			return l
		}
		r = c.run("refresh", "t")
	}
	return r
}

// inError reports whether a refresh left t in the error state.
func (c cliUser) inError(refresh []byte) bool {
	var doc struct {
		Namespaces []struct {
			Name  string `json:"name"`
			State string `json:"state"`
		} `json:"namespaces"`
	}
	_ = json.Unmarshal(refresh, &doc)
	for _, ns := range doc.Namespaces {
		if ns.Name == "t" && ns.State == "error" {
			return true
		}
	}
	return false
}

// loggedIn asks `mcpx auth` whether t holds a login.
func (c cliUser) loggedIn() bool {
	var doc struct {
		Servers []struct {
			Namespace string `json:"namespace"`
			LoggedIn  bool   `json:"loggedIn"`
		} `json:"servers"`
	}
	_ = json.Unmarshal(c.run("auth").stdout, &doc)
	for _, s := range doc.Servers {
		if s.Namespace == "t" {
			return s.LoggedIn
		}
	}
	return false
}

// withLogin runs a command; if it needs a login, logs in and runs it once
// more.
func (c cliUser) withLogin(args ...string) result {
	r := c.run(args...)
	if r.code != "login_required" {
		return r
	}
	if l := c.run("login", "t"); l.exit != 0 {
		return l
	}
	return c.run(args...)
}

// argumentsFor makes arguments a user would type for a tool: each
// required property gets its default, its first enum value or const, or
// a plain value of its type.
func argumentsFor(schema json.RawMessage) map[string]any {
	var s jsonSchema
	_ = json.Unmarshal(schema, &s)
	args := map[string]any{}
	required := append([]string(nil), s.Required...)
	sort.Strings(required)
	for _, name := range required {
		args[name] = valueFor(s.Properties[name])
	}
	return args
}

type jsonSchema struct {
	Type       any                   `json:"type"`
	Properties map[string]jsonSchema `json:"properties"`
	Required   []string              `json:"required"`
	Default    any                   `json:"default"`
	Enum       []any                 `json:"enum"`
	Const      any                   `json:"const"`
}

func valueFor(s jsonSchema) any {
	switch {
	case s.Default != nil:
		return s.Default
	case s.Const != nil:
		return s.Const
	case len(s.Enum) > 0:
		return s.Enum[0]
	}
	t, _ := s.Type.(string)
	if list, ok := s.Type.([]any); ok && len(list) > 0 {
		t, _ = list[0].(string)
	}
	switch t {
	case "number", "integer":
		return 1
	case "boolean":
		return true
	case "array":
		return []any{}
	case "object":
		return argumentsFor(mustJSON(s))
	default:
		return "test"
	}
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}

// browse is the BROWSER of the client under test: it opens the
// authorisation URL and follows its redirects, which end at mcpx's
// loopback callback, as a browser whose user approves at once would.
func browse(url string) int {
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, "browse:", err)
		return 1
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	fmt.Fprintf(os.Stderr, "browse: %s → %s %s\n", url, resp.Request.URL, resp.Status)
	if resp.StatusCode >= 400 {
		return 1
	}
	return 0
}

// user is a hermetic mcpx user: its own HOME, XDG directories and
// runtime directory under one temporary root.
type user struct {
	root, home string
	env        map[string]string
}

// newUser makes the directories. The root is short: socket paths must
// stay under 100 bytes.
func newUser(prefix string) (*user, error) {
	root, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, fmt.Errorf("make hermetic home: %w", err)
	}
	u := &user{root: root, home: filepath.Join(root, "home"), env: map[string]string{}}
	run := filepath.Join(root, "run")
	for _, d := range []string{u.home, filepath.Join(u.home, ".config", "mcpx")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("make hermetic home: %w", err)
		}
	}
	if err := os.Mkdir(run, 0o700); err != nil {
		return nil, fmt.Errorf("make hermetic home: %w", err)
	}
	u.env = map[string]string{
		"PATH":            os.Getenv("PATH"),
		"HOME":            u.home,
		"XDG_CONFIG_HOME": filepath.Join(u.home, ".config"),
		"XDG_STATE_HOME":  filepath.Join(u.home, ".local", "state"),
		"XDG_CACHE_HOME":  filepath.Join(u.home, ".cache"),
		"XDG_RUNTIME_DIR": run,
		"LANG":            "C.UTF-8",
		"MCPX_SERVICE":    "direct",
	}
	return u, nil
}

func (u *user) set(k, v string) { u.env[k] = v }

func (u *user) environ() []string {
	var env []string
	for k, v := range u.env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env
}

// writeConfig writes the user's mcpx config with these servers.
func (u *user) writeConfig(servers map[string]any) error {
	b, err := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(u.home, ".config", "mcpx", "config.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// close stops the user's daemons and removes the tree.
func (u *user) close(mcpx string) {
	cmd := exec.Command(mcpx, "stop", "--all")
	cmd.Env = u.environ()
	cmd.Dir = u.home
	_ = cmd.Run()
	_ = os.RemoveAll(u.root)
}
