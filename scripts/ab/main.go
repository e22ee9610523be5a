// Command ab compares two builds of mcpx on one command, interleaved: each
// round runs the command once with each build, in alternating order, so
// load on a shared machine hits both alike. It is how the A/B figures in
// docs/performance.md were taken.
//
//	go run ./scripts/ab [-n 1000] [-daemon same|each] [-request JSON] [-config JSON] REV_A REV_B [-- MCPX ARGS...]
//
// A revision is anything git names (HEAD~1, a branch), or "." for the
// working tree as it is. Both are built the way the README builds them
// (CGO_ENABLED=0 go build ./cmd/...). The command (default: call
// demo.echo text=hi) runs in an empty HOME with the direct manager.
// -daemon same (the default) runs both CLIs against the daemon of REV_A,
// so only the CLI differs; -daemon each gives each build its own daemon.
// -request times the daemons alone instead: each round sends the JSON body
// as POST /v1/call on a new connection to each build's daemon (-daemon
// each is implied), the way every mcpx command connects. -config gives
// each HOME a user config instead of the built-in one ({fixture} in it is
// the test fixture server) and reads its servers once before timing:
//
//	go run ./scripts/ab -daemon each -n 300 \
//	  -config '{"mcpServers": {"big": {"command": "{fixture}", "env": {"FIXTURE_EXTRA_TOOLS": "10000"}}}}' \
//	  main . -- search tool_0042
package main

import (
	"context"
	"encoding/json"
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
)

func main() {
	n := flag.Int("n", 1000, "rounds")
	daemon := flag.String("daemon", "same", "`same`: one daemon (REV_A's) for both CLIs; each: a daemon per build")
	request := flag.String("request", "", "time POST /v1/call with this `JSON` body on each build's daemon instead of a command")
	config := flag.String("config", "", "the user config (`JSON`) of each build's HOME instead of the built-in one; {fixture} in it is the test fixture server, built from the working tree")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/ab [-n N] [-daemon same|each] [-config JSON] REV_A REV_B [-- MCPX ARGS...]")
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
	if err := run(flag.Arg(0), flag.Arg(1), args, *n, *daemon == "each" || *request != "", *request, *config); err != nil {
		fmt.Fprintln(os.Stderr, "ab:", err)
		os.Exit(1)
	}
}

// build is one side of the comparison: its binaries and the HOME its
// commands run in.
type build struct {
	rev, bin, home string
	times          []time.Duration
	socket         string // its daemon's, with -request
}

func run(revA, revB string, args []string, n int, ownDaemons bool, request, config string) error {
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
			_, _ = x.exec("stop")
		}
	}()
	measure, what, err := warmUp(builds, args, config, request)
	if err != nil {
		return err
	}
	if err := interleave(builds, n, measure); err != nil {
		return err
	}
	ma, mb := median(a.times), median(b.times)
	fmt.Printf("%s, %d interleaved rounds, daemon %s\n", what, n, map[bool]string{false: "shared (A's)", true: "one per build"}[ownDaemons])
	fmt.Printf("A %-20s median %.3f ms\n", revA, ms(ma))
	fmt.Printf("B %-20s median %.3f ms  (%+.1f %%)\n", revB, ms(mb), 100*(ms(mb)-ms(ma))/ms(ma))
	return nil
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
