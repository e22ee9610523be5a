package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// TestServePerformance measures issue #19's Deliver 5: a call through
// `mcpx serve` against a direct client calling the same server, 1,000
// calls on one session each, for the demo server and server-everything,
// with the host speaking stdio and streamable HTTP. Both clients are mcp-go
// clients in this process; the direct one talks to the server itself
// (stdio: it spawns the server; HTTP: the server listens and both the
// direct client and the daemon behind serve connect to it). The direct
// client speaks to the server the protocol generation the daemon speaks
// to it (the newest both know: 2026-07-28 where the server has it, asked
// with server/discover first as mcpx does), so both sides of a row cost
// the server the same; the host speaks 2025-11-25 to serve, as the hosts
// of today do. The two sessions of a row run in alternating blocks of 25
// calls, so a burst of load on the shared machine hits both alike.
// Timings are printed, never asserted.
func TestServePerformance(t *testing.T) {
	if !benchEnabled() {
		t.Skip("set MCPX_BENCH=1 (scripts/bench) to measure")
	}
	calls := 1000
	if s := os.Getenv("MCPX_BENCH_SERVE_CALLS"); s != "" {
		fmt.Sscan(s, &calls)
	}
	everything, haveEverything := npmBinIfInstalled("mcp-server-everything")

	type server struct {
		ns, tool string
		args     map[string]any
		stdio    []string                                     // command line of the stdio server
		http     func(t *testing.T) (url string, stop func()) // starts the server on HTTP
	}
	servers := []server{{
		ns: "demo", tool: "echo", args: map[string]any{"text": "x"},
		stdio: []string{mcpxdBin, "demo-server"},
		http: func(t *testing.T) (string, func()) {
			return startHTTPServer(t, []string{"FIXTURE_DEMO=1"}, fixtureBin, "--http", "127.0.0.1:0")
		},
	}}
	if haveEverything {
		servers = append(servers, server{
			ns: "everything", tool: "echo", args: map[string]any{"message": "x"},
			stdio: []string{everything, "stdio"},
			http: func(t *testing.T) (string, func()) {
				port := strings.TrimPrefix(freeAddr(t), "127.0.0.1:")
				url := "http://127.0.0.1:" + port + "/mcp"
				stop := startNodeHTTP(t, []string{"PORT=" + port}, everything, "streamableHttp")
				testkit.Eventually(t, 30*time.Second, "server-everything on HTTP", func() bool {
					c, _, err := connectHTTP(url, nil, mcp.ProtocolVersion20251125)
					if err == nil {
						c.Close()
					}
					return err == nil
				})
				return url, stop
			},
		})
	}

	var b strings.Builder
	fmt.Fprintf(&b, "| server | host ↔ serve | server's generation | direct client | through `mcpx serve` | ratio (medians) | ratio (means) |\n| --- | --- | --- | ---: | ---: | --- | --- |\n")
	for _, s := range servers {
		// stdio: the host spawns `mcpx serve`; the daemon spawns the server.
		e := NewEnv(t)
		e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {%q: {"command": %s, "args": %s}}}`,
			s.ns, jsonString(s.stdio[0]), jsonList(s.stdio[1:])))
		e.MustOK("refresh")
		direct, gen := connectStdio(t, nil, "", s.stdio...)
		viaServe, _ := connectStdio(t, e.Environ(), mcp.ProtocolVersion20251125, mcpxBin, "-C", e.Work, "serve")
		d, v := alternate(t, calls, callOnce(direct, s.tool, s.args), callOnce(viaServe, s.ns+"."+s.tool, s.args))
		viaServe.Close()
		fmt.Fprintf(&b, "| %s `%s` | stdio | %s | %s | %s | **%.2f×** | %.2f× |\n", s.ns, s.tool, gen, medianOf(d).Round(time.Microsecond),
			medianOf(v).Round(time.Microsecond), ratio(medianOf(v), medianOf(d)), ratio(meanOf(v), meanOf(d)))
		// The daemon alone: what serve adds is the rest.
		sock := socketOf(t, e)
		args, _ := json.Marshal(s.args)
		viaDaemon := func() error { return daemonStream(sock, s.ns, s.tool, string(args)) }
		d, v = alternate(t, calls, callOnce(direct, s.tool, s.args), viaDaemon)
		fmt.Fprintf(&b, "| %s `%s` | (daemon alone: POST /v1/call, kept connection) | %s | %s | %s | %.2f× | %.2f× |\n", s.ns, s.tool, gen, medianOf(d).Round(time.Microsecond),
			medianOf(v).Round(time.Microsecond), ratio(medianOf(v), medianOf(d)), ratio(meanOf(v), meanOf(d)))
		// The floors: the same server behind zero-work process hops.
		serveFloorRows(t, &b, calls, fmt.Sprintf("%s `%s`", s.ns, s.tool), gen, s.tool, s.args, direct, s.stdio)
		direct.Close()
		e.MustOK("stop")

		// HTTP: the server listens on HTTP; the daemon reaches it by url,
		// the host reaches serve --http.
		url, stop := s.http(t)
		he := NewEnv(t)
		he.WriteFile(filepath.Join(he.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {%q: {"url": %s}}}`, s.ns, jsonString(url)))
		he.MustOK("refresh")
		addr := freeAddr(t)
		startServe(t, he, "--http", addr)
		direct, gen = mustHTTP(t, url, nil, "")
		viaServe, _ = mustHTTP(t, "http://"+addr+"/mcp", keyHeader(t, he), mcp.ProtocolVersion20251125)
		d, v = alternate(t, calls, callOnce(direct, s.tool, s.args), callOnce(viaServe, s.ns+"."+s.tool, s.args))
		direct.Close()
		viaServe.Close()
		fmt.Fprintf(&b, "| %s `%s` | streamable HTTP | %s | %s | %s | **%.2f×** | %.2f× |\n", s.ns, s.tool, gen, medianOf(d).Round(time.Microsecond),
			medianOf(v).Round(time.Microsecond), ratio(medianOf(v), medianOf(d)), ratio(meanOf(v), meanOf(d)))
		he.MustOK("stop")
		stop()
	}
	fmt.Printf("\nmcpx serve: %d calls on one session each, per call\n\n%s\n", calls, b.String())
}

