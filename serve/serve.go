// Package serve is `mcpx serve`: one MCP server (mcp-go) in front of the
// daemon of the directory it runs in, for hosts that speak only MCP.
//
// It is thin. What it lists comes from the schema cache on disk (tools,
// prompts, resources, templates), so listing never asks the daemon and never
// starts a server; everything that runs (tools/call, resources/read,
// prompts/get) goes to the daemon over its socket through package client,
// so pools, timeouts, trust and the destructive-call policy apply exactly as
// for `mcpx call`. A call the policy wants confirmed is confirmed through
// MCP elicitation when the host supports it, and otherwise comes back as an
// isError result saying why; it never runs unconfirmed. Calls stream from
// the daemon, so the server's progress and log notifications reach the host
// that made the call (forward.go).
//
// The catalog is re-read every second (cheap: the cache keeps a decoded
// snapshot while its ref is unchanged); when the config or a cached list
// changes, hosts get notifications/{tools,prompts,resources}/list_changed.
package serve

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/mcpxd"
	"github.com/mcpx-dev/mcpx/search"
	"github.com/mcpx-dev/mcpx/service"
)

// Exit codes, as the CLI's (DESIGN §8).
const (
	exitOK          = 0
	exitUsage       = 2
	exitUnavailable = 3
)

// Options configure one serve run.
type Options struct {
	// Dir is the directory whose configuration is served (default: the
	// working directory); ConfigFile selects exactly one config file.
	Dir        string
	ConfigFile string
	// HTTP, when set, serves streamable HTTP at this address (path /mcp)
	// instead of stdio. Non-loopback addresses need AllowRemote.
	HTTP        string
	AllowRemote bool
	// Expose is "all" (every tool as NS.TOOL) or "search" (three tools).
	Expose string
	// Namespaces limits what is served (nil: all).
	Namespaces map[string]bool
	// NoKey serves HTTP without the serve key (key.go).
	NoKey bool
	// Listener, when set, is where HTTP is served (HTTP is then only a
	// label); tests pass their own.
	Listener net.Listener
	// MaxBody bounds an HTTP request's body (default 4 MiB).
	MaxBody int64
	// Poll is how often the config is re-read (default 1 s), and the
	// catalog where the schema cache cannot be watched.
	Poll time.Duration
	// Getenv reads the environment (default os.Getenv).
	Getenv config.Getenv
	// Log receives diagnostics (default: discarded).
	Log *log.Logger
}

