package peercred

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServerAllowed(t *testing.T) {
	me := os.Getuid()
	private := t.TempDir()
	if err := os.Chmod(private, 0o700); err != nil {
		t.Fatal(err)
	}
	open := filepath.Join(private, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o755)
	link := filepath.Join(private, "link")
	if err := os.Symlink(private, link); err != nil {
		t.Fatal(err)
	}
	if me == 0 {
		// Root plays the user 1000, so that root's own listener is the
		// service manager's, not the user's.
		me = 1000
		for _, d := range []string{private, open} {
			if err := os.Lchown(d, me, me); err != nil {
				t.Fatal(err)
			}
		}
	}
	other := me + 1
	for _, tc := range []struct {
		sock string
		uid  int
		ok   bool
		why  string
	}{
		{filepath.Join(private, "s"), me, true, ""},
		{filepath.Join(open, "s"), me, true, ""}, // the user's own listener, anywhere
		{filepath.Join(private, "s"), 0, true, ""},
		{filepath.Join(open, "s"), 0, false, "mode 0755"},
		{filepath.Join(link, "s"), 0, false, "not a directory"},
		{filepath.Join(private, "missing", "s"), 0, false, "no such file"},
		{filepath.Join(private, "s"), other, false, ""},
	} {
		ok, why := ServerAllowed(tc.sock, tc.uid, me)
		if ok != tc.ok || !tc.ok && !strings.Contains(why, tc.why) {
			t.Errorf("ServerAllowed(%s, uid %d) = %v, %q; want %v, %q", tc.sock, tc.uid, ok, why, tc.ok, tc.why)
		}
	}
	// A private directory of someone else does not count for me.
	if ok, why := ServerAllowed(filepath.Join(private, "s"), 0, other); ok || !strings.Contains(why, "owned by uid") {
		t.Errorf("root in a directory of uid %d, for uid %d: %v, %q", me, other, ok, why)
	}
}
