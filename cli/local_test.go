package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/testkit"
	"github.com/mcpx-dev/mcpx/resolve"
	"github.com/mcpx-dev/mcpx/service"
)

func TestMergeDaemons(t *testing.T) {
	paths := config.Paths{Runtime: "/run/u/mcpx"}
	keys := []resolve.KeyInfo{
		{DaemonKey: "aaaaaaaaaaaa", State: api.DaemonRunning, Pid: 10, Manager: "direct", Configs: []string{"/p/.mcpx.json"}, Socket: "/override.sock", ConfigsExist: true},
		{DaemonKey: "bbbbbbbbbbbb", State: api.DaemonStale, Pid: 11, Configs: []string{"/q/.mcp.json"}, Socket: "/run/u/mcpx/bbbbbbbbbbbb.sock", ConfigsExist: false},
		{DaemonKey: "builtin", State: api.DaemonStopped, Socket: "/run/u/mcpx/builtin.sock", ConfigsExist: true},
	}
	states := []service.State{
		{Key: "cccccccccccc", Manager: "systemd", Service: service.ServiceFailed, LastExit: "exit-code 2", Units: []string{"mcpx@cccccccccccc.socket", "mcpx@cccccccccccc.service"}},
		{Key: "builtin", Manager: "systemd", Service: service.ServiceRunning, PID: 42},
		{Key: "bbbbbbbbbbbb", Manager: "systemd", Service: service.ServiceIdle},
	}
	got := mergeDaemons(keys, states, "systemd", paths)
	want := []struct {
		key, state, manager, socket string
		pid                         int
		exist                       bool
	}{
		{"aaaaaaaaaaaa", daemonRunning, "direct", "/override.sock", 10, true},
		{"bbbbbbbbbbbb", daemonStale, "systemd", "/run/u/mcpx/bbbbbbbbbbbb.sock", 0, false},
		{"builtin", daemonRunning, "systemd", "/run/u/mcpx/builtin.sock", 42, true},
		{"cccccccccccc", daemonFailed, "systemd", "/run/u/mcpx/cccccccccccc.sock", 0, true},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d entries: %+v", len(got), got)
	}
	for i, w := range want {
		g := got[i]
		if g.DaemonKey != w.key || g.State != w.state || g.Manager != w.manager || g.Socket != w.socket || g.Pid != w.pid || g.ConfigsExist != w.exist {
			t.Errorf("entry %d = %+v, want %+v", i, g, w)
		}
		if g.Configs == nil {
			t.Errorf("entry %d: configs is null", i)
		}
	}
	if got[3].LastExit != "exit-code 2" {
		t.Errorf("failed entry lost its last exit: %+v", got[3])
	}

	var b bytes.Buffer
	if err := renderDaemons(&b, daemonsDoc{Daemons: got}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "failed (exit-code 2)") || !strings.Contains(out, "/q/.mcp.json (gone)") || !strings.Contains(out, "(built-in)") {
		t.Errorf("rendered:\n%s", out)
	}
}

func TestServiceLine(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	since := now.Add(-(3*time.Minute + 2*time.Second + 400*time.Millisecond))
	for _, c := range []struct {
		s    statusService
		want string
	}{
		{statusService{State: service.ServiceRunning, Pid: 7, Since: &since}, "running (pid 7, up 3m2s)"},
		{statusService{State: service.ServiceRunning}, "running"},
		{statusService{State: service.ServiceFailed, LastExit: "signal KILL"}, "failed (signal KILL)"},
		{statusService{State: service.ServiceIdle}, "idle"},
		{statusService{State: service.ServiceIdle, LastExit: "exit-code 1"}, "idle (last exit: exit-code 1)"},
	} {
		if got := serviceLine(c.s, now); got != c.want {
			t.Errorf("serviceLine(%+v) = %q, want %q", c.s, got, c.want)
		}
	}
	if got := serviceLine(statusService{State: service.ServiceNotInstalled}, now); !strings.HasPrefix(got, "not installed") {
		t.Errorf("not installed: %q", got)
	}
}

