package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/internal/systemdtest"
	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// benchEnabled gates TestPerformance: scripts/bench sets MCPX_BENCH=1.
func benchEnabled() bool { return os.Getenv("MCPX_BENCH") == "1" }

// TestPerformance measures every row of issue #22's table in one run, each
// against its baseline measured in the same run, and prints a markdown
// table with the commands. Timings are reported, never asserted.
//
// The warm rows are interleaved: every round runs each command once, in a
// new (seeded) order, so a burst of load on the shared machine hits all of
// them alike. A warm command's baseline is the socket floor
// (scripts/floor): a static Go program that sends the very request mcpx
// sends (captured from mcpx itself) over the same socket to the same
// daemon, and prints the answer's body.
func TestPerformance(t *testing.T) {
	if !benchEnabled() {
		t.Skip("set MCPX_BENCH=1 (scripts/bench) to measure")
	}
	n := 30
	if s := os.Getenv("MCPX_BENCH_N"); s != "" {
		fmt.Sscan(s, &n)
	}
	tab := &benchTable{byName: map[string]time.Duration{}}
	if os.Getenv("MCPX_BENCH_ONLY") == "cold" {
		coldRows(t, tab, n, rand.New(rand.NewPCG(22, 22)))
		fmt.Printf("\nmcpx cold first calls (issue #22): medians of %d interleaved rounds\n\n%s\n", n/3+1, tab.String(n))
		return
	}
	trivial := buildTrivial(t)
	floor := buildFloor(t)
	everything, haveEverything := npmBinIfInstalled("mcp-server-everything")

	// The servers of the 2-, 50- and 500-server configs: two live ones
	// (the demo server, and server-everything when installed, else a
	// second demo), then servers that are configured but never started.
	live := map[string]any{"demo": map[string]any{"command": mcpxdBin, "args": []string{"demo-server"}}}
	second := "demo2"
	if haveEverything {
		second = "everything"
		live[second] = map[string]any{"command": everything}
	} else {
		live[second] = map[string]any{"command": mcpxdBin, "args": []string{"demo-server"}}
	}
	envOf := func(servers int) *Env {
		e := NewEnv(t)
		all := map[string]any{}
		for k, v := range live {
			all[k] = v
		}
		for i := len(all); i < servers; i++ {
			all[fmt.Sprintf("idle%03d", i)] = map[string]any{"command": fixtureBin, "env": map[string]string{"FIXTURE_NAME": fmt.Sprint(i)}}
		}
		b, _ := json.Marshal(map[string]any{"mcpServers": all})
		e.WriteUntrusted(filepath.Join(e.Home, ".config", "mcpx", "config.json"), string(b))
		e.MustOK("call", "demo.echo", "text=warm")
		e.MustOK("refresh", "demo")
		e.MustOK("refresh", second)
		return e
	}
	e2, e50, e500 := envOf(2), envOf(50), envOf(500)
	secondEcho := []string{"call", second + ".echo", "message=hi"}
	if !haveEverything {
		secondEcho = []string{"call", second + ".echo", "text=hi"}
	}
	sock := socketOf(t, e2)
	// Let the configs and records settle (config snapshots believe a stamp
	// only 2 s after its last change), then warm every path up.
	time.Sleep(2500 * time.Millisecond)

	type warmRow struct {
		name, cmd string
		run       func()
	}
	var warm []warmRow
	mcpxRow := func(name string, e *Env, args ...string) {
		warm = append(warm, warmRow{name, "mcpx " + strings.Join(args, " "), func() {
			if r := e.Mcpx(args...); r.Code != 0 {
				t.Fatalf("%s", r)
			}
		}})
	}
	floorRow := func(name string, args ...string) {
		req := captureRequest(t, e2, args...)
		warm = append(warm, warmRow{name, "floor SOCKET '<the request of mcpx " + strings.Join(args, " ") + ">'", func() {
			if r := e2.Exec(floor, e2.Work, sock, req); r.Code != 0 {
				t.Fatalf("floor for mcpx %s: %s", strings.Join(args, " "), r)
			}
		}})
	}
	warm = append(warm, warmRow{"hello", "a Go program that does nothing", func() {
		if r := e2.Exec(trivial, e2.Work); r.Code != 0 {
			t.Fatalf("%s", r)
		}
	}})
	mcpxRow("version", e2, "version")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"call demo", []string{"call", "demo.echo", "text=hi"}},
		{"call " + second, secondEcho},
		{"ls", []string{"ls"}},
		{"ls NS", []string{"ls", "demo"}},
		{"schema", []string{"schema", "demo.echo"}},
		{"search", []string{"search", "echo"}},
	} {
		floorRow("floor: "+c.name, c.args...)
		mcpxRow(c.name, e2, c.args...)
	}
	for _, e := range []struct {
		servers int
		env     *Env
	}{{50, e50}, {500, e500}} {
		mcpxRow(fmt.Sprintf("call demo, %d servers", e.servers), e.env, "call", "demo.echo", "text=hi")
		mcpxRow(fmt.Sprintf("ls, %d servers", e.servers), e.env, "ls")
		mcpxRow(fmt.Sprintf("search, %d servers", e.servers), e.env, "search", "echo")
	}
	for _, w := range warm { // warm up each path once more
		w.run()
	}
	ds := make([][]time.Duration, len(warm))
	shuffle := rand.New(rand.NewPCG(22, 22)) // the same orders in every run
	for range n {
		for _, i := range shuffle.Perm(len(warm)) {
			start := time.Now()
			warm[i].run()
			ds[i] = append(ds[i], time.Since(start))
		}
	}
	for i, w := range warm {
		tab.byName[w.name] = medianOf(ds[i])
		tab.cmds = append(tab.cmds, [2]string{w.name, w.cmd})
	}
	// Instructions (callgrind), where valgrind is installed: a count
	// that the machine's load does not move, for the warm paths and
	// their floors.
	if _, err := exec.LookPath("valgrind"); err == nil {
		for _, w := range warm {
			if strings.Contains(w.name, "servers") {
				continue
			}
			if n, err := instructionsOf(w.run); err == nil {
				tab.instr = append(tab.instr, instrRow{w.name, w.cmd, n})
			} else {
				t.Logf("callgrind %s: %v", w.name, err)
			}
		}
	}
	tab.ratio("`mcpx version`", "version", "hello", "")
	tab.ratio("warm `call demo.echo`", "call demo", "floor: call demo", "≤ 1.25×")
	tab.ratio("warm `call "+second+".echo`", "call "+second, "floor: call "+second, "≤ 1.25×")
	for _, c := range []string{"ls", "ls NS", "schema", "search"} {
		tab.ratio("warm `"+c+"`", c, "floor: "+c, "≤ 1.3×")
	}
	for _, c := range []string{"call demo", "ls", "search"} {
		tab.ratio(fmt.Sprintf("50 servers vs 2: `%s`", c), c+", 50 servers", c, "≤ 1.05×")
		tab.ratio(fmt.Sprintf("500 servers vs 2: `%s`", c), c+", 500 servers", c, "≤ 1.2×")
	}

	cold := coldRows(t, tab, n, shuffle)

	// Throughput: concurrent keep-alive clients through the daemon versus
	// one in-process mcp-go client calling the same server, and the
	// floor: the same load generator through scripts/relayd, a zero-work
	// daemon in front of its own warm server (throughputRows).
	var st statusDoc
	e2.JSON(&st, "status")
	relayd := buildScript(t, "relayd")
	targets := []throughputTarget{{"demo", `{"text":"x"}`, map[string]any{"text": "x"}, []string{mcpxdBin, "demo-server"}}}
	if haveEverything {
		targets = append(targets, throughputTarget{"everything", `{"message":"x"}`, map[string]any{"message": "x"}, []string{everything, "stdio"}})
	}
	for _, tg := range targets {
		throughputRows(t, tab, shuffle, tg, sock, st.Service.PID, relayd)
	}
	tab.note("daemon PSS, idle (demo server warm)", "Pss of /proc/PID/smaps_rollup", pssOf(t, cold), "≤ 6 MiB")

	out := tab.String(n)
	fmt.Printf("\nmcpx performance (issue #22): medians of %d interleaved rounds (cold rows: %d)\n\n%s\n", n, n/3+1, out)
	if path := os.Getenv("MCPX_BENCH_OUT"); path != "" {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// benchTable collects the rows of the table and the medians they are
// computed from.
type benchTable struct {
	byName map[string]time.Duration
	cmds   [][2]string // measurement name, what it runs
	rows   [][4]string // path, measured, ratio, target
	instr  []instrRow
}

// instrRow is the instruction count of one warm measurement.
type instrRow struct {
	name, cmd string
	n         int64
}

// benchValgrind, when set, is the command prefix Env.Exec runs under
// (instructionsOf).
var benchValgrind []string

// instructionsOf runs one warm measurement under callgrind and returns the
// instructions the process executed. Go's asynchronous preemption signals
// are off (GODEBUG=asyncpreemptoff=1): callgrind cannot follow them.
func instructionsOf(run func()) (int64, error) {
	out, err := os.CreateTemp("", "callgrind-*.log")
	if err != nil {
		return 0, err
	}
	defer os.Remove(out.Name())
	out.Close()
	benchValgrind = []string{"valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "--log-file=" + out.Name()}
	run()
	benchValgrind = nil
	b, err := os.ReadFile(out.Name())
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if _, after, ok := strings.Cut(line, "Collected : "); ok {
			var n int64
			if _, err := fmt.Sscan(strings.TrimSpace(after), &n); err == nil {
				return n, nil
			}
		}
	}
	return 0, fmt.Errorf("no count in the callgrind log:\n%s", b)
}

// ratio adds a row: name's median against base's, measured in the same run.
func (b *benchTable) ratio(path, name, base, target string) {
	d, bd := b.byName[name], b.byName[base]
	b.rows = append(b.rows, [4]string{path, fmt.Sprintf("%s vs %s", d.Round(10*time.Microsecond), bd.Round(10*time.Microsecond)),
		fmt.Sprintf("**%.2f×**", float64(d)/float64(bd)), target})
}

// note adds a row that is not a ratio of durations.
func (b *benchTable) note(path, measured, value, target string) {
	b.rows = append(b.rows, [4]string{path, measured, value, target})
}

func (b *benchTable) String(n int) string {
	var s strings.Builder
	s.WriteString("| path | measured | ratio | target |\n| --- | --- | --- | --- |\n")
	for _, r := range b.rows {
		fmt.Fprintf(&s, "| %s | %s | %s | %s |\n", r[0], r[1], r[2], r[3])
	}
	s.WriteString("\n| measurement | runs | median |\n| --- | --- | ---: |\n")
	for _, c := range b.cmds {
		fmt.Fprintf(&s, "| %s | %s | %s |\n", c[0], c[1], b.byName[c[0]].Round(10*time.Microsecond))
	}
	if len(b.instr) > 0 {
		count := map[string]int64{}
		for _, r := range b.instr {
			count[r.name] = r.n
		}
		s.WriteString("\n| measurement | instructions (callgrind) | ratio |\n| --- | ---: | --- |\n")
		for _, r := range b.instr {
			ratio := ""
			if f := count["floor: "+r.name]; f > 0 {
				ratio = fmt.Sprintf("%.2f× its floor", float64(r.n)/float64(f))
			} else if r.name == "version" && count["hello"] > 0 {
				ratio = fmt.Sprintf("%.2f× hello", float64(r.n)/float64(count["hello"]))
			}
			fmt.Fprintf(&s, "| %s | %d | %s |\n", r.name, r.n, ratio)
		}
	}
	return s.String()
}

// captureRequest returns the bytes `mcpx args…` sends to its daemon in e:
// it runs mcpx against a socket of the bench's own (MCPX_SOCKET), reads the
// request and answers 503.
func captureRequest(t *testing.T, e *Env, args ...string) string {
	t.Helper()
	path := filepath.Join(e.Root, "capture.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan string, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			got <- ""
			return
		}
		defer conn.Close()
		r := bufio.NewReader(conn)
		var head strings.Builder
		length := 0
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				got <- ""
				return
			}
			head.WriteString(line)
			if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && strings.EqualFold(k, "content-length") {
				fmt.Sscan(strings.TrimSpace(v), &length)
			}
			if line == "\r\n" {
				break
			}
		}
		body := make([]byte, length)
		if _, err := io.ReadFull(r, body); err != nil {
			got <- ""
			return
		}
		io.WriteString(conn, "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		got <- head.String() + string(body)
	}()
	e.Set("MCPX_SOCKET", path)
	e.Mcpx(args...)
	delete(e.extra, "MCPX_SOCKET")
	req := <-got
	if req == "" {
		t.Fatalf("mcpx %s sent no request", strings.Join(args, " "))
	}
	return req
}

