package config

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// nobody is the uid that plays the other user.
const nobody = 65534

// asOther makes path belong to another user, as if that user had made
// it (only root can give files away; the test is skipped otherwise).
func asOther(t *testing.T, path string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to give a directory to another uid")
	}
	if err := os.Lchown(path, nobody, nobody); err != nil {
		t.Fatal(err)
	}
}

func TestTempBase(t *testing.T) {
	confstr := func() (string, error) { return "/var/folders/7x/k2_0p9xs3bz0000gn/T/", nil }
	broken := func() (string, error) { return "", errors.New("no libSystem") }
	for _, tc := range []struct {
		goos, tmpdir string
		userTemp     func() (string, error)
		want         string
	}{
		// macOS: the per-user directory whatever TMPDIR says (ssh sets
		// none, a GUI shell the same one confstr answers).
		{"darwin", "", confstr, "/var/folders/7x/k2_0p9xs3bz0000gn/T"},
		{"darwin", "/tmp/elsewhere", confstr, "/var/folders/7x/k2_0p9xs3bz0000gn/T"},
		{"darwin", "/tmp/elsewhere", broken, "/tmp/elsewhere"},
		{"darwin", "", broken, "/tmp"},
		{"linux", "/scratch/", confstr, "/scratch"},
		{"linux", "relative", confstr, "/tmp"},
		{"linux", "", broken, "/tmp"},
	} {
		got := tempBase(tc.goos, env(map[string]string{"TMPDIR": tc.tmpdir}), tc.userTemp)
		if got != tc.want {
			t.Errorf("tempBase(%s, TMPDIR=%q) = %q, want %q", tc.goos, tc.tmpdir, got, tc.want)
		}
	}
}

func TestUserTempFromConfstr(t *testing.T) {
	buf := make([]byte, 64)
	n := copy(buf, "/var/folders/7x/k2/T/\x00")
	if got, err := userTempFromConfstr(buf, uintptr(n)); err != nil || got != "/var/folders/7x/k2/T/" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := userTempFromConfstr(buf, 0); err == nil {
		t.Error("confstr's 0 (error) accepted")
	}
	if _, err := userTempFromConfstr(buf, 65); err == nil {
		t.Error("a value longer than the buffer accepted")
	}
}

// squatEnv is an environment without XDG_RUNTIME_DIR whose TMPDIR is a
// fresh sticky, world-writable directory, like /tmp.
func squatEnv(t *testing.T) (Getenv, string, string) {
	t.Helper()
	root := tempRoot(t)
	tmp := filepath.Join(root, "tmp")
	if err := os.Mkdir(tmp, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o1777); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(root, "state")
	return env(map[string]string{"HOME": filepath.Join(root, "home"), "TMPDIR": tmp, "XDG_STATE_HOME": state}), tmp, filepath.Join(state, "mcpx")
}

func TestSquattedRuntimeDirFallsBack(t *testing.T) {
	getenv, tmp, state := squatEnv(t)
	taken := filepath.Join(tmp, "mcpx-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(taken, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(taken, 0o777)
	asOther(t, taken)

	p, note, err := ResolvePaths(getenv)
	if err != nil {
		t.Fatalf("ResolvePaths with %s taken: %v", taken, err)
	}
	alt := p.Runtime
	if filepath.Dir(alt) != tmp || !strings.HasPrefix(filepath.Base(alt), filepath.Base(taken)+"-") {
		t.Fatalf("runtime %s, want a private directory beside %s", alt, taken)
	}
	if err := checkPrivateDir(alt); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{taken, "uid 65534", alt, "docs/security.md"} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q does not say %q", note, want)
		}
	}
	if rec, err := os.ReadFile(fallbackRecord(state, taken)); err != nil || strings.TrimSpace(string(rec)) != alt {
		t.Fatalf("record = %q, %v", rec, err)
	}

	// Every later process finds the same directory, and says nothing.
	for range 2 {
		p2, note, err := ResolvePaths(getenv)
		if err != nil || p2.Runtime != alt || note != "" {
			t.Fatalf("again: %s, %q, %v; want %s without a note", p2.Runtime, note, err, alt)
		}
	}
	if err := p.EnsureRuntime(); err != nil {
		t.Fatal(err)
	}

	// The recorded directory gone (a temp cleaner) and its known name
	// taken by the other user: a new one, never the known name.
	if err := os.Remove(alt); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(alt, 0o777); err != nil {
		t.Fatal(err)
	}
	asOther(t, alt)
	p3, note, err := ResolvePaths(getenv)
	if err != nil || p3.Runtime == alt || p3.Runtime == taken || note == "" || checkPrivateDir(p3.Runtime) != nil {
		t.Fatalf("after the fallback was taken: %s, %q, %v", p3.Runtime, note, err)
	}
}

