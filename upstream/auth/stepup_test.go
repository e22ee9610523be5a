package auth

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/fixture"
)

func TestScopeSets(t *testing.T) {
	if got := scopeUnion("a b", "", "b c", "a d"); got != "a b c d" {
		t.Fatalf("union = %q", got)
	}
	if got := scopeUnion("", ""); got != "" {
		t.Fatalf("union of nothing = %q", got)
	}
	if !scopeCovers("a b c", "c a") || scopeCovers("a b", "a x") || !scopeCovers("a", "") {
		t.Fatal("covers")
	}
	if got := scopeMinus("a b c b", "b"); got != "a c" {
		t.Fatalf("minus = %q", got)
	}
}

// callTool posts a tools/call of tool through the manager's transport
// (outside a session: a status other than 401 and 403 means the request
// got past authorization).
func (e *env) callTool(tool string) (int, error) {
	return e.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`)
}

// TestStepUp: a 403 insufficient_scope is an *InsufficientScopeError that
// names the union of the scopes held and challenged; the next login asks
// for exactly that, and the call goes through. A scope the authorization
// server did not grant when asked is not worth another login.
func TestStepUp(t *testing.T) {
	e := newEnv(t, 0)
	e.o.RequireScope("add_note", fixture.OAuthWriteScope)
	e.o.RequireScope("delete_note", "mcp:admin")
	e.o.Withhold("mcp:admin")
	if info := e.login(); info.Scopes != fixture.OAuthScope {
		t.Fatalf("first login: scope %q", info.Scopes)
	}
	if code, err := e.callTool("echo"); err != nil || code == 401 || code == 403 {
		t.Fatalf("echo: %d %v", code, err)
	}

	_, err := e.callTool("add_note")
	var se *InsufficientScopeError
	if !errors.As(err, &se) || se.Futile || se.Challenged != fixture.OAuthWriteScope || se.Scope != "mcp mcp:write" {
		t.Fatalf("add_note with scope mcp: %v (%+v), want step-up to \"mcp mcp:write\"", err, se)
	}
	if info, _ := e.m.Status(e.s); info.NeedsScope != "mcp mcp:write" {
		t.Fatalf("status after the refusal: needs %q", info.NeedsScope)
	}
	// The login asks for the union, gets it, and forgets the step-up.
	if info := e.login(); info.Scopes != "mcp mcp:write" || info.NeedsScope != "" {
		t.Fatalf("step-up login: %+v", info)
	}
	if asked := e.o.Stats().AuthorizeScopes; len(asked) != 2 || asked[1] != "mcp mcp:write" {
		t.Fatalf("authorization requests asked for %q", asked)
	}
	if code, err := e.callTool("add_note"); err != nil || code == 401 || code == 403 {
		t.Fatalf("add_note after the step-up: %d %v", code, err)
	}

	// delete_note needs a scope the server never grants: one step-up
	// login asks for it, then mcpx knows better than to ask again.
	_, err = e.callTool("delete_note")
	if !errors.As(err, &se) || se.Futile || se.Scope != "mcp mcp:write mcp:admin" {
		t.Fatalf("delete_note: %v (%+v)", err, se)
	}
	e.login()
	_, err = e.callTool("delete_note")
	if !errors.As(err, &se) || !se.Futile || se.Why != ScopeDenied || !strings.Contains(se.Error(), "did not grant") {
		t.Fatalf("delete_note after a login that was refused the scope: %v (%+v)", err, se)
	}
	if info, _ := e.m.Status(e.s); info.NeedsScope != "" {
		t.Fatalf("a futile step-up is pending: %q", info.NeedsScope)
	}
	if n := len(e.o.Stats().AuthorizeScopes); n != 3 {
		t.Fatalf("%d authorization requests, want 3", n)
	}
}

// TestStepUpHeld: a challenge for a scope the login holds is not worth a
// login (the conformance suites' scope-retry-limit).
func TestStepUpHeld(t *testing.T) {
	e := newEnv(t, 0)
	e.login()
	src := e.m.source(e.s)
	err := src.insufficientScope(challenge{bearer: true, err: "insufficient_scope", scope: fixture.OAuthScope})
	if !err.Futile || err.Why != ScopeHeld || err.Scope != fixture.OAuthScope {
		t.Fatalf("challenge for a held scope: %+v", err)
	}
	err = src.insufficientScope(challenge{bearer: true, err: "insufficient_scope"})
	if !err.Futile || err.Why != ScopeUnnamed {
		t.Fatalf("challenge naming no scope: %+v", err)
	}
	if _, stepUp, _, _ := src.loginState(); stepUp != "" {
		t.Fatalf("futile challenges left a step-up pending: %q", stepUp)
	}
	// Two tools challenging different scopes before the login: it asks
	// for both.
	src.insufficientScope(challenge{bearer: true, err: "insufficient_scope", scope: "x"})
	err = src.insufficientScope(challenge{bearer: true, err: "insufficient_scope", scope: "y"})
	if err.Scope != "mcp x y" {
		t.Fatalf("second challenge: scope %q, want \"mcp x y\"", err.Scope)
	}
}
