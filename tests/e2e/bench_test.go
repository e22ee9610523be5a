package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// benchEnabled gates TestPerformance: scripts/bench sets MCPX_BENCH=1.
func benchEnabled() bool { return os.Getenv("MCPX_BENCH") == "1" }

// TestPerformance measures medians of whole-command wall times, each against a
// baseline measured in the same run, and prints a markdown table. Timings are
// reported, never asserted.
func TestPerformance(t *testing.T) {
	if !benchEnabled() {
		t.Skip("set MCPX_BENCH=1 (scripts/bench) to measure")
	}
	n := 30
	if s := os.Getenv("MCPX_BENCH_N"); s != "" {
		fmt.Sscan(s, &n)
	}
	var rows []benchRow
	byName := map[string]time.Duration{}
	add := func(name string, d time.Duration, baselines ...string) {
		rows = append(rows, benchRow{name, d, baselines})
		byName[name] = d
	}
	const (
		procStart = "trivial Go binary: process start"
		oneShot   = "one call with no daemon: spawn `mcpxd demo-server`, initialize, call echo, exit"
		warmCall  = "`mcpx call demo.echo`, warm daemon (direct manager)"
		lsWarm    = "`mcpx ls` from the cache, warm daemon"
		lsCold    = "`mcpx ls` from the cache, daemon stopped (direct start)"
		coldCall  = "`mcpx call` cold, direct manager (spawns daemon and server)"
		linkMCP   = "Go binary that only links mcp-go's client: process start"
		version   = "`mcpx version` (the CLI's own process start)"
		npmOnce   = "one call with no daemon: spawn server-everything (node), initialize, call echo, exit"
		npmWarm   = "`mcpx call everything.echo`, warm daemon"
		sdWarm    = "`mcpx call` warm, systemd"
		sdFirst   = "`mcpx call` first call through socket activation (service inactive)"
	)

	trivial := buildTrivial(t)
	add(procStart, median(n, func() { mustRun(t, exec.Command(trivial)) }))
	add(oneShot, median(n, func() { oneShotCall(t, mcpxdBin, "demo-server", map[string]any{"text": "x"}) }), procStart)

	e := NewEnv(t)
	mcpGo := buildLinkingMCPGo(t)
	add(linkMCP, median(n, func() { mustRun(t, exec.Command(mcpGo)) }), procStart)
	add(version, median(n, func() { e.MustOK("version") }), procStart, linkMCP)
	e.MustOK("call", "demo.echo", "text=warm")
	add(warmCall, median(n, func() { e.MustOK("call", "demo.echo", "text=x") }), procStart, oneShot, version)

	// The point of a daemon: a real server that takes its time to start.
	everything := npmBin(t, "mcp-server-everything")
	add(npmOnce, median(n/3+1, func() { oneShotCall(t, everything, "stdio", map[string]any{"message": "x"}) }), procStart)
	ne := NewEnv(t)
	ne.WriteFile(filepath.Join(ne.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {"everything": {"command": %s}}}`, jsonString(everything)))
	ne.MustOK("call", "everything.echo", "message=warm")
	add(npmWarm, median(n, func() { ne.MustOK("call", "everything.echo", "message=x") }), npmOnce)

	e.MustOK("refresh")
	add(lsWarm, median(n, func() { e.MustOK("ls") }), procStart)
	stopped := func() {
		e.MustOK("stop")
		testkit.Eventually(t, 10*time.Second, "daemon exit", func() bool { return len(daemonPIDs("builtin")) == 0 })
	}
	cold := n/3 + 1
	add(lsCold, medianAfter(cold, stopped, func() { e.MustOK("ls") }), lsWarm)
	add(coldCall, medianAfter(cold, stopped, func() { e.MustOK("call", "demo.echo", "text=x") }), warmCall)

	if os.Geteuid() == 0 {
		se, m := newSystemdEnv(t)
		se.MustOK("call", "demo.echo", "text=warm")
		add(sdWarm, median(n, func() { se.MustOK("call", "demo.echo", "text=x") }), procStart)
		inactive := func() {
			if _, err := m.Systemctl("stop", "mcpx@builtin.service"); err != nil {
				t.Fatal(err)
			}
		}
		add(sdFirst, medianAfter(cold, inactive, func() { se.MustOK("call", "demo.echo", "text=x") }), sdWarm, coldCall)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "| measurement | median | ratios |\n| --- | ---: | --- |\n")
	for _, r := range rows {
		var rat []string
		for _, base := range r.baselines {
			rat = append(rat, fmt.Sprintf("%.2f× %s", float64(r.d)/float64(byName[base]), base))
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", r.name, r.d.Round(10*time.Microsecond), strings.Join(rat, "; "))
	}
	fmt.Printf("\nmcpx performance: medians of %d runs (cold rows: %d)\n\n%s\n", n, cold, b.String())
	if out := os.Getenv("MCPX_BENCH_OUT"); out != "" {
		if err := os.WriteFile(out, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type benchRow struct {
	name      string
	d         time.Duration
	baselines []string
}

// median runs f n times and returns the median wall time.
func median(n int, f func()) time.Duration {
	return medianAfter(n, func() {}, f)
}

// medianAfter runs setup then f, n times, and returns the median wall time
// of f alone.
func medianAfter(n int, setup, f func()) time.Duration {
	var ds []time.Duration
	for range n {
		setup()
		start := time.Now()
		f()
		ds = append(ds, time.Since(start))
	}
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

// buildLinkingMCPGo builds a program that does nothing but link mcp-go's
// client: the package initialisation every binary using it pays (mcp-go's
// transports import its server, which compiles JSON Schema meta-schemas at
// init).
func buildLinkingMCPGo(t *testing.T) string {
	dir, err := os.MkdirTemp(filepath.Join(repoRoot, "bin"), "linkmcp-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	src := filepath.Join(dir, "main.go")
	if err := os.WriteFile(src, []byte("package main\n\nimport _ \"github.com/mark3labs/mcp-go/client\"\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "linkmcp")
	cmd := exec.Command("go", "build", "-o", bin, src)
	cmd.Dir = repoRoot
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
