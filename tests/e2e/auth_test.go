package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// oauthFixture is mcpx-fixture --oauth: the MCP server at URL requires
// tokens of the authorization server on the same origin.
type oauthFixture struct {
	URL  string // …/mcp
	base string
}

// fixtureStats is the fixture's /fixture/stats.
type fixtureStats struct {
	CodeGrants    int      `json:"codeGrants"`
	RefreshGrants int      `json:"refreshGrants"`
	Revocations   int      `json:"revocations"`
	Tokens        []string `json:"tokens"`
}

func startOAuthFixture(t *testing.T) *oauthFixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, fixtureBin, "--oauth", "127.0.0.1:0")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
	}()
	select {
	case u, ok := <-line:
		if !ok {
			t.Fatal("mcpx-fixture --oauth printed no URL")
		}
		return &oauthFixture{URL: u, base: strings.TrimSuffix(u, "/mcp")}
	case <-time.After(30 * time.Second):
		t.Fatal("mcpx-fixture --oauth did not start")
	}
	return nil
}

func (f *oauthFixture) stats(t *testing.T) fixtureStats {
	t.Helper()
	resp, err := http.Get(f.base + "/fixture/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s fixtureStats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func (f *oauthFixture) revokeRefreshTokens(t *testing.T) {
	t.Helper()
	resp, err := http.Post(f.base+"/fixture/revoke-refresh", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// TestOAuthLogin logs in to a server that needs OAuth with the real
// binaries, BROWSER being a script that follows the redirects, then calls
// it across token expiries, concurrently, after a revocation, and logs out;
// no token text may appear in any output, log or file but the token store.
func TestOAuthLogin(t *testing.T) {
	e := NewEnv(t)
	fx := startOAuthFixture(t)
	// The user-wide config: trusted as the user's own.
	e.WriteFile(filepath.Join(e.Home, ".config", "mcpx", "config.json"), fmt.Sprintf(`{"mcpServers": {
  "remote": {"url": %s}
}}`, jsonString(fx.URL)))
	browserLog := filepath.Join(e.Root, "browser.log")
	browser := e.WriteFile("browser.sh", fmt.Sprintf("#!/bin/sh\nexec curl -sS -L -o /dev/null -w '%%{http_code} %%{url_effective}\\n' \"$1\" >>%s 2>&1\n", browserLog))
	if err := os.Chmod(browser, 0o755); err != nil {
		t.Fatal(err)
	}
	e.Set("BROWSER", browser)

	var (
		mu      sync.Mutex
		outputs []Result
	)
	run := func(args ...string) Result {
		r := e.Mcpx(args...)
		mu.Lock()
		outputs = append(outputs, r)
		mu.Unlock()
		return r
	}
	authState := func() api.AuthStatus {
		t.Helper()
		r := run("--json", "auth")
		var a api.AuthResponse
		if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &a) != nil || len(a.Servers) != 1 {
			t.Fatalf("auth --json:\n%s", r)
		}
		return a.Servers[0]
	}
	// waitExpiry sleeps until the current access token has expired.
	waitExpiry := func() {
		t.Helper()
		st := authState()
		if st.ExpiresAt == nil {
			t.Fatalf("no expiry in %+v", st)
		}
		time.Sleep(time.Until(*st.ExpiresAt) + 1500*time.Millisecond)
	}

	// Before any login: exit 3 and the remedy, not a bare transport error.
	r := run("call", "remote.echo", "text=hi")
	if r.Code != 3 || !strings.Contains(r.Stderr, "Run `mcpx login remote`") {
		t.Fatalf("call before login: want exit 3 and the login hint\n%s", r)
	}
	if st := authState(); st.LoggedIn {
		t.Fatalf("logged in before login: %+v", st)
	}

	// Login: the "browser" follows the redirects to the daemon's loopback.
	r = run("login", "remote")
	if r.Code != 0 || !strings.Contains(r.Stdout, "logged in to remote") {
		b, _ := os.ReadFile(browserLog)
		t.Fatalf("login:\n%s\nbrowser: %s", r, b)
	}
	st := authState()
	if !st.LoggedIn || st.Scope != "mcp" || !st.Refreshable || st.Issuer != fx.base {
		t.Fatalf("auth after login: %+v", st)
	}

	// The token file: 0600 in a 0700 directory under XDG_STATE_HOME.
	authDir := filepath.Join(e.Home, ".local", "state", "mcpx", "auth")
	tokenFile := filepath.Join(authDir, st.ServerHash+".json")
	fi, err := os.Stat(tokenFile)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file %s: %v %v", tokenFile, fi, err)
	}
	if di, err := os.Stat(authDir); err != nil || di.Mode().Perm() != 0o700 {
		t.Fatalf("token directory: %v %v", di, err)
	}

	if r := run("call", "remote.echo", "text=hello"); r.Code != 0 || r.Stdout != "hello" {
		t.Fatalf("call after login:\n%s", r)
	}

	// After expiry: refreshed transparently.
	before := fx.stats(t).RefreshGrants
	waitExpiry()
	if r := run("call", "remote.echo", "text=later"); r.Code != 0 || r.Stdout != "later" {
		t.Fatalf("call after expiry:\n%s", r)
	}
	if got := fx.stats(t).RefreshGrants - before; got != 1 {
		t.Fatalf("%d refresh grants for a call after expiry, want 1", got)
	}

	// 20 concurrent calls across an expiry: one refresh.
	before = fx.stats(t).RefreshGrants
	waitExpiry()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			text := fmt.Sprintf("c%d", i)
			if r := run("call", "remote.echo", "text="+text); r.Code != 0 || r.Stdout != text {
				t.Errorf("concurrent call %d:\n%s", i, r)
			}
		})
	}
	wg.Wait()
	if got := fx.stats(t).RefreshGrants - before; got != 1 {
		t.Fatalf("%d refresh grants for 20 concurrent calls across an expiry, want 1", got)
	}

	// A revoked refresh token: exit 3 and the login hint.
	fx.revokeRefreshTokens(t)
	waitExpiry()
	r = run("call", "remote.echo", "text=revoked")
	if r.Code != 3 || !strings.Contains(r.Stderr, "Run `mcpx login remote`") {
		t.Fatalf("call with a revoked refresh token: want exit 3 and the login hint\n%s", r)
	}
	if st := authState(); st.LoggedIn {
		t.Fatalf("still logged in after the grant was revoked: %+v", st)
	}

	// Log in again, then log out: the tokens are revoked and forgotten.
	if r := run("login", "remote"); r.Code != 0 {
		t.Fatalf("second login:\n%s", r)
	}
	if r := run("call", "remote.echo", "text=again"); r.Code != 0 || r.Stdout != "again" {
		t.Fatalf("call after the second login:\n%s", r)
	}
	revBefore := fx.stats(t).Revocations
	r = run("logout", "remote")
	if r.Code != 0 || !strings.Contains(r.Stdout, "revoked") {
		t.Fatalf("logout:\n%s", r)
	}
	if got := fx.stats(t).Revocations - revBefore; got < 1 {
		t.Fatalf("logout revoked nothing at the server")
	}
	if _, err := os.Stat(tokenFile); !os.IsNotExist(err) {
		t.Fatalf("token file after logout: %v", err)
	}
	if r := run("call", "remote.echo", "text=x"); r.Code != 3 || !strings.Contains(r.Stderr, "mcpx login remote") {
		t.Fatalf("call after logout:\n%s", r)
	}

	// Surfaces that must never show a token.
	for _, args := range [][]string{{"--json", "status"}, {"status"}, {"config"}, {"--json", "ls"}, {"auth"}} {
		run(args...)
	}

	// No token text in any output, log or file outside the token store.
	tokens := fx.stats(t).Tokens
	if len(tokens) < 8 {
		t.Fatalf("the fixture issued %d tokens; the test did not exercise refreshes", len(tokens))
	}
	check := func(where, text string) {
		for _, tok := range tokens {
			if strings.Contains(text, tok) {
				t.Errorf("a token appears in %s", where)
				return
			}
		}
	}
	for _, r := range outputs {
		check("the output of mcpx "+strings.Join(r.Args, " "), r.Stdout+r.Stderr)
	}
	err = filepath.WalkDir(e.Root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err == nil {
			check(path, string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The daemon's log was among them: make sure it exists and says what
	// happened.
	logs, _ := filepath.Glob(filepath.Join(e.Home, ".local", "state", "mcpx", "*.log"))
	found := false
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		found = found || strings.Contains(string(b), "refreshed the token of remote")
	}
	if !found {
		t.Errorf("no daemon log in %v mentions the refresh", logs)
	}
}

// TestOAuthDeviceLogin logs in with the device authorization grant, the
// "browser" visiting the verification URI.
func TestOAuthDeviceLogin(t *testing.T) {
	e := NewEnv(t)
	fx := startOAuthFixture(t)
	e.WriteFile(filepath.Join(e.Home, ".config", "mcpx", "config.json"), fmt.Sprintf(`{"mcpServers": {"remote": {"url": %s}}}`, jsonString(fx.URL)))
	followingBrowser(t, e)
	r := e.Mcpx("login", "--device", "remote")
	if r.Code != 0 || !strings.Contains(r.Stderr, "enter the code") {
		t.Fatalf("device login:\n%s", r)
	}
	if r := e.MustOK("call", "remote.echo", "text=dev"); r.Stdout != "dev" {
		t.Fatalf("call:\n%s", r)
	}
	for _, tok := range fx.stats(t).Tokens {
		if strings.Contains(r.Stdout+r.Stderr, tok) {
			t.Fatal("a token appears in the login output")
		}
	}
}

// TestOAuthLoginPrintsURL: with --no-browser, and without BROWSER on a
// machine without a display, login prints the URL (and starts no browser);
// opening it elsewhere completes the login.
func TestOAuthLoginPrintsURL(t *testing.T) {
	e := NewEnv(t)
	fx := startOAuthFixture(t)
	e.WriteFile(filepath.Join(e.Home, ".config", "mcpx", "config.json"), fmt.Sprintf(`{"mcpServers": {"remote": {"url": %s}}}`, jsonString(fx.URL)))
	started := filepath.Join(e.Root, "browser-started")
	browser := e.WriteFile("browser.sh", "#!/bin/sh\ntouch "+started+"\n")
	if err := os.Chmod(browser, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		browser string
		args    []string
	}{
		{"no-browser flag", browser, []string{"login", "--no-browser", "remote"}},
		{"no display", "", []string{"login", "remote"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, mcpxBin, tc.args...)
			cmd.Dir = e.Work
			env := []string{}
			for _, kv := range e.Environ() {
				if !strings.HasPrefix(kv, "BROWSER=") && !strings.HasPrefix(kv, "DISPLAY=") && !strings.HasPrefix(kv, "WAYLAND_DISPLAY=") {
					env = append(env, kv)
				}
			}
			if tc.browser != "" {
				env = append(env, "BROWSER="+tc.browser)
			}
			cmd.Env = env
			stderr, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			var stdout strings.Builder
			cmd.Stdout = &stdout
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(stderr)
			var url string
			var lines []string
			for sc.Scan() {
				lines = append(lines, sc.Text())
				if u := strings.TrimSpace(sc.Text()); strings.HasPrefix(u, "http://") {
					url = u
					break
				}
			}
			if url == "" {
				_ = cmd.Wait()
				t.Fatalf("no URL printed: %q", lines)
			}
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			resp, err := http.Get(url) // follows the redirect to the daemon
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if err := cmd.Wait(); err != nil || !strings.Contains(stdout.String(), "logged in to remote") {
				t.Fatalf("login: %v, stdout %q", err, stdout.String())
			}
			if _, err := os.Stat(started); !os.IsNotExist(err) {
				t.Fatalf("a browser was started: %v", err)
			}
			e.MustOK("logout", "remote")
		})
	}
}

