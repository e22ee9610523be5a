// Package client is the CLI side of the daemon's socket: it resolves the
// configuration of a directory to a daemon key and a socket, prepares what
// the daemon needs before activation (key record, captured environment),
// activates the daemon through a service.Manager when the socket does not
// answer, and speaks the HTTP API of daemon/api over the socket.
//
// The client never prints. Failures are typed: *ConfigError (exit 2 in the
// CLI), *APIError for every non-2xx answer, and errors wrapping
// ErrDaemonUnavailable when the daemon cannot be reached.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/mcpxd"
	"github.com/mcpx-dev/mcpx/service"
)

// ErrDaemonUnavailable is the kind of every failure to reach the daemon:
// the socket cannot be activated, the connection broke, no answer came.
var ErrDaemonUnavailable = errors.New("daemon unavailable")

// ConfigError is a configuration that cannot be used: a file that does not
// parse (*config.ParseError inside), a bad value, an unset ${VAR}
// (*config.UnsetVarError inside), a --config file that does not exist.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// APIError is a non-2xx answer of the daemon.
// (api.Error cannot be embedded: its field Error would shadow the method.)
type APIError struct {
	Status int
	Body   api.Error
}

func (e *APIError) Error() string {
	if e.Body.Error != "" {
		return e.Body.Error
	}
	return fmt.Sprintf("daemon answered %d %s", e.Status, http.StatusText(e.Status))
}

// Code is the daemon's error code (api.Code*).
func (e *APIError) Code() string { return e.Body.Code }

// Options say which directory the client serves and how to reach its daemon.
// Zero fields take the process's defaults.
type Options struct {
	// Dir is the directory whose configuration applies (default: the
	// working directory).
	Dir string
	// ConfigFile selects exactly one config file (like MCPX_CONFIG, which
	// it overrides); relative to Dir.
	ConfigFile string
	// Getenv reads the caller's environment (default os.Getenv). The
	// ${VAR}s of the config are captured from it.
	Getenv config.Getenv
	// LookupEnv reads the caller's environment telling set-but-empty from
	// unset (default os.LookupEnv when Getenv is nil, else derived from
	// Getenv with empty meaning unset).
	LookupEnv func(string) (string, bool)
	// Self is the absolute path of the mcpxd binary the built-in config
	// runs and managers start (default: mcpxd.Path of this executable).
	Self string
	// Manager activates the daemon when the socket does not answer. Nil
	// means the socket must already answer.
	Manager service.Manager
	// Paths overrides config.DefaultPaths(Getenv).
	Paths *config.Paths
	// StartWait bounds how long a request waits for the socket to accept
	// after Manager.Ensure (default 10 s).
	StartWait time.Duration
}

// Client talks to the daemon serving one directory. It is safe for
// concurrent use.
type Client struct {
	dir       string
	getenv    config.Getenv
	lookupEnv func(string) (string, bool)
	cfg       *config.Config
	key       config.DaemonKey
	paths     config.Paths
	socket    string
	manager   service.Manager
	wait      time.Duration
	http      *http.Client

	prepareOnce sync.Once
	prepareErr  error
	ensureMu    sync.Mutex
	ensured     bool
}

// New resolves the configuration of opts.Dir and returns a client for its
// daemon. It reads files only; nothing is written and nothing connects until
// the first request.
func New(opts Options) (*Client, error) {
	getenv, lookupEnv := opts.Getenv, opts.LookupEnv
	if getenv == nil {
		getenv = os.Getenv
		if lookupEnv == nil {
			lookupEnv = os.LookupEnv
		}
	}
	if lookupEnv == nil {
		lookupEnv = func(k string) (string, bool) {
			v := getenv(k)
			return v, v != ""
		}
	}
	dir := opts.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("find working directory: %w", err)
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("resolve directory %s: %w", opts.Dir, err)
	}
	if fi, err := os.Stat(dir); err != nil {
		return nil, &ConfigError{fmt.Errorf("directory %s: %w", dir, err)}
	} else if !fi.IsDir() {
		return nil, &ConfigError{fmt.Errorf("directory %s: not a directory", dir)}
	}
	self := opts.Self
	if self == "" {
		exe, err := mcpxd.Executable()
		if err != nil {
			return nil, err
		}
		self = mcpxd.Path(exe)
	}
	lookup := getenv
	if opts.ConfigFile != "" {
		file := opts.ConfigFile
		lookup = func(name string) string {
			if name == "MCPX_CONFIG" {
				return file
			}
			return getenv(name)
		}
	}
	cfg, err := config.LoadDir(dir, lookup, self)
	if err != nil {
		return nil, &ConfigError{err}
	}
	var paths config.Paths
	if opts.Paths != nil {
		paths = *opts.Paths
	} else if paths, err = config.DefaultPaths(getenv); err != nil {
		return nil, fmt.Errorf("find mcpx directories: %w", err)
	}
	key := cfg.DaemonKey()
	socket := paths.Socket(key)
	if s := getenv("MCPX_SOCKET"); s != "" {
		socket = s
	}
	wait := opts.StartWait
	if wait <= 0 {
		wait = 10 * time.Second
	}
	c := &Client{dir: dir, getenv: getenv, lookupEnv: lookupEnv, cfg: cfg, key: key, paths: paths, socket: socket,
		manager: opts.Manager, wait: wait}
	c.http = &http.Client{Transport: &http.Transport{
		DialContext: c.dial,
		// Each CLI invocation makes about one request; a fresh connection
		// per request means a daemon restart (which closes idle
		// connections) can never race a request onto a dying connection.
		DisableKeepAlives:     true,
		ResponseHeaderTimeout: 0, // calls may legitimately take long; ctx bounds them
	}}
	return c, nil
}

