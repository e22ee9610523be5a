package service

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/mcpxd"
	"github.com/mcpx-dev/mcpx/internal/proc"
)

// ErrStartFailed is the kind of every failure of the direct manager to bring
// a daemon up (the process exited, or its socket never answered).
var ErrStartFailed = errors.New("daemon did not start")

// StartError is a daemon the direct manager spawned that did not come up.
// Tail holds what that start wrote to the log (its last lines), so the CLI
// can show why without sending the user to the log file.
type StartError struct {
	Key    config.DaemonKey
	Log    string // the log file the daemon wrote to
	Reason string // "exited with status 2", "socket did not answer within 10s"
	Tail   string
}

func (e *StartError) Error() string {
	return fmt.Sprintf("start daemon %s: %s (log: %s)", e.Key, e.Reason, e.Log)
}

// Unwrap returns ErrStartFailed.
func (e *StartError) Unwrap() error { return ErrStartFailed }

// Direct is the manager used where no service manager is reachable: it
// starts `mcpxd daemon --key K` itself, detached, under a file lock so that
// racing clients start exactly one daemon. Like systemd, it binds the
// socket first and hands the listening descriptor to the daemon (fd 3,
// LISTEN_FDS=1, LISTEN_FDNAMES=mcpx, api.EnvListenInherited=1): Ensure
// returns as soon as the daemon is spawned, and the client connects at once
// (the kernel queues the connection until the daemon accepts). Nobody
// polls. A readiness pipe (fd 4, api.EnvReadyFD) tells a daemon that died
// or hung at start from a slow one: StartFailure reports it.
//
// It keeps no state on disk of its own; the daemon's info file and the
// socket are the truth. A Direct is safe for concurrent use (the lock is a
// flock on a file, per call).
type Direct struct {
	Paths config.Paths
	// Self is the mcpxd binary.
	Self string
	// StartTimeout bounds how long a spawned daemon may take to serve
	// before it is killed and reported by StartFailure (default 10 s).
	StartTimeout time.Duration
	// StopTimeout bounds how long Stop waits after SIGTERM before SIGKILL
	// (default 10 s).
	StopTimeout time.Duration
	// DrainTimeout is how much longer than StartTimeout Ensure waits for a
	// live daemon without a socket (one shutting down, or re-binding a
	// deleted socket) before giving up (default 20 s).
	DrainTimeout time.Duration
	// Getenv reads MCPX_SOCKET (default os.Getenv).
	Getenv config.Getenv

	mu      sync.Mutex
	spawned map[config.DaemonKey]*spawnWatch
}

// spawnWatch follows one daemon this process spawned until it serves.
type spawnWatch struct {
	done chan struct{} // closed when err is final
	err  error         // nil: it serves; else a *StartError
}

// NewDirect returns the direct manager: Ensure takes a flock on
// paths.Lock(key), re-checks the socket, binds it, and spawns `self daemon
// --key K` detached (new session, stdin closed, output to paths.Log(key))
// with the listening socket; a start that fails is reported by
// StartFailure as a *StartError carrying the log's tail.
func NewDirect(paths config.Paths, self string) Manager {
	return &Direct{Paths: paths, Self: self}
}

// Name is NameDirect.
func (d *Direct) Name() string { return NameDirect }

// Installed is always true: there is nothing to install.
func (d *Direct) Installed() (bool, error) { return true, nil }

// Install does nothing.
func (d *Direct) Install() error { return nil }

// Uninstall does nothing.
func (d *Direct) Uninstall() error { return nil }

func (d *Direct) getenv(name string) string {
	if d.Getenv != nil {
		return d.Getenv(name)
	}
	return os.Getenv(name)
}

// socket is where key's daemon listens. MCPX_SOCKET overrides it for this
// process, and the daemon we spawn inherits the same variable, so both
// sides agree.
func (d *Direct) socket(key config.DaemonKey) string {
	if s := d.getenv("MCPX_SOCKET"); s != "" {
		return s
	}
	return d.Paths.Socket(key)
}