func TestSquattingSymlinkFallsBack(t *testing.T) {
	getenv, tmp, _ := squatEnv(t)
	target := filepath.Join(tmp, "target")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	taken := filepath.Join(tmp, "mcpx-"+strconv.Itoa(os.Getuid()))
	if err := os.Symlink(target, taken); err != nil {
		t.Fatal(err)
	}
	asOther(t, taken)
	p, note, err := ResolvePaths(getenv)
	if err != nil || p.Runtime == taken || p.Runtime == target || note == "" {
		t.Fatalf("symlink squat: %s, %q, %v", p.Runtime, note, err)
	}
}

func TestOwnLooseRuntimeDirIsAnError(t *testing.T) {
	// Nobody else can have loosened our own directory: that is the
	// user's to fix, not a reason to move.
	getenv, tmp, _ := squatEnv(t)
	own := filepath.Join(tmp, "mcpx-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(own, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(own, 0o755)
	if _, _, err := ResolvePaths(getenv); !errors.Is(err, ErrUnsafeDir) {
		t.Fatalf("err = %v, want ErrUnsafeDir", err)
	}
}

func TestSquattedShortSocketDirFallsBack(t *testing.T) {
	getenv, _, _ := squatEnv(t)
	long := filepath.Join(tempRoot(t), strings.Repeat("r", 90))
	if err := os.Mkdir(long, 0o700); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"XDG_RUNTIME_DIR": long}
	both := func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return getenv(k)
	}
	short := (Paths{Runtime: filepath.Join(long, "mcpx")}).shortSocketDir()
	if err := os.Mkdir(short, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(short) })
	os.Chmod(short, 0o777)
	asOther(t, short)

	p, note, err := ResolvePaths(both)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(p.Sockets) })
	sock := p.Socket("0123456789ab")
	if p.Sockets == "" || p.Sockets == short || filepath.Dir(sock) != p.Sockets || len(sock) > maxSocketPath || note == "" {
		t.Fatalf("sockets %q (socket %s), note %q; want a private short directory", p.Sockets, sock, note)
	}
	if err := p.EnsureRuntime(); err != nil {
		t.Fatal(err)
	}
	if p2, note, err := ResolvePaths(both); err != nil || p2.Sockets != p.Sockets || note != "" {
		t.Fatalf("again: %+v, %q, %v", p2, note, err)
	}
}

// #20 D10: on macOS a shell with TMPDIR (Terminal) and one without (ssh)
// find the same sockets, and the agent's socket path fits sun_path.
func TestDarwinSocketDoesNotDependOnTMPDIR(t *testing.T) {
	root, err := os.MkdirTemp("", "d") // short: the socket must not need the short directory
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	// The shape of confstr(_CS_DARWIN_USER_TEMP_DIR): the user's own
	// directory, with a trailing slash.
	userT := filepath.Join(root, "var", "folders", "7x", "k2_0p9xs", "T")
	if err := os.MkdirAll(userT, 0o700); err != nil {
		t.Fatal(err)
	}
	confstr := func() (string, error) { return userT + "/", nil }
	var sockets []string
	for _, tmpdir := range []string{"", userT + "/", filepath.Join(root, "elsewhere")} {
		p, note, err := resolvePaths(env(map[string]string{"HOME": "/Users/ada", "TMPDIR": tmpdir}), "darwin", confstr)
		if err != nil || note != "" {
			t.Fatalf("TMPDIR=%q: %v %q", tmpdir, err, note)
		}
		sockets = append(sockets, p.Socket("0123456789ab"))
	}
	want := filepath.Join(userT, "mcpx-"+strconv.Itoa(os.Getuid()), "0123456789ab.sock")
	for i, s := range sockets {
		if s != want {
			t.Errorf("socket %d = %s, want %s for every TMPDIR", i, s, want)
		}
	}
	// The real directory is /var/folders/xx/<22 chars>/T/: its sockets
	// stay far below the 104 bytes of macOS's sun_path.
	real := Paths{Runtime: "/var/folders/7x/k2_0p9xs3bz0000gn6zb1g2xq80000gn/T/mcpx-4294967294"}
	if s := real.Socket("0123456789ab"); filepath.Dir(s) != real.Runtime || len(s) >= 104 {
		t.Errorf("socket %s (%d bytes)", s, len(s))
	}
}
