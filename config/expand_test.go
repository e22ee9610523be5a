package config

import (
	"errors"
	"path/filepath"
	"reflect"
	"testing"
)

func TestExpand(t *testing.T) {
	root := tempRoot(t)
	src := write(t, filepath.Join(root, ".mcpx.json"), `{"mcpServers": {
		"s": {"command": "${BIN}/srv", "args": ["--token=${TOKEN}", "$HOME", "$${LITERAL}", "${input:x}", "a${open", "${MISSING_OK:-dflt}", "${env:TOKEN}"],
		      "env": {"A": "${TOKEN}", "B": "plain"}, "cwd": "sub/${SUB}"},
		"h": {"url": "https://h/${TOKEN}", "headers": {"Authorization": "Bearer ${TOKEN}"}}
	}}`)
	c, err := loadTrusted(t, src)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Vars(), []string{"BIN", "MISSING_OK", "SUB", "TOKEN", "input:x"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Vars = %q, want %q", got, want)
	}
	vars := map[string]string{"BIN": "/opt", "TOKEN": "t0k", "SUB": "d", "MISSING_OK": "", "input:x": "asked"}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	s, err := c.Servers["s"].Expand(lookup)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--token=t0k", "$HOME", "${LITERAL}", "asked", "a${open", "dflt", "t0k"}
	if s.Command != "/opt/srv" || !reflect.DeepEqual(s.Args, want) || s.Env["A"] != "t0k" || s.Env["B"] != "plain" ||
		s.Cwd != filepath.Join(root, "sub", "d") {
		t.Errorf("expanded = %+v", s)
	}
	orig := c.Servers["s"]
	if orig.Args[0] != "--token=${TOKEN}" || orig.Env["A"] != "${TOKEN}" || s.Hash() != orig.Hash() {
		t.Error("Expand changed the original or the hash")
	}
	h, err := c.Servers["h"].Expand(lookup)
	if err != nil || h.URL != "https://h/t0k" || h.Headers["Authorization"] != "Bearer t0k" {
		t.Errorf("http expanded = %+v, %v", h, err)
	}

	delete(vars, "TOKEN")
	_, err = c.Servers["h"].Expand(lookup)
	var ue *UnsetVarError
	if !errors.As(err, &ue) || ue.Server != "h" || ue.Var != "TOKEN" {
		t.Fatalf("err = %#v", err)
	}
	if got := err.Error(); got != `server "h": environment variable TOKEN is not set` {
		t.Errorf("message = %q", got)
	}
	// Set but empty is not unset.
	vars["TOKEN"] = ""
	if h, err := c.Servers["h"].Expand(lookup); err != nil || h.URL != "https://h/" {
		t.Errorf("empty value: %+v, %v", h, err)
	}
}