// Ensure makes key's socket accept connections, starting a daemon on it
// when nothing listens. It does not wait for the daemon to serve: a
// connection made right after is queued by the kernel.
func (d *Direct) Ensure(ctx context.Context, key config.DaemonKey) error {
	sock := d.socket(key)
	if probe(sock) == nil {
		return nil
	}
	if err := d.Paths.EnsureRuntime(); err != nil {
		return fmt.Errorf("start daemon %s: %w", key, err)
	}
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		return fmt.Errorf("start daemon %s: %w", key, err)
	}
	lock := flock.New(d.Paths.Lock(key), flock.SetPermissions(0o600))
	defer lock.Close()
	lctx, cancel := context.WithTimeout(ctx, d.startTimeout()+d.drainTimeout()+5*time.Second)
	defer cancel()
	if ok, err := lock.TryLockContext(lctx, 10*time.Millisecond); !ok {
		if err == nil {
			err = lctx.Err()
		}
		return fmt.Errorf("start daemon %s: lock %s: %w", key, d.Paths.Lock(key), err)
	}
	defer lock.Unlock()

	// Another client may have started it while we waited for the lock.
	err := probe(sock)
	if err == nil {
		return nil
	}
	// A daemon for this key may be alive without a socket file (someone
	// deleted it): starting another would make two. It binds its path
	// again; wait for that (or for it to exit).
	if d.daemonAlive(key) {
		if err := d.waitAlive(ctx, key, sock); err != nil || probe(sock) == nil {
			return err
		}
	}
	// Nobody listens: a socket file left by a daemon that died would make
	// the bind fail. We hold the lock, so no other start races us.
	if errors.Is(err, syscall.ECONNREFUSED) {
		os.Remove(sock)
	}
	return d.spawn(key, sock)
}

// daemonAlive reports whether a daemon for key holds its alive lock
// (config.Paths.Alive, taken by the daemon for its whole life): a daemon
// runs, whether or not its socket file exists.
func (d *Direct) daemonAlive(key config.DaemonKey) bool {
	l := flock.New(d.Paths.Alive(key), flock.SetPermissions(0o600))
	defer l.Close()
	ok, err := l.TryRLock()
	if err != nil {
		return false // cannot tell (no file, no permission): as before
	}
	if ok {
		l.Unlock()
	}
	return !ok
}

// waitAlive waits until key's live daemon answers on sock again (it binds
// a deleted socket again within seconds) or lets go of its alive lock (a
// daemon shutting down: its grace for calls in flight and for stopping its
// servers is 10 s each). It returns nil in both cases and an error when
// neither happens within the start timeout plus DrainTimeout.
func (d *Direct) waitAlive(ctx context.Context, key config.DaemonKey, sock string) error {
	deadline := time.Now().Add(d.startTimeout() + d.drainTimeout())
	for d.daemonAlive(key) {
		if probe(sock) == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return &StartError{Key: key, Log: d.Paths.Log(key),
				Reason: fmt.Sprintf("a daemon for this key is running but does not answer on %s (run `mcpx stop`)", sock)}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("start daemon %s: %w", key, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

func (d *Direct) drainTimeout() time.Duration {
	if d.DrainTimeout > 0 {
		return d.DrainTimeout
	}
	return 20 * time.Second
}

func (d *Direct) startTimeout() time.Duration {
	if d.StartTimeout > 0 {
		return d.StartTimeout
	}
	return 10 * time.Second
}

// spawn binds sock, starts the daemon with it and returns; a goroutine
// follows the start (StartFailure). Called with the lock held.
func (d *Direct) spawn(key config.DaemonKey, sock string) error {
	if _, err := os.Stat(d.Self); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("start daemon %s: %w", key, &mcpxd.NotFoundError{Beside: d.Self})
	}
	logPath := d.Paths.Log(key)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return fmt.Errorf("start daemon %s: %w", key, err)
	}
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("start daemon %s: open log: %w", key, err)
	}
	defer logf.Close()
	var start int64
	if fi, err := logf.Stat(); err == nil {
		start = fi.Size()
	}

	lnFile, err := bindFile(sock)
	if err != nil {
		return fmt.Errorf("start daemon %s: %w", key, err)
	}
	defer lnFile.Close() // the daemon has its own copy
	readyR, readyW, err := os.Pipe()
	if err != nil {
		os.Remove(sock)
		return fmt.Errorf("start daemon %s: %w", key, err)
	}

	cmd := exec.Command(d.Self, "daemon", "--key", string(key))
	cmd.Stdin = nil // /dev/null
	cmd.Stdout = logf
	cmd.Stderr = logf
	cmd.ExtraFiles = []*os.File{lnFile, readyW} // fd 3, fd 4
	cmd.Env = append(daemonEnv(os.Environ()), "LISTEN_FDS=1", "LISTEN_FDNAMES=mcpx",
		api.EnvListenInherited+"=1", api.EnvReadyFD+"=4")
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	readyW.Close()
	if err != nil {
		readyR.Close()
		os.Remove(sock)
		return fmt.Errorf("start daemon %s: %w", key, err)
	}
	w := &spawnWatch{done: make(chan struct{})}
	d.mu.Lock()
	if d.spawned == nil {
		d.spawned = map[config.DaemonKey]*spawnWatch{}
	}
	d.spawned[key] = w
	d.mu.Unlock()
	go d.follow(w, cmd, readyR, key, sock, logPath, start)
	return nil
}

