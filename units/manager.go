package units

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	sdbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
	"golang.org/x/sys/unix"
)

// Transports to the user manager.
const (
	ViaBus     = "bus"     // the user D-Bus
	ViaPrivate = "private" // $XDG_RUNTIME_DIR/systemd/private, peer to peer
)

// conn is an open connection to the user manager.
type conn struct {
	*sdbus.Conn
	via    string
	cancel context.CancelFunc
}

// busAddress returns the user bus to try, or "". It never returns an
// autolaunch address: asking a question must not start a bus.
func (s *Systemd) busAddress() string {
	if s.NoBus {
		return ""
	}
	if a := s.BusAddress; a != "" && !strings.HasPrefix(a, "autolaunch:") {
		return a
	}
	if s.RuntimeDir == "" {
		return ""
	}
	p := filepath.Join(s.RuntimeDir, "bus")
	if fi, err := os.Stat(p); err == nil && fi.Mode()&os.ModeSocket != 0 {
		return "unix:path=" + p
	}
	return ""
}

// privateSocket returns systemd's private socket when it exists, or "".
func (s *Systemd) privateSocket() string {
	if s.RuntimeDir == "" {
		return ""
	}
	p := filepath.Join(s.RuntimeDir, "systemd", "private")
	if fi, err := os.Stat(p); err == nil && fi.Mode()&os.ModeSocket != 0 {
		return p
	}
	return ""
}

// connect returns the open connection, dialing the user bus first and
// systemd's private socket second. The connection outlives ctx; ctx only
// bounds the dialing.
func (s *Systemd) connect(ctx context.Context) (*conn, error) {
	if s.conn != nil && s.conn.Connected() {
		return s.conn, nil
	}
	s.Close()
	var errs []error
	if addr := s.busAddress(); addr != "" {
		// A bus daemon that is restarting can hold a dial until ctx ends;
		// leave the private socket half of the time to answer instead.
		busCtx, cancel := ctx, context.CancelFunc(func() {})
		if deadline, ok := ctx.Deadline(); ok && s.privateSocket() != "" {
			busCtx, cancel = context.WithTimeout(ctx, time.Until(deadline)/2)
		}
		c, err := dial(busCtx, ViaBus, addr)
		cancel()
		if err == nil {
			s.conn = c
			return c, nil
		}
		errs = append(errs, fmt.Errorf("user bus %s: %w", addr, err))
	}
	if p := s.privateSocket(); p != "" {
		c, err := dial(ctx, ViaPrivate, "unix:path="+p)
		if err == nil {
			s.conn = c
			return c, nil
		}
		errs = append(errs, fmt.Errorf("private socket %s: %w", p, err))
	}
	if len(errs) == 0 {
		if s.RuntimeDir == "" {
			return nil, fmt.Errorf("%w: XDG_RUNTIME_DIR is not set", ErrUnavailable)
		}
		return nil, fmt.Errorf("%w: no user bus and no %s", ErrUnavailable, filepath.Join(s.RuntimeDir, "systemd", "private"))
	}
	return nil, fmt.Errorf("%w: %w", ErrUnavailable, errors.Join(errs...))
}

func dial(ctx context.Context, via, addr string) (*conn, error) {
	// The connection's own context must outlive ctx; cancelling it closes
	// the connection, which is how a dial that overruns ctx is abandoned.
	connCtx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel)
	c, err := sdbus.NewConnection(func() (*dbus.Conn, error) {
		bc, err := dbus.Dial(addr, dbus.WithContext(connCtx))
		if err != nil {
			return nil, err
		}
		if err := bc.Auth([]dbus.Auth{dbus.AuthExternal(strconv.Itoa(os.Getuid()))}); err != nil {
			bc.Close()
			return nil, err
		}
		if via == ViaBus {
			if err := bc.Hello(); err != nil {
				bc.Close()
				return nil, err
			}
		}
		return bc, nil
	})
	if err == nil {
		// A bus may have no systemd on it: ask the manager something.
		if _, err = c.GetManagerProperty("Version"); err != nil {
			c.Close()
		}
	}
	if err == nil && !stop() {
		// ctx ended as the dial finished: the connection is being closed.
		c.Close()
		err = ctx.Err()
	}
	if err != nil {
		cancel()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	return &conn{Conn: c, via: via, cancel: cancel}, nil
}

