package e2e

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/peercred"
)

// otherUID plays another local user (nobody).
const otherUID = 65534

// needRootAndSetpriv skips unless the test can act as other uids.
func needRootAndSetpriv(t *testing.T) string {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to act as another uid")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("needs setpriv(1)")
	}
	return setpriv
}

// asUID runs argv as uid (and the same gid) through setpriv.
func asUID(t *testing.T, setpriv string, uid int, argv ...string) {
	t.Helper()
	id := strconv.Itoa(uid)
	out, err := exec.Command(setpriv, append([]string{"--reuid=" + id, "--regid=" + id, "--clear-groups", "--"}, argv...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("as uid %d: %v: %v\n%s", uid, argv, err, out)
	}
}

// environWith is e's environment with drop removed and set added.
func environWith(e *Env, drop []string, set map[string]string) []string {
	var env []string
	for _, kv := range e.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, override := set[k]; !slices.Contains(drop, k) && !override {
			env = append(env, kv)
		}
	}
	for k, v := range set {
		env = append(env, k+"="+v)
	}
	return env
}

// runAs runs mcpx in e.Work with env, as uid when uid >= 0 (through setpriv).
func runAs(t *testing.T, e *Env, env []string, setpriv string, uid int, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	argv := append([]string{mcpxBin}, args...)
	if uid >= 0 {
		id := strconv.Itoa(uid)
		argv = append([]string{setpriv, "--reuid=" + id, "--regid=" + id, "--clear-groups", "--"}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = e.Work, env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := Result{Args: args, Stdout: out.String(), Stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.Code = ee.ExitCode()
	} else if err != nil {
		r.Code, r.Stderr = -1, r.Stderr+"\n(run error: "+err.Error()+")"
	}
	return r
}

// #18 row 10: without XDG_RUNTIME_DIR, another user creating the
// predictable runtime directory ($TMPDIR/mcpx-<uid>, mode 0777) before the
// victim, or the short socket directory /tmp/mcpx-<uid>-<hash> a long
// runtime path falls back to, made every command exit 3. Now the victim's
// commands work, in a private directory, and say so once.
func TestSquattedFallbackDirectories(t *testing.T) {
	setpriv := needRootAndSetpriv(t)
	for _, tc := range []struct {
		name string
		// victim returns the victim's environment and the directory the
		// other user takes first.
		victim func(e *Env) (env []string, taken string)
	}{
		{"runtime directory", func(e *Env) ([]string, string) {
			tmp := filepath.Join(e.Root, "tmp")
			if err := os.Mkdir(tmp, 0o777); err != nil {
				t.Fatal(err)
			}
			os.Chmod(tmp, 0o1777)
			env := environWith(e, []string{"XDG_RUNTIME_DIR"}, map[string]string{"TMPDIR": tmp})
			return env, filepath.Join(tmp, "mcpx-"+strconv.Itoa(os.Getuid()))
		}},
		{"short socket directory", func(e *Env) ([]string, string) {
			long := filepath.Join(e.Root, strings.Repeat("r", 100))
			if err := os.Mkdir(long, 0o700); err != nil {
				t.Fatal(err)
			}
			env := environWith(e, []string{"XDG_RUNTIME_DIR"}, map[string]string{"XDG_RUNTIME_DIR": long})
			taken := filepath.Dir((config.Paths{Runtime: filepath.Join(long, "mcpx")}).Socket(config.BuiltinKey))
			if !strings.HasPrefix(taken, "/tmp/mcpx-") {
				t.Fatalf("short socket directory %s", taken)
			}
			t.Cleanup(func() { os.RemoveAll(taken) })
			return env, taken
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEnv(t)
			if err := os.Chmod(e.Root, 0o711); err != nil { // the other user reaches tmp/
				t.Fatal(err)
			}
			env, taken := tc.victim(e)
			asUID(t, setpriv, otherUID, "mkdir", "-m", "777", taken)

			checkFallbackNote(t, e, env, taken)
			checkPrivateSocketDir(t, e, env, taken)
			// Once: later commands use the same directory and say nothing.
			for range 2 {
				if r := runAs(t, e, env, "", -1, "call", "demo.echo", "text=again"); r.Code != 0 || r.Stdout != "again" || strings.Contains(r.Stderr, taken) {
					t.Fatalf("a later call:\n%s", r)
				}
			}
			// The other user's directory is left as they made it, and
			// nothing of the victim's is in it.
			if ents, err := os.ReadDir(taken); err != nil || len(ents) != 0 {
				t.Fatalf("%s holds %v (%v)", taken, ents, err)
			}
			if r := runAs(t, e, env, "", -1, "stop"); r.Code != 0 {
				t.Fatalf("stop:\n%s", r)
			}
		})
	}
}

// checkFallbackNote: with taken held by another user, the victim's first
// call works and says so in one note naming the directory and its owner.
func checkFallbackNote(t *testing.T, e *Env, env []string, taken string) {
	t.Helper()
	r := runAs(t, e, env, "", -1, "call", "demo.echo", "text=hi")
	if r.Code != 0 || r.Stdout != "hi" {
		t.Fatalf("the victim's call with %s taken:\n%s", taken, r)
	}
	notes := 0
	for _, line := range strings.Split(r.Stderr, "\n") {
		if strings.Contains(line, taken+" ") {
			notes++
		}
	}
	if notes != 1 || !strings.Contains(r.Stderr, "uid "+strconv.Itoa(otherUID)) {
		t.Fatalf("want one note naming %s and uid %d:\n%s", taken, otherUID, r)
	}
}

// checkPrivateSocketDir: the victim's socket is in a directory of its own
// beside taken, 0700 and the victim's.
func checkPrivateSocketDir(t *testing.T, e *Env, env []string, taken string) {
	t.Helper()
	var st struct {
		Socket struct{ Path string } `json:"socket"`
	}
	r := runAs(t, e, env, "", -1, "--json", "status")
	if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &st) != nil {
		t.Fatalf("status:\n%s", r)
	}
	sockDir := filepath.Dir(st.Socket.Path)
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	if sockDir == taken || !strings.HasPrefix(sockDir, taken+"-") {
		t.Fatalf("socket %s, want a private directory beside %s", st.Socket.Path, taken)
	}
	if fi, err := os.Lstat(sockDir); err != nil || fi.Mode().Perm() != 0o700 || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Getuid()) {
		t.Fatalf("%s: %v %v", sockDir, fi, err)
	}
}

