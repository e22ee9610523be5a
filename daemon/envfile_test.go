package daemon

import (
	"path/filepath"
	"testing"

	"github.com/mcpx-dev/mcpx/config"
)

// The environment file is read again when a request names another
// environment than the one read last, or names none; while requests name
// the one read last, it is not even stat'ed (a change behind the clients'
// backs shows only once a request stops naming it).
func TestEnvFileTrustsTheDigestRequestsName(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.env")
	write := func(v string) map[string]string {
		t.Helper()
		env := map[string]string{"TOKEN": v}
		if _, err := config.WriteEnvFile(path, env); err != nil {
			t.Fatal(err)
		}
		return env
	}
	e := &envFile{path: path}
	want := func(v string) {
		t.Helper()
		vals, err := e.get()
		if err != nil {
			t.Fatal(err)
		}
		if vals["TOKEN"] != v {
			t.Fatalf("TOKEN = %q, want %q", vals["TOKEN"], v)
		}
	}
	one := write("one")
	e.confirm(config.EnvDigest(one)) // nothing read yet: not trusted
	want("one")
	e.confirm(config.EnvDigest(one))
	write("behind") // not through a client that says so
	want("one")
	e.confirm(config.EnvDigest(write("two")))
	want("two")
	e.confirm("") // a client that does not say: stat'ed
	write("three")
	want("three")
	_, gen, _ := e.getGen()
	e.confirm(config.EnvDigest(map[string]string{"TOKEN": "three"}))
	if _, again, _ := e.getGen(); again != gen {
		t.Errorf("generation %d → %d without a new read", gen, again)
	}
}
