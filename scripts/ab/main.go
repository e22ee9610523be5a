// Command ab compares two builds of mcpx on one command, interleaved: each
// round runs the command once with each build, in alternating order, so
// load on a shared machine hits both alike. It is how the A/B figures in
// docs/performance.md were taken.
//
//	go run ./scripts/ab [-n 1000] [-daemon same|each] [-request JSON | -serve] [-config JSON] REV_A REV_B [-- MCPX ARGS...]
//
// A revision is anything git names (HEAD~1, a branch), or "." for the
// working tree as it is. Both are built the way the README builds them
// (CGO_ENABLED=0 go build ./cmd/...). The command (default: call
// demo.echo text=hi) runs in an empty HOME with the direct manager.
// -daemon same (the default) runs both CLIs against the daemon of REV_A,
// so only the CLI differs; -daemon each gives each build its own daemon.
// -request times the daemons alone instead: each round sends the JSON body
// as POST /v1/call on a new connection to each build's daemon (-daemon
// each is implied), the way every mcpx command connects. -serve times a
// tool call through each build's `mcpx serve` on stdio instead (one host
// session per build, kept for every round, as a host keeps it; its own
// daemon each): the MCP tool and its JSON arguments, by default
// demo.echo {"text":"hi"}:
//
//	go run ./scripts/ab -serve -n 3000 main . [-- demo.echo '{"text":"hi"}']
//
// -config gives each HOME a user config instead of the built-in one
// ({fixture} in it is the test fixture server) and reads its servers once
// before timing:
//
//	go run ./scripts/ab -daemon each -n 300 \
//	  -config '{"mcpServers": {"big": {"command": "{fixture}", "env": {"FIXTURE_EXTRA_TOOLS": "10000"}}}}' \
//	  main . -- search tool_0042
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