// Close closes the D-Bus connection, if any.
func (s *Systemd) Close() {
	if s.conn != nil {
		s.conn.Conn.Close()
		s.conn.cancel()
		s.conn = nil
	}
}

// pingTimeout bounds Ping. Where there is no user manager the dial fails
// at once (no socket); the bound matters only for a bus or manager that is
// slow to answer. It is generous because the answer picks the service
// manager: 2 s on a loaded machine made mcpx start a direct daemon beside
// a working systemd (seen in TestSystemdDaemonUsesTheShellsStateAndCache).
const pingTimeout = 10 * time.Second

// Available reports whether the user manager answers (on the bus or the
// private socket). It keeps the connection for later calls.
func (s *Systemd) Available(ctx context.Context) bool { return s.Ping(ctx) == nil }

// Ping connects to the user manager (bounded to pingTimeout) and returns
// why it cannot, wrapping ErrUnavailable.
func (s *Systemd) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	_, err := s.connect(ctx)
	return err
}

// retry runs f, and again on a fresh connection when the old one was
// closed under it: once more over the bus, then once over systemd's private
// socket. A user bus daemon can go away while the manager lives on (seen
// around daemon-reload); the operations are idempotent.
func (s *Systemd) retry(f func() error) error {
	err := f()
	for attempt := 1; err != nil && s.dropped(err) && attempt <= 2; attempt++ {
		s.Close()
		if attempt == 2 && s.privateSocket() != "" {
			// The bus went away twice: ask systemd directly this once.
			noBus := s.NoBus
			s.NoBus = true
			err = f()
			s.Close()
			s.NoBus = noBus
			break
		}
		time.Sleep(50 * time.Millisecond) // let the bus's socket unit start it again
		err = f()
	}
	return err
}

// dropped reports whether err means the connection went away under the
// call. The bus daemon closing the socket surfaces as EOF or a reset on
// the read before the connection notices it is closed.
func (s *Systemd) dropped(err error) bool {
	return errors.Is(err, dbus.ErrClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, unix.ECONNRESET) || errors.Is(err, unix.EPIPE) ||
		s.conn != nil && !s.conn.Connected()
}

// Via reports the transport in use (ViaBus, ViaPrivate), "" before connecting.
func (s *Systemd) Via() string {
	if s.conn == nil {
		return ""
	}
	return s.conn.via
}

// Reload makes the manager re-read unit files (daemon-reload).
func (s *Systemd) Reload(ctx context.Context) error {
	return s.retry(func() error { return s.reload(ctx) })
}

func (s *Systemd) reload(ctx context.Context) error {
	c, err := s.connect(ctx)
	if err != nil {
		return fmt.Errorf("reload systemd user manager: %w", err)
	}
	if err := c.ReloadContext(ctx); err != nil {
		return fmt.Errorf("reload systemd user manager: %w", err)
	}
	return nil
}

// Install writes both templates and reloads the manager. Idempotent.
// When a package's templates start s.Bin it writes nothing and removes
// the copies mcpx wrote earlier, which would hide the package's.
func (s *Systemd) Install(ctx context.Context) error {
	_, uses, err := s.usesPackaged()
	if err != nil {
		return fmt.Errorf("install systemd units: %w", err)
	}
	if !uses {
		if _, err := s.writeUnits(); err != nil {
			return err
		}
		return s.Reload(ctx)
	}
	copies, err := s.shadowing()
	if err != nil {
		return fmt.Errorf("install systemd units: %w", err)
	}
	for _, p := range copies {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("install systemd units: remove the copy that hides the packaged unit: %w", err)
		}
	}
	return s.Reload(ctx)
}

// Uninstall stops every mcpx instance, removes both templates and reloads
// the manager. Idempotent; without a reachable manager it only removes
// the files.
func (s *Systemd) Uninstall(ctx context.Context) error {
	if s.Available(ctx) {
		all, err := s.List(ctx)
		if err != nil {
			return fmt.Errorf("uninstall systemd units: %w", err)
		}
		for _, k := range all {
			if err := s.Stop(ctx, k.Key, true); err != nil {
				return fmt.Errorf("uninstall systemd units: %w", err)
			}
		}
	}
	for _, p := range []string{s.SocketPath(), s.ServicePath()} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("uninstall systemd unit: %w", err)
		}
	}
	if s.conn != nil {
		return s.Reload(ctx)
	}
	return nil
}