// daemonStream is one streamed call on the daemon's socket, as serve
// makes it (a kept connection, no status frames).
func daemonStream(sock, ns, tool, args string) error {
	body := fmt.Sprintf(`{"namespace":%q,"tool":%q,"arguments":%s,"stream":true,"noStatus":true}`, ns, tool, args)
	resp, err := daemonClient(sock).Post("http://mcpx/v1/call", "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 || !bytes.HasPrefix(b, []byte(`{"result":`)) {
		return fmt.Errorf("call: %s %s", resp.Status, b)
	}
	return nil
}

// alternate runs a and b n times each, in alternating blocks of 25 after
// 50 warm-up calls each, and returns each call's wall time.
func alternate(t *testing.T, n int, a, b func() error) (da, db []time.Duration) {
	for range 50 {
		if err := a(); err != nil {
			t.Fatal(err)
		}
		if err := b(); err != nil {
			t.Fatal(err)
		}
	}
	run := func(f func() error, into *[]time.Duration, k int) {
		for range k {
			start := time.Now()
			if err := f(); err != nil {
				t.Fatal(err)
			}
			*into = append(*into, time.Since(start))
		}
	}
	for len(da) < n {
		k := min(25, n-len(da))
		run(a, &da, k)
		run(b, &db, k)
	}
	return da, db
}

func callOnce(c *client.Client, tool string, args map[string]any) func() error {
	return func() error {
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = args
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r, err := c.CallTool(ctx, req)
		if err == nil && r.IsError {
			err = fmt.Errorf("%s: %+v", tool, r.Content)
		}
		return err
	}
}

// initialize starts a session of version, or, with "", of the newest
// generation the server speaks (server/discover first); it returns the
// version agreed.
func initialize(c *client.Client, version string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	r, err := c.Initialize(ctx, init)
	if err != nil {
		return "", err
	}
	return r.ProtocolVersion, nil
}

func connectStdio(t *testing.T, env []string, version string, argv ...string) (*client.Client, string) {
	t.Helper()
	c, err := client.NewStdioMCPClient(argv[0], env, argv[1:]...)
	if err != nil {
		t.Fatal(err)
	}
	agreed, err := initialize(c, version)
	if err != nil {
		t.Fatalf("%s: initialize: %v", strings.Join(argv, " "), err)
	}
	return c, agreed
}

func connectHTTP(url string, headers map[string]string, version string) (*client.Client, string, error) {
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(headers))
	if err != nil {
		return nil, "", err
	}
	if err := c.Start(context.Background()); err != nil {
		return nil, "", err
	}
	agreed, err := initialize(c, version)
	if err != nil {
		c.Close()
		return nil, "", err
	}
	return c, agreed, nil
}

func mustHTTP(t *testing.T, url string, headers map[string]string, version string) (*client.Client, string) {
	t.Helper()
	c, agreed, err := connectHTTP(url, headers, version)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return c, agreed
}

// startHTTPServer runs a server that prints its URL as its first line of
// stdout, and returns the URL.
func startHTTPServer(t *testing.T, env []string, argv ...string) (string, func()) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		t.Fatalf("%s: %v", argv[0], err)
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	t.Cleanup(stop)
	return strings.TrimSpace(line), stop
}

// startNodeHTTP runs a node server in the background (its output dropped).
func startNodeHTTP(t *testing.T, env []string, argv ...string) func() {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() { cmd.Process.Kill(); cmd.Wait() }
	t.Cleanup(stop)
	return stop
}

func jsonList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = jsonString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func meanOf(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(max(1, len(ds)))
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }
