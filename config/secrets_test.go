package config

import (
	"os"
	"path/filepath"
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

// Redaction hides secrets, not paths: the base variables and existing
// paths in env values are left alone; values in a url or header, and those
// of variables or env keys named like credentials, are hidden even when
// they are paths.
func TestSecretsAreNotPaths(t *testing.T) {
	home := t.TempDir()
	data := filepath.Join(home, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	vals := map[string]string{
		"HOME": home, "USER": "alice", "PATH": "/usr/bin:/bin", "PWD": home, "TMPDIR": "/var/tmp",
		"XDG_DATA_HOME": data, "LANG": "C.UTF-8", "LC_ALL": "en_US.UTF-8", "TZ": "Europe/Paris", "SHELL": "/bin/bash",
		"DATA_DIR":   data,                           // an existing path: not a secret
		"LATER_FILE": filepath.Join(home, "m.jsonl"), // a path that does not exist (yet): could be anything
		"API_TOKEN":  data,                           // named like a credential: always
		"URL_PART":   data,                           // in the url: always
		"HDR":        data + "/h",                    // in a header: always
		"PLAIN":      "s3cr3t-value",
	}
	s := &Server{
		URL:     "https://h/${URL_PART}?q=1",
		Headers: map[string]string{"X-Where": "${HDR}", "Authorization": "Bearer literal-bearer", "Accept": "application/json"},
		Env: map[string]string{
			"MEMORY_FILE_PATH": "${HOME}/m.jsonl", "WHO": "${USER}", "P": "${PATH}", "D": "${PWD}", "T": "${TMPDIR}",
			"X": "${XDG_DATA_HOME}", "L": "${LANG}", "LA": "${LC_ALL}", "Z": "${TZ}", "SH": "${SHELL}",
			"DIR": "${DATA_DIR}", "LATER": "${LATER_FILE}", "TOK": "${API_TOKEN}", "OTHER": "${PLAIN}",
			"MY_SECRET_KEY": "literal-key-value", "MODE": "verbose",
		},
	}
	r := NewRedactor(s.Secrets(func(k string) (string, bool) { v, ok := vals[k]; return v, ok }))
	for _, keep := range []string{home + "/proj/.mcp.json", "alice", "/usr/bin:/bin", "/var/tmp", "C.UTF-8", "en_US.UTF-8", "Europe/Paris", "/bin/bash", "application/json", "verbose"} {
		if got := r.String(keep); got != keep {
			t.Errorf("redact(%q) = %q: not a secret", keep, got)
		}
	}
	// data is an existing path, but it is also the value of API_TOKEN and
	// of URL_PART: hidden.
	for _, hide := range []string{data, data + "/h", filepath.Join(home, "m.jsonl"), "s3cr3t-value", "literal-bearer", "Bearer literal-bearer", "literal-key-value"} {
		if got := r.String("x " + hide + " y"); got != "x [redacted] y" {
			t.Errorf("redact(%q) = %q: a secret", hide, got)
		}
	}
	// The OAuth client secret mcpx.auth.clientSecretEnv names.
	oauth := &Server{URL: "https://h/mcp", Options: Options{Auth: &Auth{ClientID: "c", ClientSecretEnv: "OAUTH_CS"}}}
	if got := NewRedactor(oauth.Secrets(func(k string) (string, bool) { return "cs-value-42", k == "OAUTH_CS" })).String("x cs-value-42"); got != "x [redacted]" {
		t.Errorf("the client secret shows: %q", got)
	}
	// Without the url, header and credential name, the existing path is free.
	p := &Server{Env: map[string]string{"DIR": "${DATA_DIR}"}}
	if sec := p.Secrets(func(k string) (string, bool) { v, ok := vals[k]; return v, ok }); len(sec) != 0 {
		t.Errorf("an existing path is a secret: %q", sec)
	}
}

// Credentials written literally in a url are secrets: the password (or a
// lone user name, https://TOKEN@host) and secret-like query values; other
// query values are not.
func TestSecretsLiteralURL(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	for _, c := range []struct {
		url        string
		hide, keep []string
	}{
		{"https://bob:hunter22@h/mcp", []string{"hunter22"}, []string{"bob"}},
		{"https://ghp_abcdef@h/mcp", []string{"ghp_abcdef"}, nil},
		{"https://h/mcp?api_key=k3y-value&stream=true&token=t0ken", []string{"k3y-value", "t0ken"}, []string{"true"}},
		{"https://h/mcp?api_key=${K}", nil, []string{"${K}"}},
	} {
		r := NewRedactor((&Server{URL: c.url}).Secrets(none))
		for _, h := range c.hide {
			if got := r.String(h); got != "[redacted]" {
				t.Errorf("%s: redact(%q) = %q", c.url, h, got)
			}
		}
		for _, k := range c.keep {
			if got := r.String(k); got != k {
				t.Errorf("%s: redact(%q) = %q", c.url, k, got)
			}
		}
	}
}
