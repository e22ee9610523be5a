package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// otherUserName is the second local user the tests act as.
const otherUserName = "mcpx-e2e-other"

// otherUser returns the uid and gid of a second local user, creating it
// with useradd when missing. It needs root (to create the user and to act
// as it with setpriv); elsewhere the test is skipped.
func otherUser(t *testing.T) (uid, gid int) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root: a second user is created with useradd and acted as with setpriv")
	}
	u, err := user.Lookup(otherUserName)
	if err != nil {
		out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", otherUserName).CombinedOutput()
		// Another test process may have created it meanwhile.
		if u, _ = user.Lookup(otherUserName); u == nil {
			t.Fatalf("useradd %s: %v\n%s", otherUserName, err, out)
		}
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid
}

// writeAs writes content to path as uid:gid (setpriv), so the file is
// really that user's.
func writeAs(t *testing.T, uid, gid int, path, content string) {
	t.Helper()
	cmd := exec.Command("setpriv", "--reuid="+strconv.Itoa(uid), "--regid="+strconv.Itoa(gid), "--clear-groups",
		"sh", "-c", `cat > "$1"`, "sh", path)
	cmd.Stdin = strings.NewReader(content)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("write %s as uid %d: %v\n%s", path, uid, err, out)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil || int(st.Uid) != uid {
		t.Fatalf("%s is not owned by uid %d: %v %+v", path, uid, err, st)
	}
}

// Untrusted means inert. Another user's file in a shared parent directory
// that disables the user's own server changes nothing (and is not even
// read); nor does the user's own untrusted Codex file with enabled = false,
// nor a group-writable (never trustable) .mcpx.json redefining it. Each is
// visible in ls; only once trusted does a file's entry apply.
func TestUntrustedFilesAreInert(t *testing.T) {
	uid, gid := otherUser(t)
	e := NewEnv(t)
	if err := os.Chmod(e.Root, 0o755); err != nil { // MkdirTemp makes it 0700
		t.Fatal(err)
	}
	shared := filepath.Join(e.Root, "shared")
	proj := filepath.Join(shared, "p")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	e.WriteUntrusted(filepath.Join(e.Home, ".config", "mcpx", "config.json"), fmt.Sprintf(`{"mcpServers": {"a": {"command": %s}}}`, jsonString(fixtureBin)))
	foreign := filepath.Join(shared, ".mcpx.json")
	writeAs(t, uid, gid, foreign, `{"mcpServers": {"a": {"mcpx": {"disabled": true}}, "theirs": {"command": "/bin/false"}}}`)

	callA := func(step string) {
		t.Helper()
		if r := e.McpxIn(proj, "call", "a.echo", "text=hi"); r.Code != 0 || r.Stdout != "hi" {
			t.Fatalf("%s: the user's own a: %s", step, r)
		}
	}
	ls := func() (map[string]api.Namespace, api.NamespacesResponse) {
		t.Helper()
		r := e.McpxIn(proj, "--json", "ls")
		var ns api.NamespacesResponse
		if err := json.Unmarshal([]byte(r.Stdout), &ns); r.Code != 0 || err != nil {
			t.Fatalf("ls: %s", r)
		}
		got := map[string]api.Namespace{}
		for _, n := range ns.Namespaces {
			got[n.Name] = n
		}
		return got, ns
	}

	// 1. Another user's file: not read, a stays, ls names the file.
	callA("under another user's file")
	got, ns := ls()
	if len(got) != 1 || got["a"].State == api.StateUntrusted {
		t.Errorf("ls under another user's file: %+v", ns)
	}
	if len(ns.Unavailable) != 1 || ns.Unavailable[0].Path != foreign || !strings.Contains(ns.Unavailable[0].Error, "owned by uid "+strconv.Itoa(uid)) {
		t.Errorf("ls --json does not name the foreign file: %+v", ns.Unavailable)
	}
	if r := e.McpxIn(proj, "ls"); !strings.Contains(r.Stderr, foreign) {
		t.Errorf("ls text does not name the foreign file: %s", r)
	}

	// 2. The user's own Codex project file, not trusted, enabled = false.
	codex := e.WriteUntrusted(filepath.Join(proj, ".codex", "config.toml"), "[mcp_servers.a]\ncommand = \"/bin/false\"\nenabled = false\n")
	callA("under an untrusted Codex file")
	got, _ = ls()
	if n := got["a (untrusted)"]; n.State != api.StateUntrusted || n.Source != codex || !strings.Contains(n.Error, "mcpx trust "+codex) {
		t.Errorf("ls: the untrusted Codex entry: %+v", n)
	}
	if r := e.McpxIn(proj, "ls"); !strings.Contains(r.Stdout, "untrusted: "+codex) || !strings.Contains(r.Stderr, codex+", which you have not trusted, defines a too") {
		t.Errorf("ls text: %s", r)
	}
	// Trusted, it applies: a is disabled here.
	if r := e.McpxIn(proj, "trust"); r.Code != 0 || strings.TrimSpace(r.Stdout) == "" || !strings.HasPrefix(r.Stdout, "trusted "+codex) {
		t.Fatalf("trust: %s", r)
	}
	if r := e.McpxIn(proj, "call", "a.echo", "text=hi"); r.Code != 2 || !strings.Contains(r.Stderr, `unknown namespace "a"`) {
		t.Errorf("a after trusting the file that disables it: %s", r)
	}
	e.MustOK("untrust", codex)

	// 3. A group-writable .mcpx.json (never trustable) redefining a.
	gw := e.WriteUntrusted(filepath.Join(proj, ".mcpx.json"), `{"mcpServers": {"a": {"command": "/bin/false"}}}`)
	if err := os.Chmod(gw, 0o664); err != nil {
		t.Fatal(err)
	}
	callA("under a group-writable file")
	got, _ = ls()
	if n := got["a (untrusted)"]; n.State != api.StateUntrusted || n.Source != gw || !strings.Contains(n.Error, "writable by group or others") {
		t.Errorf("ls: the group-writable entry: %+v", n)
	}
	if r := e.McpxIn(proj, "trust", gw); r.Code != 4 {
		t.Errorf("trust of a group-writable file: %s", r)
	}
}