func main() {
	n := flag.Int("n", 1000, "rounds")
	daemon := flag.String("daemon", "same", "`same`: one daemon (REV_A's) for both CLIs; each: a daemon per build")
	request := flag.String("request", "", "time POST /v1/call with this `JSON` body on each build's daemon instead of a command")
	config := flag.String("config", "", "the user config (`JSON`) of each build's HOME instead of the built-in one; {fixture} in it is the test fixture server, built from the working tree")
	serve := flag.Bool("serve", false, "time a tool call through each build's `mcpx serve` (stdio, one session each) instead of a command")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/ab [-n N] [-daemon same|each] [-request JSON | -serve] [-config JSON] REV_A REV_B [-- MCPX ARGS...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() < 2 || (*daemon != "same" && *daemon != "each") {
		flag.Usage()
		os.Exit(2)
	}
	args := []string{"call", "demo.echo", "text=hi"}
	if rest := flag.Args()[2:]; len(rest) > 0 {
		if rest[0] == "--" {
			rest = rest[1:]
		}
		args = rest
	}
	if *serve {
		*request = ""
		args = []string{"demo.echo", `{"text":"hi"}`}
		if rest := flag.Args()[2:]; len(rest) > 0 {
			if rest[0] == "--" {
				rest = rest[1:]
			}
			args = append(rest, args[len(rest):]...)
		}
	}
	if err := run(flag.Arg(0), flag.Arg(1), args, *n, *daemon == "each" || *request != "" || *serve, *request, *config, *serve); err != nil {
		fmt.Fprintln(os.Stderr, "ab:", err)
		os.Exit(1)
	}
}

// build is one side of the comparison: its binaries and the HOME its
// commands run in.
type build struct {
	rev, bin, home string
	times          []time.Duration
	socket         string         // its daemon's, with -request
	host           *client.Client // its serve session, with -serve
}

func run(revA, revB string, args []string, n int, ownDaemons bool, request, config string, serve bool) error {
	tmp, err := os.MkdirTemp("", "mcpx-ab-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	a := &build{rev: revA, bin: filepath.Join(tmp, "a"), home: filepath.Join(tmp, "home-a")}
	b := &build{rev: revB, bin: filepath.Join(tmp, "b"), home: a.home}
	if ownDaemons {
		b.home = filepath.Join(tmp, "home-b")
	}
	builds := []*build{a, b}
	if err := prepare(builds, tmp, config); err != nil {
		return err
	}
	defer func() {
		for _, x := range builds {
			if x.host != nil {
				x.host.Close()
			}
			_, _ = x.exec("stop")
		}
	}()
	measure, what, err := warmUp(builds, args, config, request)
	if serve {
		measure, what, err = warmUpServe(builds, args)
	}
	if err != nil {
		return err
	}
	var cpu [2]func() time.Duration
	if serve {
		for i, x := range builds {
			cpu[i] = x.cpuOfServe()
		}
	}
	if err := interleave(builds, n, measure); err != nil {
		return err
	}
	ma, mb := median(a.times), median(b.times)
	fmt.Printf("%s, %d interleaved rounds, daemon %s\n", what, n, map[bool]string{false: "shared (A's)", true: "one per build"}[ownDaemons])
	fmt.Printf("A %-20s median %.3f ms%s\n", revA, ms(ma), cpuPerCall(cpu[0], n))
	fmt.Printf("B %-20s median %.3f ms  (%+.1f %%)%s\n", revB, ms(mb), 100*(ms(mb)-ms(ma))/ms(ma), cpuPerCall(cpu[1], n))
	return nil
}

// cpuPerCall says how much CPU a build's processes took per call (nothing
// where it could not be read).
func cpuPerCall(used func() time.Duration, n int) string {
	if used == nil {
		return ""
	}
	d := used()
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf("; CPU of serve, daemon and server %.0f µs per call", float64(d)/float64(time.Microsecond)/float64(n))
}

// cpuOfServe starts counting the CPU time of this build's serve, its
// daemon and the daemon's servers (Linux: /proc), and returns what reads
// the time used since; nil where /proc is not there.
func (x *build) cpuOfServe() func() time.Duration {
	var pids []int
	kids, _ := children(os.Getpid())
	for _, pid := range kids {
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && strings.HasPrefix(exe, x.bin+"/") {
			pids = append(pids, pid) // serve (mcpx execs mcpxd serve)
		}
	}
	cmd := exec.Command(filepath.Join(x.bin, "mcpx"), "status", "--json")
	cmd.Dir, cmd.Env = x.home, x.env()
	var st struct {
		Service struct {
			Pid int `json:"pid"`
		} `json:"service"`
	}
	if out, err := cmd.Output(); err == nil && json.Unmarshal(out, &st) == nil && st.Service.Pid > 0 {
		servers, _ := children(st.Service.Pid)
		pids = append(append(pids, st.Service.Pid), servers...)
	}
	if len(pids) == 0 {
		return nil
	}
	start := cpuTime(pids)
	return func() time.Duration { return cpuTime(pids) - start }
}

// children lists the child processes of pid (Linux).
func children(pid int) ([]int, error) {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, t := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		for _, f := range strings.Fields(string(b)) {
			var c int
			if _, err := fmt.Sscan(f, &c); err == nil {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

// cpuTime is the user and system time of pids (clock ticks of 10 ms).
func cpuTime(pids []int) time.Duration {
	var sum time.Duration
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 {
			s = s[i+1:]
		}
		f := strings.Fields(s) // state is f[0]; utime, stime are f[11], f[12]
		if len(f) < 13 {
			continue
		}
		var u, st int64
		fmt.Sscan(f[11], &u)
		fmt.Sscan(f[12], &st)
		sum += time.Duration(u+st) * 10 * time.Millisecond
	}
	return sum
}

// prepare compiles each build and makes its HOME, with config (if any)
// as the user config.
func prepare(builds []*build, tmp, config string) error {
	for _, x := range builds {
		if err := compile(x.rev, x.bin, tmp); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(x.home, "run"), 0o700); err != nil {
			return err
		}
	}
	if config == "" {
		return nil
	}
	// e.g. {"mcpServers": {"big": {"command": "{fixture}", "env": {"FIXTURE_EXTRA_TOOLS": "10000"}}}}
	fixture := filepath.Join(tmp, "mcpx-fixture")
	mk := exec.Command("go", "build", "-o", fixture, "./internal/fixture/cmd/mcpx-fixture")
	mk.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := mk.CombinedOutput(); err != nil {
		return fmt.Errorf("build the fixture: %v\n%s", err, out)
	}
	for _, x := range builds {
		dir := filepath.Join(x.home, ".config", "mcpx")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(strings.ReplaceAll(config, "{fixture}", fixture)), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// warmUp reads the servers (with a config), runs the command 20 times with
// each build (A's first starts the daemon both use with -daemon same),
// and with request finds each daemon's socket and sends it 200 times. It
// returns what to time and its name.
func warmUp(builds []*build, args []string, config, request string) (func(*build) (time.Duration, error), string, error) {
	if config != "" {
		for _, x := range builds {
			if _, err := x.exec("refresh"); err != nil {
				return nil, "", err
			}
		}
	}
	for _, x := range builds {
		for range 20 {
			if _, err := x.exec(args...); err != nil {
				return nil, "", err
			}
		}
	}
	if request == "" {
		return func(x *build) (time.Duration, error) { return x.exec(args...) }, fmt.Sprintf("mcpx %v", args), nil
	}
	for _, x := range builds {
		var err error
		if x.socket, err = x.daemonSocket(); err != nil {
			return nil, "", err
		}
		for range 200 {
			if _, err := x.post(request); err != nil {
				return nil, "", err
			}
		}
	}
	return func(x *build) (time.Duration, error) { return x.post(request) }, "POST /v1/call " + request + " on a new connection", nil
}

// interleave times n rounds, each build once per round, in alternating
// order.
func interleave(builds []*build, n int, measure func(*build) (time.Duration, error)) error {
	for i := range n {
		order := builds
		if i%2 == 1 {
			order = []*build{builds[1], builds[0]}
		}
		for _, x := range order {
			d, err := measure(x)
			if err != nil {
				return err
			}
			x.times = append(x.times, d)
		}
	}
	return nil
}

// compile builds rev's binaries into dir: "." is the working tree, any
// other revision is checked out in a temporary worktree.
func compile(rev, dir, tmp string) error {
	src := "."
	if rev != "." {
		src = filepath.Join(tmp, "src-"+filepath.Base(dir))
		if out, err := exec.Command("git", "worktree", "add", "--detach", src, rev).CombinedOutput(); err != nil {
			return fmt.Errorf("check out %s: %v\n%s", rev, err, out)
		}
		defer exec.Command("git", "worktree", "remove", "--force", src).Run()
	}
	cmd := exec.Command("go", "build", "-o", dir+"/", "./cmd/...")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s: %v\n%s", rev, err, out)
	}
	return nil
}

// exec runs this build's mcpx with args and returns how long it took.
func (x *build) exec(args ...string) (time.Duration, error) {
	cmd := exec.Command(filepath.Join(x.bin, "mcpx"), args...)
	cmd.Dir = x.home
	cmd.Env = x.env()
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil && args[0] != "stop" {
		return 0, fmt.Errorf("%s: mcpx %v: %v\n%s", x.rev, args, err, out)
	}
	return d, nil
}

// daemonSocket is the socket of this build's running daemon (from
// `mcpx status --json`).
func (x *build) daemonSocket() (string, error) {
	cmd := exec.Command(filepath.Join(x.bin, "mcpx"), "status", "--json")
	cmd.Dir = x.home
	cmd.Env = x.env()
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: mcpx status: %v", x.rev, err)
	}
	var st struct {
		Socket struct {
			Path string `json:"path"`
		} `json:"socket"`
	}
	if err := json.Unmarshal(out, &st); err != nil || st.Socket.Path == "" {
		return "", fmt.Errorf("%s: mcpx status names no socket: %v\n%s", x.rev, err, out)
	}
	return st.Socket.Path, nil
}

// post sends body as POST /v1/call on a new connection to this build's
// daemon and returns how long the answer took.
func (x *build) post(body string) (time.Duration, error) {
	c := &http.Client{Transport: &http.Transport{
		DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", x.socket)
		},
	}}
	start := time.Now()
	resp, err := c.Post("http://mcpx/v1/call", "application/json", strings.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("%s: %v", x.rev, err)
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	d := time.Since(start)
	if err != nil || resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s: POST /v1/call: %s %v\n%s", x.rev, resp.Status, err, data)
	}
	return d, nil
}

// env is the environment this build's commands run in.
func (x *build) env() []string {
	return append(os.Environ(), "HOME="+x.home, "XDG_RUNTIME_DIR="+filepath.Join(x.home, "run"), "MCPX_SERVICE=direct",
		"XDG_CONFIG_HOME="+filepath.Join(x.home, ".config"), "XDG_STATE_HOME="+filepath.Join(x.home, ".local", "state"),
		"XDG_CACHE_HOME="+filepath.Join(x.home, ".cache"))
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// warmUpServe reads the servers with each build (which starts its
// daemon), starts a host session with its `mcpx serve` and calls the tool
// 200 times through each. args are
// the tool's MCP name and its JSON arguments.
func warmUpServe(builds []*build, args []string) (func(*build) (time.Duration, error), string, error) {
	var arguments map[string]any
	if err := json.Unmarshal([]byte(args[1]), &arguments); err != nil {
		return nil, "", fmt.Errorf("arguments %s: %v", args[1], err)
	}
	call := func(x *build) (time.Duration, error) {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = args[0], arguments
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		res, err := x.host.CallTool(ctx, req)
		d := time.Since(start)
		if err == nil && res.IsError {
			err = errors.New("the result is an error")
		}
		if err != nil {
			return 0, fmt.Errorf("%s: call %s through serve: %v", x.rev, args[0], err)
		}
		return d, nil
	}
	for _, x := range builds {
		// serve lists what the schema cache holds: read the servers first.
		if _, err := x.exec("refresh"); err != nil {
			return nil, "", err
		}
		c, err := client.NewStdioMCPClient(filepath.Join(x.bin, "mcpx"), x.env(), "-C", x.home, "serve")
		if err != nil {
			return nil, "", err
		}
		x.host = c
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = mcp.ProtocolVersion20251125 // as the hosts of today
		init.Params.ClientInfo = mcp.Implementation{Name: "ab", Version: "1"}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err = c.Initialize(ctx, init)
		cancel()
		if err != nil {
			return nil, "", fmt.Errorf("%s: initialize serve: %v", x.rev, err)
		}
		for range 200 {
			if _, err := call(x); err != nil {
				return nil, "", err
			}
		}
	}
	return call, fmt.Sprintf("%s %s through mcpx serve (stdio, one session per build)", args[0], args[1]), nil
}
