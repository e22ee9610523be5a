package config

import (
	"strings"
	"testing"
)

func TestSecretsAndRedactor(t *testing.T) {
	s := &Server{Name: "r", URL: "https://${USER_}:${PW}@h/p/${TOK}?k=${Q}", Headers: map[string]string{"A": "Bearer ${H}"},
		Env: map[string]string{"E": "${ENVV}"}, Command: "${CMD}"}
	vals := map[string]string{"USER_": "alice", "PW": "pa ss/w", "TOK": "t0k3n", "Q": "q&v=1", "H": "hdrsecret", "ENVV": "envsecret", "CMD": "/bin/sh-cmd", "X": "unused"}
	r := NewRedactor(s.Secrets(func(k string) (string, bool) { v, ok := vals[k]; return v, ok }))
	for _, in := range []string{"t0k3n", "pa ss/w", "pa%20ss%2Fw", "pa+ss%2Fw", "q%26v%3D1", "hdrsecret", "envsecret", "alice"} {
		if got := r.String("x " + in + " y"); got != "x [redacted] y" {
			t.Errorf("redact %q = %q", in, got)
		}
	}
	if got := r.String("/bin/sh-cmd unused"); got != "/bin/sh-cmd unused" {
		t.Errorf("command or unreferenced values redacted: %q", got)
	}
	if got := (Redactor{}).String("abc"); got != "abc" {
		t.Errorf("zero Redactor changed text: %q", got)
	}
	short := &Server{URL: "http://h:${P}/"}
	if sec := short.Secrets(func(string) (string, bool) { return "80", true }); len(sec) != 0 || strings.Contains(strings.Join(sec, ""), "80") {
		t.Errorf("a two-byte value is a secret: %q", sec)
	}
}
