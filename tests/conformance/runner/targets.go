package main

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// A target is a running MCP server the server scenarios connect to.
type target struct {
	URL  string
	stop func()
}

// startFixture runs the conformance fixture on streamable HTTP and
// returns its URL (it prints it once listening).
func startFixture(fixture string, logPath string) (*target, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(fixture, "--conformance", "--http", "127.0.0.1:0")
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", fixture, err)
	}
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		logf.Close()
	}
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
	}()
	select {
	case u, ok := <-line:
		if !ok || !strings.HasPrefix(u, "http://") {
			stop()
			return nil, fmt.Errorf("start %s: it printed no URL (log: %s)", fixture, logPath)
		}
		return &target{URL: u, stop: stop}, nil
	case <-time.After(20 * time.Second):
		stop()
		return nil, fmt.Errorf("start %s: no URL after 20s (log: %s)", fixture, logPath)
	}
}

// serveEndpoint chooses where the suites reach a server through serve.
type serveEndpoint int

const (
	endpointOwnNames  serveEndpoint = iota // /mcp/conf: the server under its own names
	endpointAggregate                      // /mcp: every server, NS.TOOL names
)

// startServe runs `mcpx serve --http` for a hermetic user whose config
// has one stdio server, conf, which is the conformance fixture, and
// returns the URL of the endpoint. serve runs with --no-key: the suites'
// raw-HTTP scenarios (the SEP-2243 header checks) send the URL's path
// alone, so neither ?key= nor a header could carry the serve key, and a
// 401 would hide what they test. The key is tested in tests/e2e
// (servekey_test.go).
func startServe(mcpx, fixture string, ep serveEndpoint, logPath string) (*target, error) {
	u, err := newUser("mxs")
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*target, error) {
		u.close(mcpx)
		return nil, err
	}
	// The fixture's tools carry mcp-go's default annotations, which say
	// destructive; the suites' hosts cannot confirm a call the way serve
	// asks (docs/serve.md), so this user allows them, as a user would
	// for a server they trust.
	conf := map[string]any{"command": fixture, "args": []string{"--conformance"},
		"mcpx": map[string]any{"policy": map[string]any{"destructive": "allow"}}}
	if err := u.writeConfig(map[string]any{"conf": conf}); err != nil {
		return fail(err)
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return fail(err)
	}
	refresh := exec.Command(mcpx, "refresh", "conf")
	refresh.Env, refresh.Dir, refresh.Stdout, refresh.Stderr = u.environ(), u.home, logf, logf
	if err := refresh.Run(); err != nil {
		logf.Close()
		return fail(fmt.Errorf("mcpx refresh conf: %w (log: %s)", err, logPath))
	}
	addr, err := freeAddr()
	if err != nil {
		logf.Close()
		return fail(err)
	}
	cmd := exec.Command(mcpx, "serve", "--http", addr, "--no-key")
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = u.environ(), u.home, logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fail(fmt.Errorf("start mcpx serve: %w", err))
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	stop := func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logf.Close()
		u.close(mcpx)
	}
	if err := waitListening(addr, exited); err != nil {
		stop()
		return nil, fmt.Errorf("mcpx serve --http %s: %w (log: %s)", addr, err, logPath)
	}
	path := "/mcp/conf"
	if ep == endpointAggregate {
		path = "/mcp"
	}
	return &target{URL: "http://" + addr + path, stop: stop}, nil
}

// freeAddr returns a loopback address with a port nothing listens on.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitListening waits until addr accepts connections, the process exits,
// or 30 seconds pass.
func waitListening(addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("exited before listening")
		case <-time.After(50 * time.Millisecond):
		}
	}
	return errors.New("not listening after 30s")
}