// #20 D1: under socket activation the process that listens on the user's
// socket is the service manager: launchd (root) binds an agent's
// SockPathName, hands the listener to the daemon it starts as the user and
// gives the file to the user. The peer credentials the client sees are
// root's. Here root plays launchd for the user nobody: the client must
// accept it, since the socket is in nobody's own 0700 directory.
func TestRootHeldSocketInUsersPrivateDir(t *testing.T) {
	setpriv := needRootAndSetpriv(t)
	e := NewEnv(t)
	if err := os.Chmod(e.Root, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(mcpxBin), 0o755); err != nil { // nobody runs the binaries
		t.Fatal(err)
	}
	sockDir := filepath.Join(e.Run, "mcpx")
	if err := os.Mkdir(sockDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{e.Home, e.Run, sockDir, e.Work} {
		if err := os.Chown(d, otherUID, otherUID); err != nil {
			t.Fatal(err)
		}
	}
	sock := filepath.Join(sockDir, string(config.BuiltinKey)+".sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := os.Chown(sock, otherUID, otherUID); err != nil { // as launchd does
		t.Fatal(err)
	}
	if err := os.Chmod(sock, 0o600); err != nil {
		t.Fatal(err)
	}
	lf, err := ln.(*net.UnixListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()

	// The daemon, started as nobody with root's listener.
	daemon := exec.Command(mcpxdBin, "daemon", "--key", string(config.BuiltinKey))
	daemon.Env = append(e.Environ(), "LISTEN_FDS=1", "LISTEN_FDNAMES=mcpx", api.EnvListenInherited+"=1")
	daemon.ExtraFiles = []*os.File{lf}
	daemon.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Credential: &syscall.Credential{Uid: otherUID, Gid: otherUID}}
	logf, err := os.Create(filepath.Join(e.Root, "daemon.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	daemon.Stdout, daemon.Stderr = logf, logf
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { daemon.Process.Kill(); daemon.Wait() }()

	r := runAs(t, e, e.Environ(), setpriv, otherUID, "call", "demo.echo", "text=through launchd")
	if r.Code != 0 || r.Stdout != "through launchd" {
		log, _ := os.ReadFile(logf.Name())
		t.Fatalf("the user's call through a root-held socket:\n%s\ndaemon log:\n%s", r, log)
	}
	// What the client saw: the listener's credentials are root's.
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if uid, err := peercred.UID(c); err != nil || uid != 0 {
		t.Fatalf("the listener's credentials say uid %d (%v); the test wants root's", uid, err)
	}
}

// #20 D5: the shell's MCPX_TOKEN_STORE reaches a daemon that systemd
// starts with the user manager's environment.
func TestSystemdDaemonUsesTheShellsTokenStore(t *testing.T) {
	e, m := newSystemdEnv(t)
	if m.Getenv(config.EnvTokenStore) != "" {
		t.Fatalf("the user manager already has %s", config.EnvTokenStore)
	}
	e.Set(config.EnvTokenStore, "keyring")
	var auth api.AuthResponse
	e.JSON(&auth, "auth")
	if auth.Store != "keyring" {
		t.Fatalf("the daemon keeps tokens in %q, want the keyring the shell chose", auth.Store)
	}
	var st statusDoc
	e.JSON(&st, "status")
	if st.Manager != "systemd" || st.Service.State != "running" {
		t.Fatalf("not served by systemd: %+v", st)
	}
}
