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
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/mcpxd"
	"github.com/mcpx-dev/mcpx/internal/peercred"
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
	return fmt.Sprintf("daemon answered %d", e.Status)
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
	// Ask, when set, asks the user for the value of a VS Code input
	// (${input:ID}) a server needs and the captured environment does not
	// hold yet. Nil: such inputs stay unset and the daemon reports them.
	Ask func(config.Input) (string, error)
	// RequestTimeout bounds every request but calls: discovery, status,
	// refresh (default 2 m; a refresh may start every server).
	RequestTimeout time.Duration
	// CallMargin is added to a call's bound, the server's callTimeout plus
	// startTimeout, for the daemon's own work (default 30 s).
	CallMargin time.Duration
	// Snapshot resolves the configuration through the snapshot kept for
	// the directory (config.Snapshots in Paths.Snapshots()): a command in
	// a directory whose sources did not change reads the Brief it needs
	// instead of every source, and skips reading the key records and the
	// captured environment when their stamps say they hold what it would
	// write. Config then reads the sources on first use.
	Snapshot bool
	// KeepAlive keeps connections to the daemon open for later requests
	// (keepalive.go): for a long-lived process that sends many, mcpx
	// serve. The CLI sends one request and leaves it off.
	KeepAlive bool
	// OnUnresponsive, when set, is told (once per request, on the
	// request's goroutine) that the daemon has not begun to answer for a
	// few seconds and did not answer a health check either (silence.go):
	// the caller can tell the user why the command waits.
	OnUnresponsive func(Unresponsive)
}

// Client talks to the daemon serving one directory. It is safe for
// concurrent use.
type Client struct {
	dir       string
	getenv    config.Getenv
	lookupEnv func(string) (string, bool)
	// brief is what requests need of the configuration; cfg the whole of
	// it, read on first use when a snapshot served the brief (snap).
	brief   *config.Brief
	cfg     *config.Config
	cfgOnce sync.Once
	snap    *config.Snapshot
	key     config.DaemonKey
	paths   config.Paths
	socket  string
	manager service.Manager
	wait    time.Duration
	ask     func(config.Input) (string, error)
	timeout time.Duration
	margin  time.Duration
	// peerUID reads the uid serving a connection (peercred.UID; a seam for
	// tests).
	peerUID func(net.Conn) (int, error)
	// uid is the user the client acts for (os.Getuid; a seam for tests).
	uid int
	// self is the mcpxd this client would start; a daemon reporting
	// another build is replaced (upgrade.go).
	self    string
	upgrade upgradeState
	// pool holds idle connections (Options.KeepAlive; nil: a connection
	// per request).
	pool *connPool
	// onUnresponsive is Options.OnUnresponsive; silentAfter, probeTimeout
	// and discoveryBound are silence.go's durations (seams for tests; 0:
	// the defaults; silentAfter < 0 turns the check off).
	onUnresponsive                            func(Unresponsive)
	silentAfter, probeTimeout, discoveryBound time.Duration

	prepareOnce sync.Once
	prepareErr  error
	// envDigest is config.EnvDigest of the environment prepare captured,
	// sent with every request (api.HeaderEnvDigest).
	envDigest string
	ensureMu  sync.Mutex
	ensured   bool
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
	var paths config.Paths
	if opts.Paths != nil {
		paths = *opts.Paths
	} else if paths, err = config.DefaultPaths(getenv); err != nil {
		return nil, fmt.Errorf("find mcpx directories: %w", err)
	}
	var (
		cfg   *config.Config
		brief *config.Brief
		snap  *config.Snapshot
	)
	if opts.Snapshot {
		if snap, err = (config.Snapshots{Dir: paths.Snapshots()}).Load(dir, lookup, self); err != nil {
			return nil, &ConfigError{err}
		}
		brief = snap.Brief
		if snap.FromSources() {
			cfg, _ = snap.Config()
		}
	} else {
		if cfg, err = config.LoadDir(dir, lookup, self); err != nil {
			return nil, &ConfigError{err}
		}
		brief = config.BriefOf(cfg)
	}
	key := brief.DaemonKey()
	socket := paths.Socket(key)
	if s := getenv("MCPX_SOCKET"); s != "" {
		socket = s
	}
	wait := opts.StartWait
	if wait <= 0 {
		wait = 10 * time.Second
	}
	c := &Client{dir: dir, getenv: getenv, lookupEnv: lookupEnv, brief: brief, cfg: cfg, snap: snap, key: key, paths: paths, socket: socket,
		manager: opts.Manager, wait: wait, timeout: opts.RequestTimeout, margin: opts.CallMargin, peerUID: peercred.UID,
		uid: os.Getuid(), self: self, ask: opts.Ask, onUnresponsive: opts.OnUnresponsive}
	if c.timeout <= 0 {
		c.timeout = 2 * time.Minute
	}
	if opts.KeepAlive {
		c.pool = &connPool{}
	}
	if c.margin <= 0 {
		c.margin = 30 * time.Second
	}
	return c, nil
}

// Config is the merged configuration of Dir. With Options.Snapshot it may
// read the sources now; a configuration that no longer loads is nil then.
func (c *Client) Config() *config.Config {
	c.cfgOnce.Do(func() {
		if c.cfg == nil && c.snap != nil {
			c.cfg, _ = c.snap.Config()
		}
	})
	return c.cfg
}

// Key is the daemon key of the configuration.
func (c *Client) Key() config.DaemonKey { return c.key }

// Socket is the path the client dials (MCPX_SOCKET when set).
func (c *Client) Socket() string { return c.socket }

func (c *Client) get(ctx context.Context, path string, query url.Values, out any) error {
	return c.do(ctx, "GET", path, query, nil, out)
}

func (c *Client) post(ctx context.Context, path string, body, out any) error {
	if body == nil {
		body = struct{}{}
	}
	return c.do(ctx, "POST", path, nil, body, out)
}