// `mcpx trust` with no argument trusts this directory's project files only,
// printing each; a parent directory's file is named with the command that
// trusts it, by its path.
func TestTrustTakesThisDirectorysFiles(t *testing.T) {
	e := NewEnv(t)
	fx := jsonString(fixtureBin)
	parent := e.WriteUntrusted(filepath.Join(e.Work, ".mcpx.json"), fmt.Sprintf(`{"mcpServers": {"up": {"command": %s}}}`, fx))
	child := filepath.Join(e.Work, "child")
	here := e.WriteUntrusted(filepath.Join(child, ".mcpx.json"), fmt.Sprintf(`{"mcpServers": {"down": {"command": %s}}}`, fx))
	vs := e.WriteUntrusted(filepath.Join(child, ".vscode", "mcp.json"), fmt.Sprintf(`{"servers": {"vs": {"command": %s}}}`, fx))

	r := e.McpxIn(child, "trust")
	if r.Code != 0 {
		t.Fatal(r)
	}
	var trusted []string
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 || f[0] != "trusted" {
			t.Fatalf("trust output: %s", r)
		}
		trusted = append(trusted, f[1])
	}
	slices.Sort(trusted)
	if want := []string{here, vs}; !slices.Equal(trusted, want) {
		t.Errorf("trust in %s trusted %q, want %q", child, trusted, want)
	}
	if !strings.Contains(r.Stderr, "`mcpx trust "+parent+"`") {
		t.Errorf("trust does not name the parent's file: %s", r)
	}
	var list struct {
		Trusted []struct{ Path string } `json:"trusted"`
	}
	e.JSON(&list, "trust", "--list")
	if len(list.Trusted) != 2 {
		t.Errorf("trust --list: %+v", list)
	}
	if r := e.McpxIn(child, "call", "down.echo", "text=x"); r.Code != 0 {
		t.Errorf("this directory's server once trusted: %s", r)
	}
	if r := e.McpxIn(child, "call", "up.echo", "text=x"); r.Code != 4 {
		t.Errorf("the parent's server after `mcpx trust` in the child: %s", r)
	}
	if r := e.McpxIn(child, "trust", parent); r.Code != 0 || !strings.HasPrefix(r.Stdout, "trusted "+parent) {
		t.Fatalf("trust of the parent's file by its path: %s", r)
	}
	if r := e.McpxIn(child, "call", "up.echo", "text=x"); r.Code != 0 || r.Stdout != "x" {
		t.Errorf("the parent's server once trusted: %s", r)
	}
}