// Main runs `mcpx serve ARGS` and returns the exit code. It serves on
// stdin/stdout (or HTTP with --http) until the host closes stdin, ctx ends,
// or the HTTP server fails.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("mcpx serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		o         Options
		nsList    string
		printHost string
		asJSON    bool
	)
	fs.StringVar(&o.Dir, "C", "", "serve the configuration of `DIR`")
	fs.StringVar(&o.ConfigFile, "config", "", "use exactly this config `FILE`")
	fs.StringVar(&o.HTTP, "http", "", "serve streamable HTTP on `ADDR` (e.g. 127.0.0.1:8765) instead of stdio")
	fs.BoolVar(&o.AllowRemote, "http-allow-remote", false, "allow --http on an address that is not loopback")
	fs.StringVar(&o.Expose, "expose", "all", "`MODE`: all (every tool as NS.TOOL) or search (search_tools, describe_tool, call_tool)")
	fs.BoolVar(&o.NoKey, "no-key", false, "serve HTTP without the serve key: any local user could call your tools")
	fs.StringVar(&nsList, "ns", "", "serve only these namespaces (`a,b`); one namespace alone is served under its server's own names")
	fs.BoolVar(&asJSON, "json", false, "say a failure to start as a JSON error document on stdout too (`mcpx --json serve` sets it)")
	fs.StringVar(&printHost, "print-config", "", "print the snippet that registers mcpx in `HOST`'s config and exit ("+strings.Join(hostNames(), ", ")+")")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: mcpx serve [--http ADDR [--http-allow-remote] [--no-key]] [--expose all|search] [--ns a,b] [--print-config HOST]\n\n"+
			"Serve every configured MCP server as one MCP server, on stdin/stdout or streamable HTTP (docs/serve.md).\n"+
			"Over HTTP, /mcp serves them all (NS.TOOL) and /mcp/NS each under its own names; every request carries the serve key.\n\n")
		fs.PrintDefaults()
	}
	out := &watchedWriter{w: stdout}
	r := &reporter{stderr: stderr, stdout: out, json: jsonAsked(args)}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		// The flag package said it on stderr already.
		r.stderr = io.Discard
		return r.fail(exitUsage, api.CodeUsage, err.Error()+"; see `mcpx serve --help`", "")
	}
	r.json = asJSON
	if fs.NArg() > 0 {
		return r.fail(exitUsage, api.CodeUsage, fmt.Sprintf("serve takes no arguments, got %q. See `mcpx serve --help`", fs.Arg(0)), "")
	}
	if nsList != "" {
		o.Namespaces = map[string]bool{}
		for _, ns := range strings.Split(nsList, ",") {
			if ns = strings.TrimSpace(ns); ns != "" {
				o.Namespaces[ns] = true
			}
		}
	}
	if printHost != "" {
		p := printRequest{host: printHost, args: carriedArgs(args), http: o.HTTP}
		if len(o.Namespaces) == 1 {
			for ns := range o.Namespaces {
				p.ns = ns
			}
		}
		if !o.NoKey {
			p.key = func() (string, error) {
				paths, err := config.DefaultPaths(os.Getenv)
				if err != nil {
					return "", fmt.Errorf("find mcpx directories: %w", err)
				}
				return serveKey(paths.ServeKey())
			}
		}
		snippet, err := printConfig(p)
		if err != nil {
			return r.fail(exitUsage, api.CodeUsage, err.Error(), "")
		}
		fmt.Fprint(out, snippet)
		return exitOK
	}
	if o.Expose != "all" && o.Expose != "search" {
		return r.fail(exitUsage, api.CodeUsage, fmt.Sprintf("--expose is all or search, not %q", o.Expose), "")
	}
	if o.HTTP != "" && !o.AllowRemote {
		if err := checkLoopback(o.HTTP); err != nil {
			return r.fail(exitUsage, api.CodeUsage, err.Error(), "")
		}
	}
	if pid := os.Getenv(config.EnvDaemonPid); pid != "" {
		return r.fail(exitUsage, api.CodeUsage, fmt.Sprintf("serve is refused here: this process runs as a server of mcpx's own daemon (pid %s, %s), and mcpx never serves itself. Remove this entry from the config mcpx reads; register `mcpx serve` only in the hosts that use mcpx (docs/serve.md)", pid, config.EnvDaemonPid), "")
	}
	o.Log = log.New(stderr, "mcpx serve: ", 0)
	if p := os.Getenv("MCPX_SERVE_CPUPROFILE"); p != "" {
		// Profiling on demand (docs/performance.md): serve's CPU profile,
		// written when it exits. Never by default.
		stop, err := cpuProfile(p)
		if err != nil {
			return r.fail(exitUsage, api.CodeUsage, "serve: MCPX_SERVE_CPUPROFILE: "+err.Error(), "")
		}
		defer stop()
	}
	err := Run(ctx, o, stdin, out)
	if err == nil || errors.Is(err, context.Canceled) {
		return exitOK
	}
	return r.failed(err)
}

// usageError is a configuration or command line that cannot be served.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func isUsage(err error) bool {
	var ue *usageError
	var un *unknownNamespaceError
	var ce *client.ConfigError
	return errors.As(err, &ue) || errors.As(err, &un) || errors.As(err, &ce)
}

// checkLoopback refuses an address that is not a loopback IP or localhost.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %s: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--http %s is not a loopback address; anyone who can reach it could call your tools. Use 127.0.0.1:PORT, or pass --http-allow-remote if you mean it", addr)
}