// TestOAuthListAfterLogin: a server listed before its login shows "needs
// a login"; right after `mcpx login` prints "logged in", `mcpx ls NS`
// shows its tools, never the error recorded before the login. Repeated:
// the stale error was a race with the daemon's background refetch.
func TestOAuthListAfterLogin(t *testing.T) {
	e := NewEnv(t)
	fx := startOAuthFixture(t)
	e.WriteFile(filepath.Join(e.Home, ".config", "mcpx", "config.json"), fmt.Sprintf(`{"mcpServers": {"remote": {"url": %s}}}`, jsonString(fx.URL)))
	followingBrowser(t, e)
	for i := range 5 {
		r := e.Mcpx("--json", "refresh", "remote")
		var refreshed api.RefreshResponse
		// Exit 3, as in text: the namespace could not be read.
		if r.Code != 3 || json.Unmarshal([]byte(r.Stdout), &refreshed) != nil || len(refreshed.Namespaces) != 1 ||
			refreshed.Namespaces[0].State != api.StateError {
			t.Fatalf("round %d: refresh before login: want state error\n%s", i, r)
		}
		if r := e.Mcpx("login", "remote"); r.Code != 0 || !strings.Contains(r.Stdout, "logged in to remote") {
			t.Fatalf("round %d: login:\n%s", i, r)
		}
		r = e.Mcpx("--json", "ls", "remote")
		var tools api.ToolsResponse
		if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &tools) != nil {
			t.Fatalf("round %d: ls after login:\n%s", i, r)
		}
		if tools.Namespace.State != api.StateCached || len(tools.Tools) == 0 {
			t.Fatalf("round %d: ls right after login: state %q (%s), %d tools; want its tools", i, tools.Namespace.State, tools.Namespace.Error, len(tools.Tools))
		}
		e.MustOK("logout", "remote")
	}
}

