// Package launchd runs mcpx daemons as launchd agents on macOS: one agent
// per daemon key (label dev.mcpx.<key>) whose Sockets entry "mcpx" holds
// the listening socket, so the first connection starts the daemon. The
// plist is rendered from an embedded template; state comes from
// `launchctl print`, parsed defensively. Ensure keeps what launchd has
// loaded equal to what this mcpx would write, and repairs an agent whose
// socket is gone (docs/service.md, "macOS").
//
// Keys are plain strings here so this package stays a leaf: package service
// adapts it to service.Manager.
package launchd

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/mcpx-dev/mcpx/internal/daemonkey"
	"github.com/mcpx-dev/mcpx/internal/lazy"
	"github.com/mcpx-dev/mcpx/internal/version"
)

// LabelPrefix starts every mcpx agent's label.
const LabelPrefix = "dev.mcpx."

// Errors, testable with errors.Is.
var (
	// ErrNotActivated: the process was not started by launchd with the
	// named socket (or this build cannot ask).
	ErrNotActivated = errors.New("not activated by launchd")
	// ErrBadKey: the key cannot be part of a label.
	ErrBadKey = daemonkey.ErrInvalid
	// ErrLaunchctl: launchctl failed.
	ErrLaunchctl = errors.New("launchctl failed")
	// ErrRefused: launchd would not load the agent (background items
	// switched off in Login Items, or the job disabled).
	ErrRefused = errors.New("launchd refused to load the agent")
	// ErrNoBinary: the mcpxd an agent would run does not exist.
	ErrNoBinary = errors.New("mcpxd binary not found")
)

//go:embed agent.plist.tmpl
var plistText string

// plistTmpl is parsed on first use: nothing runs at package init.
var plistTmpl = lazy.Value[*template.Template]{New: func() *template.Template {
	return template.Must(template.New("agent").Funcs(template.FuncMap{"x": xmlEscape}).Parse(plistText))
}}

// EnvPassed are the variables an agent gets from the environment of the
// command that writes it: what the daemon needs to find the runtime
// directory its clients use (the key record there names everything else:
// configs, state and cache directories, the token store). Without
// XDG_RUNTIME_DIR both sides compute the same directory from
// confstr(_CS_DARWIN_USER_TEMP_DIR), so nothing that varies between shells
// (TMPDIR, which ssh does not set) is written into the agent.
var EnvPassed = []string{"XDG_RUNTIME_DIR"}

// ThrottleInterval is the agent's ThrottleInterval in seconds: launchd
// spawns a job at most once per this many seconds (default 10), so with
// the default a daemon that exits (mcpx stop, an upgrade, idle exit, a
// crash) and is wanted again within 10 s of its start would make the next
// command wait out the rest, which looks like a hang.
const ThrottleInterval = 1

// ExitTimeout is the agent's ExitTimeOut in seconds: how long launchd waits
// after SIGTERM (mcpx stop, bootout) before SIGKILL, time for the daemon
// to finish calls in flight and stop its servers (as the systemd unit's
// TimeoutStopSec).
const ExitTimeout = 30

// Agents manages the mcpx agents of one user. Not safe for concurrent use.
type Agents struct {
	// Bin is the absolute path of the mcpxd binary the agents run.
	Bin string
	// Dir is the LaunchAgents directory (~/Library/LaunchAgents).
	Dir string
	// Domain is the launchd domain, gui/<uid>.
	Domain string
	// Env is written into each agent's EnvironmentVariables.
	Env map[string]string
	// Launchctl runs launchctl with args and returns stdout, stderr and
	// the exit code (-1 when it could not run); tests replace it.
	Launchctl func(ctx context.Context, args ...string) (stdout, stderr []byte, code int, err error)
	// Dial connects to the unix socket at path and closes the connection
	// (nil: a real dial); tests replace it.
	Dial func(ctx context.Context, path string) error
	// Wait pauses between two looks at launchd while an agent unloads
	// (nil: sleeps d, or less when ctx ends); tests replace it.
	Wait func(ctx context.Context, d time.Duration)
}

