package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestAuthBlock(t *testing.T) {
	cfg, err := loadString(t, `{"mcpServers": {"r": {"url": "https://mcp.example/mcp",
  "mcpx": {"auth": {"clientId": "abc", "clientSecretEnv": "R_SECRET", "scopes": ["read", "write"]}}}}}`)
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Servers["r"]
	a := s.Options.Auth
	if a == nil || a.ClientID != "abc" || a.ClientSecretEnv != "R_SECRET" || !slices.Equal(a.Scopes, []string{"read", "write"}) {
		t.Fatalf("auth = %+v", a)
	}
	if !slices.Contains(s.Vars(), "R_SECRET") {
		t.Fatalf("Vars() = %v lacks the secret's variable", s.Vars())
	}
	// The secret comes from the caller's environment at expansion.
	exp, err := s.Expand(func(k string) (string, bool) { return map[string]string{"R_SECRET": "s3"}[k], k == "R_SECRET" })
	if err != nil || exp.Options.Auth.ClientSecret != "s3" || s.Options.Auth.ClientSecret != "" {
		t.Fatalf("expand: %v %+v (original %+v)", err, exp.Options.Auth, s.Options.Auth)
	}
	_, err = s.Expand(func(string) (string, bool) { return "", false })
	var unset *UnsetVarError
	if !errors.As(err, &unset) || unset.Var != "R_SECRET" {
		t.Fatalf("unset secret: %v", err)
	}
	// The block is not part of the server's identity.
	plain, err := loadString(t, `{"mcpServers": {"r": {"url": "https://mcp.example/mcp"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Servers["r"].Hash() != s.Hash() {
		t.Fatal("mcpx.auth changed the serverHash")
	}
}

func TestAuthBlockErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`{"clientSecretEnv": "X"}`, "clientSecretEnv needs clientId"},
		{`{"clientId": "a", "clientSecretEnv": "${X}"}`, "not a variable name"},
		{`{"clientMetadataUrl": "http://a.example/c.json"}`, "https URL"},
		{`{"scope": ["a"]}`, `did you mean "scopes"`},
		{`"x"`, "want an object"},
	} {
		_, err := loadString(t, `{"mcpServers": {"r": {"url": "https://h/mcp", "mcpx": {"auth": `+tc.src+`}}}}`)
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want a *ParseError containing %q", tc.src, err, tc.want)
		}
	}
	// Top level: not accepted.
	if _, err := loadString(t, `{"mcpx": {"auth": {}}}`); err == nil {
		t.Error("top-level mcpx.auth accepted")
	}
}
