package cli

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/config"
)

// `mcpx demo-server` and `mcpx daemon` are mcpxd's: mcpx execs the mcpxd
// beside it.
func TestDemoServerAndDaemonExecMcpxd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both binaries and runs a daemon (-short)")
	}
	bin := mcpxBinary(t)
	cmd := exec.Command(bin, "demo-server")
	cmd.Env = []string{"PATH=/nonexistent"}
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("mcpx demo-server: %v; stderr %q", err, errb.String())
	}
	if !strings.Contains(out.String(), `"id":1`) || !strings.Contains(out.String(), `"serverInfo"`) {
		t.Fatalf("mcpx demo-server answered %q to initialize; stderr %q", out.String(), errb.String())
	}

	// mcpxd's own usage error shows that the daemon command reached it.
	cmd = exec.Command(bin, "daemon", "--bogus")
	cmd.Env = []string{"PATH=/nonexistent"}
	got, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(got), "mcpxd daemon") {
		t.Fatalf("mcpx daemon --bogus: %v, output %q; want mcpxd's usage error, exit 2", err, got)
	}
}

// Without mcpxd beside it or on PATH, mcpx says where it looked.
func TestMissingMcpxdNamesBothPlaces(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(mcpxBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	lone := filepath.Join(dir, "mcpx")
	if err := os.WriteFile(lone, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"demo-server"}, {"daemon", "--key", "builtin"}} {
		cmd := exec.Command(lone, args...)
		cmd.Env = []string{"PATH=" + filepath.Join(dir, "empty")}
		out, err := cmd.CombinedOutput()
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != ExitUnavailable {
			t.Fatalf("%v without mcpxd: %v, output %q; want exit %d", args, err, out, ExitUnavailable)
		}
		if !strings.Contains(string(out), filepath.Join(dir, "mcpxd")) || !strings.Contains(string(out), "on PATH") {
			t.Fatalf("%v without mcpxd: %q names neither %s nor PATH", args, out, filepath.Join(dir, "mcpxd"))
		}
	}
}

// A daemon that accepts and never answers: ls gives up within its bound
// with exit 3.
func TestSilentDaemonExit3(t *testing.T) {
	e := newEnv(t)
	sock := filepath.Join(e.vars["HOME"], "silent.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for _, c := range held {
			c.Close()
		}
	})
	e.vars["MCPX_SOCKET"] = sock
	var out, errb bytes.Buffer
	a := &App{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return e.vars[k] },
		RequestTimeout: 300 * time.Millisecond}
	code := a.Run(context.Background(), []string{"mcpx", "-C", e.dir, "ls"})
	if code != ExitUnavailable || !strings.Contains(errb.String(), "no answer within 300ms") {
		t.Fatalf("ls against a silent daemon: exit %d, stderr %q", code, errb.String())
	}
}

// 20 racing first calls start exactly one daemon, and none of them waits
// for its socket: the direct manager binds it before the daemon starts.
func TestRacingFirstCallsStartOneDaemonWithoutWaiting(t *testing.T) {
	e := newEnv(t)
	before := client.DialWaits()
	var wg sync.WaitGroup
	codes := make(chan string, 20)
	for range 20 {
		wg.Go(func() {
			code, out, errs := e.run("call", "demo.echo", "text=x")
			if code != 0 || out != "x" {
				codes <- fmt.Sprintf("exit %d, stdout %q, stderr %q", code, out, errs)
			}
		})
	}
	wg.Wait()
	close(codes)
	for c := range codes {
		t.Error(c)
	}
	if n := client.DialWaits() - before; n != 0 {
		t.Errorf("clients waited %d times for the socket after activation, want 0", n)
	}
	paths, err := config.DefaultPaths(func(k string) string { return e.vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	log, err := os.ReadFile(paths.Log(config.BuiltinKey))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(log), "serving builtin on"); n != 1 {
		t.Fatalf("%d daemons started, want 1; log:\n%s", n, log)
	}
}