// buildFloor builds scripts/floor the way mcpx is built.
func buildFloor(t *testing.T) string { return buildScript(t, "floor") }

// stopDirect stops e's daemon (direct manager) and waits until it has
// exited.
func stopDirect(t *testing.T, e *Env) {
	e.MustOK("stop")
	testkit.Eventually(t, 60*time.Second, "daemon exit", func() bool {
		for _, pid := range e.Marked() {
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); strings.Contains(string(b), "daemon\x00--key") {
				return false
			}
		}
		return true
	})
}

// pssOf reads the proportional set size of e's daemon once it is idle
// (it gives memory back after a second without requests, daemon/trim.go).
func pssOf(t *testing.T, e *Env) string {
	e.MustOK("call", "demo.echo", "text=x")
	time.Sleep(2 * time.Second)
	var st statusDoc
	e.JSON(&st, "status")
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", st.Service.PID))
	if err != nil {
		return "unknown: " + err.Error()
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Pss:"); ok {
			var kb float64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return fmt.Sprintf("**%.1f MiB**", kb/1024)
		}
	}
	return "unknown"
}

// socketOf is the socket of e's running daemon (from `status --json`).
func socketOf(t *testing.T, e *Env) string {
	var st struct {
		Socket struct {
			Path string `json:"path"`
		} `json:"socket"`
	}
	e.JSON(&st, "status")
	return st.Socket.Path
}