// runJob starts a job through start and waits for it to finish, then
// checks the unit reached want (an ActiveState). The JobRemoved signal is
// used when it arrives, but signals can be dropped (or never sent on a bus
// connection that did not subscribe), so the job list is polled too.
func runJob(ctx context.Context, c *conn, what, unit, want string, start func(ch chan<- string) (int, error)) error {
	ch := make(chan string, 1)
	id, err := start(ch)
	if err != nil {
		return fmt.Errorf("%s %s: %w", what, unit, err)
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case res := <-ch:
			if res != "done" {
				return fmt.Errorf("%s %s: job %s: %w", what, unit, res, ErrJobFailed)
			}
			return nil
		case <-ctx.Done():
			return fmt.Errorf("%s %s: waiting for the job: %w", what, unit, ctx.Err())
		case <-tick.C:
		}
		jobs, err := c.ListJobsContext(ctx)
		if err != nil {
			return fmt.Errorf("%s %s: %w", what, unit, err)
		}
		pending := false
		for _, j := range jobs {
			pending = pending || int(j.Id) == id
		}
		if pending {
			continue
		}
		p, err := c.GetUnitPropertyContext(ctx, unit, "ActiveState")
		if err != nil {
			return fmt.Errorf("%s %s: %w", what, unit, err)
		}
		if got, _ := p.Value.Value().(string); got != want && !(want == "inactive" && got == "failed") {
			return fmt.Errorf("%s %s: unit is %s: %w", what, unit, got, ErrJobFailed)
		}
		return nil
	}
}

// Ensure starts mcpx@<key>.socket and waits for the job. It never starts
// the service: the first connection to the socket does.
func (s *Systemd) Ensure(ctx context.Context, key string) error {
	return s.retry(func() error { return s.ensure(ctx, key) })
}

func (s *Systemd) ensure(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	c, err := s.connect(ctx)
	if err != nil {
		return fmt.Errorf("start %s: %w", SocketUnit(key), err)
	}
	unit := SocketUnit(key)
	// A socket left failed by a daemon that hit its start limit would
	// refuse to start: the user running a command again is the signal to
	// try again, so clear both units' failed state and rate counters.
	for _, u := range []string{ServiceUnit(key), unit} {
		if p, err := c.GetUnitPropertyContext(ctx, u, "ActiveState"); err == nil {
			if st, _ := p.Value.Value().(string); st == "failed" {
				_ = c.ResetFailedUnitContext(ctx, u)
			}
		}
	}
	return runJob(ctx, c, "start", unit, "active", func(ch chan<- string) (int, error) {
		return c.StartUnitContext(ctx, unit, "replace", ch)
	})
}

// Stop stops mcpx@<key>.service and, with socketToo, the socket; it then
// clears a failed state so the next start begins clean.
func (s *Systemd) Stop(ctx context.Context, key string, socketToo bool) error {
	return s.retry(func() error { return s.stop(ctx, key, socketToo) })
}

func (s *Systemd) stop(ctx context.Context, key string, socketToo bool) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	c, err := s.connect(ctx)
	if err != nil {
		return fmt.Errorf("stop %s: %w", ServiceUnit(key), err)
	}
	units := []string{ServiceUnit(key)}
	if socketToo {
		units = append(units, SocketUnit(key))
	}
	for _, unit := range units {
		if err := runJob(ctx, c, "stop", unit, "inactive", func(ch chan<- string) (int, error) {
			return c.StopUnitContext(ctx, unit, "replace", ch)
		}); err != nil {
			return err
		}
		// Not failed, or not loaded: nothing to clear.
		_ = c.ResetFailedUnitContext(ctx, unit)
	}
	return nil
}

// UnitState is one unit as the manager reports it.
type UnitState struct {
	Name        string
	LoadState   string // loaded | not-found | error | masked ...
	ActiveState string // active | inactive | failed | activating | deactivating ...
	SubState    string // listening | running | dead | failed ...
	Result      string // success | exit-code | signal | timeout | start-limit-hit ...
	// Service only.
	MainPID        int
	ExecMainCode   int // CLD_EXITED (1), CLD_KILLED (2), CLD_DUMPED (3); 0 if never ran
	ExecMainStatus int // exit status or signal number
	// Since is when the unit last entered the active state (zero if never).
	Since time.Time
}