// Run serves until stdin ends (stdio), ctx ends, or the HTTP server fails.
func Run(ctx context.Context, o Options, stdin io.Reader, stdout io.Writer) error {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Log == nil {
		o.Log = log.New(io.Discard, "", 0)
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.MaxBody <= 0 {
		o.MaxBody = maxBody
	}
	if o.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		o.Dir = wd
	}
	paths, err := config.DefaultPaths(o.Getenv)
	if err != nil {
		return fmt.Errorf("find mcpx directories: %w", err)
	}
	// The key, then the port, before anything else: a taken port is the
	// likeliest failure, and is told at once; once the port answers, the
	// key is there to read.
	var key string
	if (o.HTTP != "" || o.Listener != nil) && !o.NoKey {
		if key, err = serveKey(paths.ServeKey()); err != nil {
			return err
		}
	}
	ln := o.Listener
	if o.HTTP != "" && ln == nil {
		if ln, err = net.Listen("tcp", o.HTTP); err != nil {
			if errors.Is(err, syscall.EADDRINUSE) {
				return fmt.Errorf("cannot listen on %s: the port is taken (by another mcpx serve, or another program): %w", o.HTTP, err)
			}
			return fmt.Errorf("cannot listen on %s: %w", o.HTTP, err)
		}
	}
	if ln != nil {
		defer ln.Close()
		o.HTTP = ln.Addr().String()
	}
	store, err := cache.OpenStore(paths.CAS())
	if err != nil {
		return err
	}
	srv := &mcpxServer{
		opts:    o,
		paths:   paths,
		schemas: cache.NewSchemas(store, paths.Schemas()),
		mgr:     detectLater(o.Getenv, paths),
	}
	if err := srv.reload(ctx); err != nil {
		return err
	}
	for ns := range o.Namespaces {
		if _, ok := srv.cfg().Servers[ns]; !ok {
			names := srv.cfg().Names()
			return &unknownNamespaceError{ns: ns, suggestion: search.Suggest(ns, names), have: names}
		}
		if ln == nil && len(o.Namespaces) == 1 {
			srv.single = ns // stdio: that server under its own names
		}
	}
	srv.sync(ctx, true)

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // before the wait
	wg.Add(1)
	go func() {
		defer wg.Done()
		srv.watch(ctx)
	}()

	defer srv.closeSubscriptions() // the hosts' resource subscriptions end with serve
	if ln == nil {
		in, restore := pollableStdin(stdin)
		defer restore()
		return serveStdio(ctx, srv.frontOf(srv.single), in, stdout)
	}
	h := &httpHandler{s: srv, keyPath: paths.ServeKey(), maxBody: o.MaxBody}
	base := "http://" + ln.Addr().String() + "/mcp"
	if o.NoKey {
		o.Log.Printf("WARNING: --no-key: any local user, and any program that can reach %s, can call your tools with your credentials", ln.Addr())
		o.Log.Printf("serving MCP on %s (every server) and %s/NS (one server under its own names)", base, base)
	} else {
		h.key = newKeyChecker(key)
		o.Log.Printf("serving MCP on %s?key=%s (every server) and %s/NS?key=… (one server under its own names)", base, key, base)
		o.Log.Printf("requests carry the key as \"Authorization: Bearer KEY\" or ?key=KEY; it is kept in %s", paths.ServeKey())
	}
	// Recorded so that a config entry pointing here is known to be mcpx
	// itself, and skipped (config.ServeRecord).
	if remove, err := config.WriteServeRecord(paths, ln.Addr().String()); err == nil {
		defer remove()
	} else {
		o.Log.Printf("%v", err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() {
		<-ctx.Done()
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		_ = hs.Shutdown(sctx)
	}()
	// Calls parked for a 2026-07-28 host's answer end with serve.
	defer srv.closeParked()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return ctx.Err()
}

// cpuProfile writes a CPU profile to path until stop is called.
func cpuProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func instructions(expose string) string {
	if expose == "search" {
		return "mcpx serves every configured MCP server through three tools: search_tools finds tools by words, describe_tool shows one tool's input schema, call_tool calls it by its NS.TOOL name."
	}
	return "mcpx serves every configured MCP server: tools are named NS.TOOL, prompts NS.NAME, and resources mcpx://NS/<the server's URI>."
}

// detectLater is the service manager, detected the first time the daemon's
// socket does not answer. serve runs inside mcpxd, which is what a manager
// starts.
func detectLater(getenv config.Getenv, paths config.Paths) *service.Lazy {
	return &service.Lazy{Choose: func(ctx context.Context) (service.Manager, error) {
		exe, err := mcpxd.Executable()
		if err != nil {
			return nil, err
		}
		m, _, err := service.Detect(ctx, getenv, paths, mcpxd.Path(exe))
		return m, err
	}}
}