// daemonClients are keep-alive HTTP clients per socket, shared by the
// throughput workers.
var daemonClients sync.Map

func daemonClient(sock string) *http.Client {
	if c, ok := daemonClients.Load(sock); ok {
		return c.(*http.Client)
	}
	c := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
		MaxIdleConnsPerHost: 64,
	}}
	daemonClients.Store(sock, c)
	return c
}

func daemonCall(sock, ns, tool, args string) error {
	body := fmt.Sprintf(`{"namespace":%q,"tool":%q,"arguments":%s}`, ns, tool, args)
	resp, err := daemonClient(sock).Post("http://mcpx/v1/call", "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("call: %s", resp.Status)
	}
	return nil
}

// throughput runs f from c goroutines for d and returns completed calls per
// second.
func throughput(c int, d time.Duration, f func() error) float64 {
	var done atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if f() == nil {
					done.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return float64(done.Load()) / d.Seconds()
}

// inProcessClient starts the server argv under one in-process mcp-go
// client and returns a call of echo with args on it (safe from many
// goroutines), and how to close it.
func inProcessClient(t *testing.T, argv []string, args map[string]any) (call func() error, closeIt func()) {
	ctx, cancel := context.WithCancel(context.Background())
	cl, err := client.NewStdioMCPClient(argv[0], nil, argv[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	if _, err := cl.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	return func() error {
		req := mcp.CallToolRequest{}
		req.Params.Name = "echo"
		req.Params.Arguments = args
		_, err := cl.CallTool(ctx, req)
		return err
	}, func() { cancel(); cl.Close() }
}

// npmBinIfInstalled is npmBin without failing when tests/npm is not set up.
func npmBinIfInstalled(name string) (string, bool) {
	p := filepath.Join(repoRoot, "tests", "npm", "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		return "", false
	}
	return p, true
}

func medianOf(ds []time.Duration) time.Duration {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func mustRun(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
}

// buildTrivial builds a Go program that does nothing: the floor for any Go
// CLI's process start on this machine.
func buildTrivial(t *testing.T) string {
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "trivial")
	cmd := exec.Command("go", "build", "-o", bin, src)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GO111MODULE=off")
	mustRun(t, cmd)
	return bin
}

// oneShotCall is what a tool without a daemon does for every call: spawn the
// server, initialize, call echo, stop it.
func oneShotCall(t *testing.T, command, arg string, args map[string]any) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.NewStdioMCPClient(command, nil, arg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "echo"
	req.Params.Arguments = args
	if _, err := c.CallTool(ctx, req); err != nil {
		t.Fatal(err)
	}
}

// coldRows measures the cold first calls, interleaved: each round times a
// one-shot mcp-go client (spawn the demo server, initialize, call echo),
// the first call after `mcpx stop` under the direct manager, and under a
// hermetic systemd user manager the first call after the service was
// stopped (the socket unit stays). It returns the direct manager's
// environment, its daemon warm.
func coldRows(t *testing.T, tab *benchTable, n int, shuffle *rand.Rand) *Env {
	cold := NewEnv(t)
	cold.MustOK("call", "demo.echo", "text=warm")
	coldRuns := map[string][]time.Duration{}
	coldSteps := []coldStep{
		{"one-shot", func() {}, func() { oneShotCall(t, mcpxdBin, "demo-server", map[string]any{"text": "x"}) }},
		{"cold direct", func() { stopDirect(t, cold) }, func() { cold.MustOK("call", "demo.echo", "text=x") }},
	}
	var manager *systemdtest.Manager
	if os.Geteuid() == 0 {
		se, m := newSystemdEnv(t)
		se.MustOK("call", "demo.echo", "text=warm")
		coldSteps = append(coldSteps, coldStep{"cold systemd", func() {
			if _, err := m.Systemctl("stop", "mcpx@builtin.service"); err != nil {
				t.Fatal(err)
			}
		}, func() { se.MustOK("call", "demo.echo", "text=x") }})
		manager = m
	}
	coldSteps = append(coldSteps, coldFloorSteps(t, cold, manager)...)
	for range n/3 + 1 {
		for _, i := range shuffle.Perm(len(coldSteps)) {
			s := coldSteps[i]
			s.setup()
			start := time.Now()
			s.run()
			coldRuns[s.name] = append(coldRuns[s.name], time.Since(start))
		}
	}
	for _, s := range coldSteps {
		tab.byName[s.name] = medianOf(coldRuns[s.name])
	}
	tab.cmds = append(tab.cmds, [2]string{"one-shot", "spawn `mcpxd demo-server`, initialize, call echo, exit (an mcp-go client in the bench)"},
		[2]string{"cold direct", "`mcpx stop`, then `mcpx call demo.echo text=x` (timed)"},
		[2]string{"cold systemd", "`systemctl --user stop mcpx@builtin.service`, then `mcpx call demo.echo text=x` (timed)"})
	tab.ratio("cold first call, direct manager", "cold direct", "one-shot", "≤ 1.3×")
	if _, ok := tab.byName["cold systemd"]; ok {
		tab.ratio("cold first call, systemd", "cold systemd", "one-shot", "≤ 1.5×")
	}
	coldFloorRows(tab)
	return cold
}

// coldStep is one measurement of the cold rounds: setup is untimed.
type coldStep struct {
	name  string
	setup func()
	run   func()
}