// follow waits until the spawned daemon reports READY on the pipe, exits,
// or overruns the start timeout (then it is killed, which closes the
// listening socket: queued connections fail at once).
func (d *Direct) follow(w *spawnWatch, cmd *exec.Cmd, readyR *os.File, key config.DaemonKey, sock, logPath string, start int64) {
	defer close(w.done)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps the child if it dies
	ready := make(chan bool, 1)
	go func() {
		defer readyR.Close()
		b, _ := io.ReadAll(io.LimitReader(readyR, 64))
		ready <- strings.HasPrefix(string(b), "READY=1")
	}()
	fail := func(reason string) error {
		return &StartError{Key: key, Log: logPath, Reason: reason, Tail: logTail(logPath, start, 20)}
	}
	timer := time.NewTimer(d.startTimeout())
	defer timer.Stop()
	select {
	case ok := <-ready:
		if ok {
			return
		}
		// The pipe closed without READY: the daemon exited (or closed it).
		err := <-exited
		w.err = fail(exitReason(err))
	case err := <-exited:
		w.err = fail(exitReason(err))
	case <-timer.C:
		cmd.Process.Kill()
		w.err = fail(fmt.Sprintf("socket %s did not answer within %s", sock, d.startTimeout()))
	}
	// Nobody serves the socket now; the next Ensure binds it again.
	if probe(sock) != nil {
		os.Remove(sock)
	}
}

func exitReason(err error) string {
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return "exited: " + ee.ProcessState.String()
	case err == nil:
		return "exited with status 0 before it served"
	default:
		return "exited: " + err.Error()
	}
}

// StartFailure reports why the daemon this Direct spawned for key did not
// come up: nil when it serves (or none was spawned here), else a
// *StartError. It waits, bounded by ctx, until the start is decided; the
// client asks only after a request failed, when it is decided or about to
// be.
func (d *Direct) StartFailure(ctx context.Context, key config.DaemonKey) error {
	d.mu.Lock()
	w := d.spawned[key]
	d.mu.Unlock()
	if w == nil {
		return nil
	}
	select {
	case <-w.done:
		return w.err
	case <-ctx.Done():
		return nil
	}
}

// bindFile listens on a unix socket at path (mode 0600) and returns the
// listening socket as a file to hand to the daemon.
func bindFile(path string) (*os.File, error) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("bind %s: %w", path, err)
	}
	ul := ln.(*net.UnixListener)
	ul.SetUnlinkOnClose(false) // the file outlives our copy of the socket
	defer ul.Close()
	if err := os.Chmod(path, 0o600); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("bind %s: %w", path, err)
	}
	f, err := ul.File()
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("bind %s: %w", path, err)
	}
	return f, nil
}

// daemonEnv is the caller's environment without the variables that would
// make the daemon think a service manager passed it a socket or wants
// notifications.
func daemonEnv(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return strings.HasPrefix(name, "LISTEN_") || name == "NOTIFY_SOCKET"
	})
}