// LastExit describes how the unit's last run ended: "exit-code 2",
// "signal KILL", or the manager's Result ("timeout", "start-limit-hit").
// "" when it succeeded or never ran.
func (u UnitState) LastExit() string {
	switch u.ExecMainCode {
	case 1: // CLD_EXITED
		if u.ExecMainStatus != 0 {
			return fmt.Sprintf("exit-code %d", u.ExecMainStatus)
		}
	case 2, 3: // CLD_KILLED, CLD_DUMPED
		name := strings.TrimPrefix(unix.SignalName(unix.Signal(u.ExecMainStatus)), "SIG")
		if name == "" {
			name = strconv.Itoa(u.ExecMainStatus)
		}
		return "signal " + name
	}
	if u.Result != "" && u.Result != "success" {
		return u.Result
	}
	return ""
}

// KeyState is the pair of units of one key.
type KeyState struct {
	Key     string
	Socket  UnitState
	Service UnitState
}

// State reads both units of key. It only reads properties: nothing is
// started, and an unknown unit reports LoadState "not-found".
func (s *Systemd) State(ctx context.Context, key string) (ks KeyState, err error) {
	err = s.retry(func() error { ks, err = s.state(ctx, key); return err })
	return ks, err
}

func (s *Systemd) state(ctx context.Context, key string) (KeyState, error) {
	if err := CheckKey(key); err != nil {
		return KeyState{}, err
	}
	c, err := s.connect(ctx)
	if err != nil {
		return KeyState{}, fmt.Errorf("read state of %s: %w", ServiceUnit(key), err)
	}
	ks := KeyState{Key: key}
	if ks.Socket, err = unitState(ctx, c, SocketUnit(key), "Socket"); err != nil {
		return KeyState{}, err
	}
	if ks.Service, err = unitState(ctx, c, ServiceUnit(key), "Service"); err != nil {
		return KeyState{}, err
	}
	return ks, nil
}

func unitState(ctx context.Context, c *conn, unit, typ string) (UnitState, error) {
	u := UnitState{Name: unit}
	props, err := c.GetUnitPropertiesContext(ctx, unit)
	if err != nil {
		return u, fmt.Errorf("read state of %s: %w", unit, err)
	}
	u.LoadState, _ = props["LoadState"].(string)
	u.ActiveState, _ = props["ActiveState"].(string)
	u.SubState, _ = props["SubState"].(string)
	if ts, ok := props["ActiveEnterTimestamp"].(uint64); ok && ts > 0 {
		u.Since = time.UnixMicro(int64(ts))
	}
	if u.LoadState != "loaded" {
		return u, nil
	}
	tprops, err := c.GetUnitTypePropertiesContext(ctx, unit, typ)
	if err != nil {
		return u, fmt.Errorf("read state of %s: %w", unit, err)
	}
	u.Result, _ = tprops["Result"].(string)
	if v, ok := tprops["MainPID"].(uint32); ok {
		u.MainPID = int(v)
	}
	if v, ok := tprops["ExecMainCode"].(int32); ok {
		u.ExecMainCode = int(v)
	}
	if v, ok := tprops["ExecMainStatus"].(int32); ok {
		u.ExecMainStatus = int(v)
	}
	return u, nil
}

// List reports every key with a loaded mcpx@ unit, sorted by key.
func (s *Systemd) List(ctx context.Context) (all []KeyState, err error) {
	err = s.retry(func() error { all, err = s.list(ctx); return err })
	return all, err
}

func (s *Systemd) list(ctx context.Context) ([]KeyState, error) {
	c, err := s.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("list mcpx units: %w", err)
	}
	us, err := c.ListUnitsByPatternsContext(ctx, nil, []string{"mcpx@*.socket", "mcpx@*.service"})
	if err != nil {
		return nil, fmt.Errorf("list mcpx units: %w", err)
	}
	seen := map[string]bool{}
	var keys []string
	for _, u := range us {
		rest, ok := strings.CutPrefix(u.Name, "mcpx@")
		if !ok {
			continue
		}
		key := strings.TrimSuffix(strings.TrimSuffix(rest, ".socket"), ".service")
		if key == "" || seen[key] || CheckKey(key) != nil {
			continue
		}
		seen[key] = true
		keys = append(keys, key)
	}
	sort.Strings(keys)
	out := make([]KeyState, 0, len(keys))
	for _, k := range keys {
		ks, err := s.state(ctx, k)
		if err != nil {
			return nil, err
		}
		out = append(out, ks)
	}
	return out, nil
}