// New returns Agents for the environment getenv describes.
func New(getenv func(string) string, bin string) *Agents {
	a := &Agents{
		Bin:       bin,
		Domain:    "gui/" + strconv.Itoa(os.Getuid()),
		Env:       map[string]string{},
		Launchctl: runLaunchctl,
	}
	if home := getenv("HOME"); home != "" {
		a.Dir = filepath.Join(home, "Library", "LaunchAgents")
	}
	for _, k := range EnvPassed {
		if v := getenv(k); v != "" {
			a.Env[k] = v
		}
	}
	return a
}

func runLaunchctl(ctx context.Context, args ...string) ([]byte, []byte, int, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "launchctl", args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.Bytes(), errb.Bytes(), ee.ExitCode(), nil
	}
	if err != nil {
		return nil, nil, -1, err
	}
	return out.Bytes(), errb.Bytes(), 0, nil
}

// CheckKey reports whether key can be part of a label (daemonkey.Check).
func CheckKey(key string) error { return daemonkey.Check(key) }

// Label is the agent label for key.
func Label(key string) string { return LabelPrefix + key }

// PlistPath is where key's agent lives.
func (a *Agents) PlistPath(key string) string { return filepath.Join(a.Dir, Label(key)+".plist") }

func (a *Agents) target(key string) string { return a.Domain + "/" + Label(key) }