// probe connects to the socket and hangs up. It is the only way to know that
// a daemon (or a service manager holding the socket) answers.
func probe(sock string) error {
	c, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

// logTail returns the last n lines of what was written to path after offset
// (everything, when the file shrank).
func logTail(path string, offset int64, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() < offset {
		offset = 0
	}
	// Keep at most the last 64 KiB of this start's output.
	if fi, err := f.Stat(); err == nil && fi.Size()-offset > 64<<10 {
		offset = fi.Size() - 64<<10
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<10)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// State reads the info file and asks the kernel whether its pid lives. It
// never connects to the socket.
func (d *Direct) State(ctx context.Context, key config.DaemonKey) (State, error) {
	st := State{Key: key, Manager: NameDirect, Socket: SocketAbsent, Service: ServiceIdle,
		Detail: map[string]string{"info": d.Paths.Info(key), "log": d.Paths.Log(key)}}
	sock := d.Paths.Socket(key)
	info, err := readInfo(d.Paths.Info(key))
	if err != nil {
		return st, fmt.Errorf("state of daemon %s: %w", key, err)
	}
	if info != nil && info.Socket != "" {
		sock = info.Socket
	}
	if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
		st.Socket = SocketListening
	}
	if info == nil {
		return st, nil
	}
	st.PID = info.Pid
	st.Since = info.StartedAt
	if info.Running() {
		st.Service = ServiceRunning
	} else {
		st.Service = ServiceStale
		st.Socket = SocketAbsent // a file nobody listens on
		st.LastExit = "process gone without removing its info file"
		if proc.Alive(info.Pid) {
			st.LastExit = fmt.Sprintf("process gone without removing its info file (pid %d now belongs to another process)", info.Pid)
		}
	}
	return st, nil
}

// readInfo is config.ReadInfo with a missing file reported as nil, nil.
func readInfo(path string) (*config.InfoFile, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	info, err := config.ReadInfo(path)
	if errors.Is(err, os.ErrNotExist) { // removed between Stat and read
		return nil, nil
	}
	return info, err
}

// Stop sends SIGTERM to the daemon named by the info file, waits (bounded)
// for it to go, then SIGKILLs it. A daemon that is not running is not an
// error. The socket argument has no meaning here: the daemon owns its socket.
func (d *Direct) Stop(ctx context.Context, key config.DaemonKey, socket bool) error {
	info, err := readInfo(d.Paths.Info(key))
	if err != nil {
		return fmt.Errorf("stop daemon %s: %w", key, err)
	}
	if info == nil || !info.Running() {
		d.cleanup(key, info)
		return nil
	}
	// Signals go only to the process proven to be this daemon (start time,
	// else command line; through a pidfd where there are pidfds): a pid
	// from a file may belong to someone else by now.
	if err := info.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop daemon %s (pid %d): %w", key, info.Pid, err)
	}
	timeout := d.StopTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	if waitGone(ctx, info, timeout) {
		return nil
	}
	if err := info.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("stop daemon %s (pid %d): %w", key, info.Pid, err)
	}
	if !waitGone(ctx, info, 5*time.Second) {
		return fmt.Errorf("stop daemon %s: pid %d survived SIGKILL", key, info.Pid)
	}
	d.cleanup(key, info)
	return nil
}

// cleanup removes what a daemon that did not exit cleanly left behind.
func (d *Direct) cleanup(key config.DaemonKey, info *config.InfoFile) {
	if info == nil {
		return
	}
	os.Remove(d.Paths.Info(key))
	if info.Socket != "" && probe(info.Socket) != nil {
		os.Remove(info.Socket)
	}
}

func waitGone(ctx context.Context, info *config.InfoFile, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for info.Running() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// List reports every key with an info file in the runtime directory or a key
// record in the state directory.
func (d *Direct) List(ctx context.Context) ([]State, error) {
	keys := map[config.DaemonKey]bool{}
	for _, pattern := range []string{filepath.Join(d.Paths.Runtime, "*.json"), filepath.Join(d.Paths.KeysDir(), "*.json")} {
		matches, err := filepath.Glob(pattern)
		if err != nil {
			return nil, fmt.Errorf("list daemons: %w", err)
		}
		for _, m := range matches {
			keys[config.DaemonKey(strings.TrimSuffix(filepath.Base(m), ".json"))] = true
		}
	}
	var out []State
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		st, err := d.State(ctx, k)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}