// Dir is the directory the client serves (absolute).
func (c *Client) Dir() string { return c.dir }

// Config is the merged configuration of Dir.
func (c *Client) Config() *config.Config { return c.cfg }

// Key is the daemon key of the configuration.
func (c *Client) Key() config.DaemonKey { return c.key }

// Paths are the mcpx directories in use.
func (c *Client) Paths() config.Paths { return c.paths }

// Socket is the path the client dials (MCPX_SOCKET when set).
func (c *Client) Socket() string { return c.socket }

// Manager is the service manager used for activation (may be nil).
func (c *Client) Manager() service.Manager { return c.manager }

// dial connects to the socket, activating the daemon through the manager
// when nothing listens, then waits (bounded) for the socket to accept.
func (c *Client) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", c.socket)
	if err == nil || !notListening(err) || c.manager == nil || ctx.Value(noActivate{}) != nil {
		return conn, err
	}
	if err := c.ensure(ctx); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(c.wait)
	for delay := 2 * time.Millisecond; ; delay = min(delay*2, 100*time.Millisecond) {
		conn, err = d.DialContext(ctx, "unix", c.socket)
		if err == nil || !notListening(err) || time.Now().After(deadline) {
			return conn, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
}

// noActivate marks a request context: do not start a daemon for it.
type noActivate struct{}

// ensure calls Manager.Ensure once per client (again after a failure).
func (c *Client) ensure(ctx context.Context) error {
	c.ensureMu.Lock()
	defer c.ensureMu.Unlock()
	if c.ensured {
		return nil
	}
	if err := c.manager.Ensure(ctx, c.key); err != nil {
		return fmt.Errorf("activate daemon %s via %s: %w", c.key, c.manager.Name(), err)
	}
	c.ensured = true
	return nil
}

func notListening(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// retryable reports whether a request that failed with err may be sent
// again on a fresh connection. It may when the daemon provably did not read
// it: it was never fully written (the connection closed first), the
// connection was reset with our request unread (a listener closed under a
// queued connection), or our write was refused. A GET may also be repeated
// after a plain EOF (the daemon went away before answering). Anything else
// may have been read and acted on before the connection closed (a daemon
// killed in the middle of a call, or closing calls that overran its shutdown
// grace), and running a tool twice is worse than reporting the failure.
// A failed dial is never retried here: dial already activated and waited.
func retryable(method string, written bool, err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return false
	}
	if !written || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	return method == http.MethodGet && errors.Is(err, io.EOF)
}

// do sends one request and decodes a 2xx JSON answer into out. A request
// that failed in a way retryable allows is sent again: a GET up to three
// more times, anything else (a call) once.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	if err := c.prepare(); err != nil {
		return err
	}
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return fmt.Errorf("%s %s: encode request: %w", method, path, err)
		}
	}
	u := "http://mcpx" + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	attempts := 2
	if method == http.MethodGet {
		attempts = 4
	}
	var resp *http.Response
	for i := 1; ; i++ {
		var written atomic.Bool
		trace := &httptrace.ClientTrace{WroteRequest: func(w httptrace.WroteRequestInfo) { written.Store(w.Err == nil) }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), method, u, bytes.NewReader(payload))
		if err != nil {
			return fmt.Errorf("%s %s: %w", method, path, err)
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err = c.http.Do(req)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", method, path, ctx.Err())
		}
		if i >= attempts || !retryable(method, written.Load(), err) {
			return fmt.Errorf("%s %s on %s: %w: %w", method, path, c.socket, ErrDaemonUnavailable, unwrapURL(err))
		}
		time.Sleep(time.Duration(i) * 20 * time.Millisecond)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w: %w", method, path, ErrDaemonUnavailable, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &APIError{Status: resp.StatusCode}
		if json.Unmarshal(data, &e.Body) != nil || e.Body.Error == "" {
			e.Body.Error = fmt.Sprintf("%s %s: daemon answered %s: %s", method, path, resp.Status, bytes.TrimSpace(data))
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
	}
	return nil
}

// unwrapURL drops net/http's *url.Error wrapper, whose message repeats the
// made-up URL.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func (c *Client) get(ctx context.Context, path string, query url.Values, out any) error {
	return c.do(ctx, http.MethodGet, path, query, nil, out)
}

func (c *Client) post(ctx context.Context, path string, body, out any) error {
	if body == nil {
		body = struct{}{}
	}
	return c.do(ctx, http.MethodPost, path, nil, body, out)
}