// Render returns the plist of key's agent.
func (a *Agents) Render(key, socket, log string) ([]byte, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	if !filepath.IsAbs(a.Bin) || !filepath.IsAbs(socket) || !filepath.IsAbs(log) {
		return nil, fmt.Errorf("render agent %s: binary, socket and log paths must be absolute (%q, %q, %q)", Label(key), a.Bin, socket, log)
	}
	type kv struct{ Name, Value string }
	var env []kv
	for k, v := range a.Env {
		env = append(env, kv{k, v})
	}
	sort.Slice(env, func(i, j int) bool { return env[i].Name < env[j].Name })
	var b bytes.Buffer
	err := plistTmpl.Get().Execute(&b, map[string]any{
		"Version": version.String(), "Label": Label(key), "Key": key,
		"Bin": a.Bin, "Socket": socket, "Log": log, "Env": env,
		"Throttle": ThrottleInterval, "ExitTimeout": ExitTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("render agent %s: %w", Label(key), err)
	}
	return b.Bytes(), nil
}

// Write writes key's plist when its content differs and reports whether
// it did.
func (a *Agents) Write(key, socket, log string) (bool, error) {
	if a.Dir == "" {
		return false, fmt.Errorf("write agent %s: HOME is not set", Label(key))
	}
	data, err := a.Render(key, socket, log)
	if err != nil {
		return false, err
	}
	path := a.PlistPath(key)
	if old, err := os.ReadFile(path); err == nil && samePlist(old, data) {
		return false, nil
	}
	if err := os.MkdirAll(a.Dir, 0o755); err != nil {
		return false, fmt.Errorf("write agent %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(a.Dir, "."+Label(key)+".*")
	if err != nil {
		return false, fmt.Errorf("write agent %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return false, fmt.Errorf("write agent %s: %w", path, err)
	}
	return true, nil
}

// samePlist reports whether two plists say the same, comments aside: the
// comment names the version of mcpx that wrote it, and an upgrade that
// changes nothing else must not reload the agent.
func samePlist(a, b []byte) bool {
	return bytes.Equal(stripComments(a), stripComments(b))
}

// Installed reports whether key's plist exists and which binary it runs.
func (a *Agents) Installed(key string) (ok bool, bin string, err error) {
	f, err := os.Open(a.PlistPath(key))
	if errors.Is(err, os.ErrNotExist) {
		return false, "", nil
	}
	if err != nil {
		return false, "", fmt.Errorf("read agent: %w", err)
	}
	defer f.Close()
	bin, err = programOf(f)
	if err != nil {
		return false, "", fmt.Errorf("read agent %s: %w", a.PlistPath(key), err)
	}
	return true, bin, nil
}

// Keys lists the keys that have an agent plist, sorted.
func (a *Agents) Keys() ([]string, error) {
	ents, err := os.ReadDir(a.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list agents: %w", err)
	}
	var keys []string
	for _, e := range ents {
		name := e.Name()
		if k, ok := strings.CutPrefix(name, LabelPrefix); ok && strings.HasSuffix(k, ".plist") {
			if k = strings.TrimSuffix(k, ".plist"); CheckKey(k) == nil {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys, nil
}

func (a *Agents) launchctl(ctx context.Context, args ...string) ([]byte, error) {
	out, errb, code, err := a.Launchctl(ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("launchctl %s: %w: %w", strings.Join(args, " "), ErrLaunchctl, err)
	}
	if code != 0 {
		return out, fmt.Errorf("launchctl %s: %w: exit %d: %s", strings.Join(args, " "), ErrLaunchctl, code, strings.TrimSpace(string(errb)+" "+string(out)))
	}
	return out, nil
}

// State asks launchd about key's agent. An agent that is not loaded is
// Loaded=false, not an error. It never connects to the socket.
func (a *Agents) State(ctx context.Context, key string) (JobState, error) {
	if err := CheckKey(key); err != nil {
		return JobState{}, err
	}
	out, errb, code, err := a.Launchctl(ctx, "print", a.target(key))
	if err != nil {
		return JobState{}, fmt.Errorf("launchctl print %s: %w: %w", a.target(key), ErrLaunchctl, err)
	}
	if code != 0 {
		// 113: "Could not find service ... in domain"; older systems
		// say so on stderr with other codes.
		msg := string(errb) + string(out)
		if code == 113 || strings.Contains(msg, "Could not find service") || strings.Contains(msg, "not find") {
			return JobState{Label: Label(key)}, nil
		}
		return JobState{}, fmt.Errorf("launchctl print %s: %w: exit %d: %s", a.target(key), ErrLaunchctl, code, strings.TrimSpace(msg))
	}
	st := ParsePrint(out)
	st.Label = Label(key)
	return st, nil
}

// Ensure makes launchd hold key's socket, so that connecting to it
// reaches a daemon: it writes the agent when it is missing or says anything
// else than this mcpx would write (another program path, socket, log or
// environment), loads it when launchd does not have it, and reloads it
// when launchd runs a stale copy or its socket is unusable (plan). That
// repairs what a reboot or a temp cleaner leaves (the socket's directory
// under /var/folders emptied, so launchd could not recreate the socket at
// login), a Homebrew upgrade (the agent names a deleted binary), and a
// shell whose settings changed. It is called after a connection failed,
// so a loaded agent whose socket does not accept is broken by definition.
func (a *Agents) Ensure(ctx context.Context, key, socket, log string) error {
	if _, err := os.Stat(a.Bin); err != nil {
		return fmt.Errorf("agent %s: %w: %w", Label(key), ErrNoBinary, err)
	}
	written, err := a.Write(key, socket, log)
	if err != nil {
		return err
	}
	st, err := a.State(ctx, key)
	if err != nil {
		return err
	}
	f := facts{Loaded: st.Loaded, Rewritten: written, Program: st.Program, Bin: a.Bin}
	if st.Loaded && !written {
		f.Socket = a.checkSocket(ctx, socket)
	}
	switch act, why := plan(f); act {
	case actLoad:
		return a.bootstrap(ctx, key, socket, log)
	case actReload:
		if err := a.reload(ctx, key, socket, log); err != nil {
			return fmt.Errorf("reload agent %s (%s): %w", Label(key), why, err)
		}
	}
	return nil
}

// action is what Ensure does to an agent.
type action int

const (
	actNone   action = iota // launchd holds a working socket
	actLoad                 // not loaded: bootstrap
	actReload               // loaded but stale or broken: bootout, then bootstrap
)

// socketState is what Ensure finds at the socket path of a loaded agent.
type socketState int

const (
	socketOK        socketState = iota // accepts connections
	socketMissing                      // no file (its directory exists)
	socketDirGone                      // its directory does not exist
	socketNotSocket                    // something else is there
	socketRefused                      // a socket file nobody listens on
)

func (s socketState) String() string {
	return [...]string{"it accepts", "its socket file is gone", "its socket's directory is gone", "its socket path holds something else than a socket", "nothing listens on its socket"}[s]
}

// facts are what Ensure knows about an agent when it decides.
type facts struct {
	Loaded    bool        // launchd has the job
	Rewritten bool        // the plist on disk was just (re)written
	Program   string      // what the loaded job runs ("" when launchd did not say)
	Bin       string      // what it should run
	Socket    socketState // looked at only for a loaded agent whose plist was current
}

// plan decides what Ensure does, and why (for errors).
func plan(f facts) (action, string) {
	switch {
	case !f.Loaded:
		return actLoad, "not loaded"
	case f.Rewritten:
		return actReload, "its plist changed"
	case f.Program != "" && f.Program != f.Bin:
		return actReload, fmt.Sprintf("launchd runs %s, not %s", f.Program, f.Bin)
	case f.Socket != socketOK:
		return actReload, f.Socket.String()
	}
	return actNone, ""
}

// checkSocket looks at the socket path of a loaded agent.
func (a *Agents) checkSocket(ctx context.Context, socket string) socketState {
	fi, err := os.Lstat(socket)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, err := os.Stat(filepath.Dir(socket)); errors.Is(err, fs.ErrNotExist) {
			return socketDirGone
		}
		return socketMissing
	case err != nil:
		return socketRefused
	case fi.Mode().Type() != fs.ModeSocket:
		return socketNotSocket
	}
	dial := a.Dial
	if dial == nil {
		dial = dialUnix
	}
	if err := dial(ctx, socket); err != nil {
		return socketRefused
	}
	return socketOK
}

func dialUnix(ctx context.Context, path string) error {
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return err
	}
	return c.Close()
}

// bootstrap loads key's agent. launchd creates the socket but not its
// directory (nor the log's), so they are made first. A refusal is
// explained (refusal).
func (a *Agents) bootstrap(ctx context.Context, key, socket, log string) error {
	for _, dir := range []string{filepath.Dir(socket), filepath.Dir(log)} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("load agent %s: %w", Label(key), err)
		}
	}
	out, errb, code, err := a.Launchctl(ctx, "bootstrap", a.Domain, a.PlistPath(key))
	if err != nil {
		return fmt.Errorf("launchctl bootstrap %s: %w: %w", Label(key), ErrLaunchctl, err)
	}
	if code == 0 {
		return nil
	}
	// Another client may have loaded it meanwhile ("Bootstrap failed: 5:
	// Input/output error" is what launchctl says then, too).
	if st, serr := a.State(ctx, key); serr == nil && st.Loaded {
		return nil
	}
	return a.refusal(ctx, key, code, strings.TrimSpace(string(errb)+" "+string(out)))
}

// refusal explains a failed bootstrap. launchctl says only "Bootstrap
// failed: 5: Input/output error" both when the job is disabled (launchctl
// disable, which is also what switching an item off under Login Items
// does) and when background items are not allowed at all.
func (a *Agents) refusal(ctx context.Context, key string, code int, msg string) error {
	target := a.target(key)
	out, _, pcode, err := a.Launchctl(ctx, "print-disabled", a.Domain)
	if err == nil && pcode == 0 && disabledIn(out, Label(key)) {
		return fmt.Errorf("launchctl bootstrap %s: %w: the agent is disabled (launchctl print-disabled %s); allow mcpxd under System Settings → General → Login Items → Allow in the Background, or run `launchctl enable %s`, or set MCPX_SERVICE=direct to let mcpx start its daemon itself (docs/service.md)",
			Label(key), ErrRefused, a.Domain, target)
	}
	if code == 5 {
		return fmt.Errorf("launchctl bootstrap %s: %w (%s): on macOS 13 and later this means background items are switched off for mcpxd: allow it under System Settings → General → Login Items → Allow in the Background, or set MCPX_SERVICE=direct to let mcpx start its daemon itself (docs/service.md)",
			Label(key), ErrRefused, msg)
	}
	return fmt.Errorf("launchctl bootstrap %s %s: %w: exit %d: %s", a.Domain, a.PlistPath(key), ErrLaunchctl, code, msg)
}

// disabledIn reports whether `launchctl print-disabled` output out lists
// label as disabled (`"label" => disabled`, or `=> true` on older systems).
func disabledIn(out []byte, label string) bool {
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=>")
		if !ok || strings.Trim(strings.TrimSpace(k), `"`) != label {
			continue
		}
		switch strings.TrimSpace(v) {
		case "disabled", "true":
			return true
		}
	}
	return false
}

// reload unloads key's agent (its daemon gets SIGTERM and ExitTimeout to
// finish), waits until launchd has let it go, and loads it again.
func (a *Agents) reload(ctx context.Context, key, socket, log string) error {
	if err := a.bootout(ctx, key); err != nil {
		return err
	}
	return a.bootstrap(ctx, key, socket, log)
}

// bootout unloads key's agent and waits (within ctx, at most ExitTimeout
// and a little more) until launchd no longer has it: bootstrapping a label
// that is still being torn down fails.
func (a *Agents) bootout(ctx context.Context, key string) error {
	out, errb, code, err := a.Launchctl(ctx, "bootout", a.target(key))
	if err != nil {
		return fmt.Errorf("launchctl bootout %s: %w: %w", a.target(key), ErrLaunchctl, err)
	}
	wait := a.Wait
	if wait == nil {
		wait = sleepCtx
	}
	deadline := time.Now().Add(ExitTimeout*time.Second + 5*time.Second)
	for delay := 20 * time.Millisecond; ; delay = min(delay*2, 500*time.Millisecond) {
		st, serr := a.State(ctx, key)
		if serr != nil {
			return serr
		}
		if !st.Loaded {
			return nil
		}
		// 36 (EINPROGRESS: "Operation now in progress") is a bootout that
		// continues in the background; anything else with the job still
		// there is a failure.
		if code != 0 && code != 36 {
			return fmt.Errorf("launchctl bootout %s: %w: exit %d: %s", a.target(key), ErrLaunchctl, code, strings.TrimSpace(string(errb)+" "+string(out)))
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return fmt.Errorf("launchctl bootout %s: %w: still loaded after %d s", a.target(key), ErrLaunchctl, ExitTimeout)
		}
		wait(ctx, delay)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Reinstall rewrites key's agent for a.Bin and reloads it if it changed
// and was loaded.
func (a *Agents) Reinstall(ctx context.Context, key, socket, log string) error {
	changed, err := a.Write(key, socket, log)
	if err != nil || !changed {
		return err
	}
	st, err := a.State(ctx, key)
	if err != nil || !st.Loaded {
		return err
	}
	return a.reload(ctx, key, socket, log)
}

// Stop stops key's daemon (SIGTERM); with socketToo it unloads the agent,
// which closes the socket. The plist stays.
func (a *Agents) Stop(ctx context.Context, key string, socketToo bool) error {
	st, err := a.State(ctx, key)
	if err != nil || !st.Loaded {
		return err
	}
	if socketToo {
		_, err = a.launchctl(ctx, "bootout", a.target(key))
		return err
	}
	if st.PID == 0 {
		return nil
	}
	_, err = a.launchctl(ctx, "kill", "SIGTERM", a.target(key))
	return err
}

// Remove unloads key's agent and deletes its plist. Idempotent.
func (a *Agents) Remove(ctx context.Context, key string) error {
	if err := a.Stop(ctx, key, true); err != nil {
		return err
	}
	if err := os.Remove(a.PlistPath(key)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove agent: %w", err)
	}
	return nil
}