// authorizeScopes is what each authorization request of the fixture asked
// for.
func (f *oauthFixture) authorizeScopes(t *testing.T) []string {
	t.Helper()
	resp, err := http.Get(f.base + "/fixture/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s struct {
		AuthorizeScopes []string `json:"authorizeScopes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s.AuthorizeScopes
}

// TestOAuthStepUp: the OAuth fixture answers add_note 403
// insufficient_scope (mcp:write) to a login holding mcp. With a browser,
// `mcpx call` logs in again asking for both scopes and makes the call
// once more; without one, the call fails with exit 3 naming the `mcpx
// login` that asks for them, and that login does. A scope the server never
// grants (delete_note's mcp:admin) costs one login, then no more.
func TestOAuthStepUp(t *testing.T) {
	e := NewEnv(t)
	fx := startOAuthFixture(t)
	e.WriteFile(filepath.Join(e.Home, ".config", "mcpx", "config.json"), fmt.Sprintf(`{"mcpServers": {"remote": {"url": %s}}}`, jsonString(fx.URL)))
	browser := followingBrowser(t, e)
	authState := func() api.AuthStatus {
		t.Helper()
		var a api.AuthResponse
		e.JSON(&a, "auth")
		if len(a.Servers) != 1 {
			t.Fatalf("auth: %+v", a)
		}
		return a.Servers[0]
	}
	asked := func(want ...string) {
		t.Helper()
		if got := fx.authorizeScopes(t); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("authorization requests asked for %q, want %q", got, want)
		}
	}

	e.MustOK("login", "remote")
	asked("mcp")

	// With a browser: the call steps up and goes through.
	r := e.Mcpx("call", "remote.add_note", "name=n", "text=noted")
	if r.Code != 0 || !strings.Contains(r.Stderr, "asking for mcp mcp:write") || !strings.Contains(r.Stderr, "logged in to remote") {
		t.Fatalf("call needing a step-up, with a browser:\n%s", r)
	}
	asked("mcp", "mcp mcp:write")
	if st := authState(); st.Scope != "mcp mcp:write" || st.NeedsScope != "" {
		t.Fatalf("auth after the step-up: %+v", st)
	}
	if r := e.MustOK("call", "remote.get_note", "name=n"); r.Stdout != "noted" {
		t.Fatalf("get_note: %q", r.Stdout)
	}

	// A scope the authorization server never grants: one step-up, one
	// retry, then the error; the next call does not try again.
	r = e.Mcpx("--json", "call", "remote.delete_note", "name=n", "--yes")
	if r.Code != 3 || !strings.Contains(r.Stdout, `"insufficient_scope"`) {
		t.Fatalf("call needing a scope never granted:\n%s", r)
	}
	asked("mcp", "mcp mcp:write", "mcp mcp:write mcp:admin")
	r = e.Mcpx("call", "remote.delete_note", "name=n", "--yes")
	if r.Code != 3 || !strings.Contains(r.Stderr, "did not grant") || strings.Contains(r.Stderr, "mcpx login") {
		t.Fatalf("call needing a scope refused at the last login:\n%s", r)
	}
	asked("mcp", "mcp mcp:write", "mcp mcp:write mcp:admin")

	// Without a browser: the error names the login, which asks for the
	// scopes.
	e.MustOK("logout", "remote")
	e.MustOK("login", "remote")
	e.Set("BROWSER", "")
	r = e.Mcpx("call", "remote.add_note", "name=m", "text=x")
	if r.Code != 3 || !strings.Contains(r.Stderr, "Run `mcpx login remote`, which asks for the scope mcp mcp:write.") {
		t.Fatalf("call needing a step-up, without a browser:\n%s", r)
	}
	r = e.Mcpx("--json", "call", "remote.add_note", "name=m", "text=x")
	var doc struct {
		Error struct {
			Code  string `json:"code"`
			Exit  int    `json:"exit"`
			Scope string `json:"scope"`
		} `json:"error"`
	}
	if r.Code != 3 || json.Unmarshal([]byte(r.Stdout), &doc) != nil || doc.Error.Code != "insufficient_scope" || doc.Error.Scope != "mcp mcp:write" {
		t.Fatalf("--json call needing a step-up, without a browser:\n%s", r)
	}
	if st := authState(); st.NeedsScope != "mcp mcp:write" {
		t.Fatalf("auth with a step-up pending: %+v", st)
	}
	e.Set("BROWSER", browser)
	e.MustOK("login", "remote")
	asked("mcp", "mcp mcp:write", "mcp mcp:write mcp:admin", "mcp", "mcp mcp:write")
	e.Set("BROWSER", "")
	e.MustOK("call", "remote.add_note", "name=m", "text=x")
}

// followingBrowser sets BROWSER to a script that follows the
// authorisation URL with curl, as a user logged in everywhere would.
func followingBrowser(t *testing.T, e *Env) string {
	t.Helper()
	browser := e.WriteFile("browser.sh", "#!/bin/sh\nexec curl -sS -L -o /dev/null \"$1\"\n")
	if err := os.Chmod(browser, 0o755); err != nil {
		t.Fatal(err)
	}
	e.Set("BROWSER", browser)
	return browser
}
