package daemon

import (
	"path/filepath"
	"testing"

	"github.com/mcpx-dev/mcpx/config"
)

// The environment file is read again for a request that names another
// environment than the one read last, or names none; for a request that
// names the one read last it is not even stat'ed. What one request names
// decides for that request only: another request naming the old values
// in between does not make a newer file go unread (found by review).
func TestEnvFileTrustsTheDigestEachRequestNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k.env")
	write := func(v string) string {
		t.Helper()
		env := map[string]string{"TOKEN": v}
		if _, err := config.WriteEnvFile(path, env); err != nil {
			t.Fatal(err)
		}
		return config.EnvDigest(env)
	}
	e := &envFile{path: path}
	want := func(digest, v string) {
		t.Helper()
		vals, _, err := e.getGen(digest)
		if err != nil {
			t.Fatal(err)
		}
		if vals["TOKEN"] != v {
			t.Fatalf("naming %q: TOKEN = %q, want %q", digest, vals["TOKEN"], v)
		}
	}
	x := write("x")
	want(x, "x") // nothing read yet: read
	write("behind")
	want(x, "x") // names what was read last: trusted, not stat'ed
	want("", "behind")
	x = write("x")
	want(x, "x")
	// A, whose CLI wrote x, and B, whose CLI wrote y since: B's call
	// reads y whatever A's requests name around it.
	y := write("y")
	want(x, "x") // A's request: its own values, as it named them
	want(y, "y")
	want(x, "y") // the file was read again: A now gets the newer y
	_, gen, _ := e.getGen(y)
	if _, again, _ := e.getGen(y); again != gen {
		t.Errorf("generation %d → %d without a new read", gen, again)
	}
}