func TestRenderStatusMismatchAndLive(t *testing.T) {
	d := &statusDoc{DaemonKey: "builtin", Configs: []string{}, Manager: "systemd", Units: []string{"mcpx@builtin.socket", "mcpx@builtin.service"},
		Socket: statusSocket{Path: "/r/builtin.sock", State: service.SocketListening}, Service: statusService{State: service.ServiceRunning},
		Binary: "/new/mcpx", InstalledBinary: "/old/mcpx", BinaryMismatch: true,
		Live: &api.Status{Servers: 1, Live: 1, Calls: 3, SchemaHash: "0123456789abcdef", Namespaces: []api.Namespace{{Name: "demo", Live: 1, Tools: 5, State: "cached"}}}}
	var b bytes.Buffer
	if err := renderStatus(&b, d, time.Now()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"(none: built-in default)", "mcpx@builtin.service", "/r/builtin.sock (listening)", "start /old/mcpx, not this binary (/new/mcpx)", "1 servers, 1 live, 3 calls", "demo"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestRenderResolve(t *testing.T) {
	var b bytes.Buffer
	renderResolve(&b, &api.Resolve{Dir: "/p", DaemonKey: "aaaaaaaaaaaa", Configs: []string{"/p/.mcpx.json", "/h/.config/mcpx/config.json"}, Socket: "/s", State: "stopped"})
	want := "dir         /p\n" +
		"daemonKey   aaaaaaaaaaaa\n" +
		"configs     /p/.mcpx.json\n" +
		"            /h/.config/mcpx/config.json\n" +
		"socket      /s\n" +
		"manager     -\n" +
		"state       stopped\n" +
		"schemaHash  -\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"100": 100, "2KiB": 2048, "1.5MiB": 3 << 19, "2GB": 2e9, "3M": 3 << 20, "-1": cache.NoLimit, " 7 KB ": 7000} {
		got, err := parseBytes(in)
		if err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "x", "-5", "1XB", "NaN"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q) accepted", in)
		}
	}
	if humanBytes(1536) != "1.5 KiB" || humanBytes(10) != "10 B" {
		t.Errorf("humanBytes: %s %s", humanBytes(1536), humanBytes(10))
	}
}

func TestTailFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.log")
	os.WriteFile(path, []byte("one\ntwo\nthree\nfour\n"), 0o600)
	for n, want := range map[int]string{0: "", 1: "four\n", 2: "three\nfour\n", 10: "one\ntwo\nthree\nfour\n"} {
		var b bytes.Buffer
		if err := tailFile(context.Background(), &b, path, n, false, 0); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("last %d lines = %q, want %q", n, b.String(), want)
		}
	}
	// No final newline: the partial line counts as the last line.
	os.WriteFile(path, []byte("a\nb\nc"), 0o600)
	var b bytes.Buffer
	tailFile(context.Background(), &b, path, 2, false, 0)
	if b.String() != "b\nc" {
		t.Errorf("partial last line: %q", b.String())
	}
}

// Following copies what is appended, and starts over after truncation.
func TestTailFileFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "d.log")
	os.WriteFile(path, []byte("old\n"), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	w := &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- tailFile(ctx, w, path, 1, true, 2*time.Millisecond) }()
	waitFor(t, func() bool { return w.String() == "old\n" })
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("new\n")
	f.Close()
	waitFor(t, func() bool { return w.String() == "old\nnew\n" })
	os.WriteFile(path, []byte("x\n"), 0o600) // truncate and rewrite
	waitFor(t, func() bool { return w.String() == "old\nnew\nx\n" })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

type syncBuffer = testkit.SyncBuffer

// waitFor polls cond (the test's only notion of time is "eventually").
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	testkit.Eventually(t, 60*time.Second, "the tailed output", cond)
}

func TestJSONLinesSplitsWritesIntoObjects(t *testing.T) {
	var out strings.Builder
	j := &jsonLines{w: &out}
	for _, chunk := range []string{"first li", "ne\nsecond \"quoted\"\nthi", "rd"} {
		if _, err := j.Write([]byte(chunk)); err != nil {
			t.Fatal(err)
		}
	}
	j.flush()
	want := `{"message":"first line"}` + "\n" + `{"message":"second \"quoted\""}` + "\n" + `{"message":"third"}` + "\n"
	if out.String() != want {
		t.Fatalf("got %q, want %q", out.String(), want)
	}
}

func TestSummaryKeepsTablesReadable(t *testing.T) {
	long := strings.Repeat("word ", 40)
	for _, c := range []struct{ in, want string }{
		{"Echoes back the input string", "Echoes back the input string"},
		{"Read a file. DEPRECATED: use read_text_file.", "Read a file."},
		{"\n  first line\nsecond line", "first line"},
		{"v1.2 is parsed as a version", "v1.2 is parsed as a version"},
		{long, strings.TrimRight(long[:api.SummaryMax-1], " ") + "…"},
	} {
		if got := api.Summary(c.in); got != c.want {
			t.Errorf("api.Summary(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
