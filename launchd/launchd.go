// Package launchd runs mcpx daemons as launchd agents on macOS: one agent
// per daemon key (label dev.mcpx.<key>) whose Sockets entry "mcpx" holds
// the listening socket, so the first connection starts the daemon. The
// plist is rendered from an embedded template; state comes from
// `launchctl print`, parsed defensively.
//
// Keys are plain strings here so this package stays a leaf: package service
// adapts it to service.Manager.
package launchd

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"text/template"

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
	ErrBadKey = errors.New("invalid daemon key")
	// ErrLaunchctl: launchctl failed.
	ErrLaunchctl = errors.New("launchctl failed")
)

//go:embed agent.plist.tmpl
var plistText string

// plistTmpl is parsed on first use: nothing runs at package init.
var plistTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("agent").Funcs(template.FuncMap{"x": xmlEscape}).Parse(plistText))
})

func xmlEscape(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// EnvPassed are the variables an agent gets from the installing
// environment, so the daemon computes the same paths as its clients.
var EnvPassed = []string{"XDG_RUNTIME_DIR", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "TMPDIR"}

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

var keyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })

// CheckKey reports whether key can be part of a label.
func CheckKey(key string) error {
	if !keyRE().MatchString(key) {
		return fmt.Errorf("%w %q: want 1-64 of [A-Za-z0-9_-]", ErrBadKey, key)
	}
	return nil
}

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
	err := plistTmpl().Execute(&b, map[string]any{
		"Version": version.String(), "Label": Label(key), "Key": key,
		"Bin": a.Bin, "Socket": socket, "Log": log, "Env": env,
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
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
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

// programOf returns ProgramArguments[0] (or Program) of a plist.
func programOf(r io.Reader) (string, error) {
	d := xml.NewDecoder(r)
	d.Strict = false
	depth, lastKey, inArgs := 0, "", false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return "", errors.New("no ProgramArguments")
		}
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case t.Name.Local == "key" && depth == 3: // plist > dict > key
				var k string
				if err := d.DecodeElement(&k, &t); err != nil {
					return "", err
				}
				depth--
				lastKey = strings.TrimSpace(k)
			case t.Name.Local == "array" && depth == 3 && lastKey == "ProgramArguments":
				inArgs = true
			case t.Name.Local == "string" && (inArgs && depth == 4 || depth == 3 && lastKey == "Program"):
				var s string
				if err := d.DecodeElement(&s, &t); err != nil {
					return "", err
				}
				return s, nil
			}
		case xml.EndElement:
			depth--
		}
	}
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

// Ensure writes key's agent when it is missing and loads it when launchd
// does not have it, so the socket exists. An agent that runs another
// binary is left alone (Install rewrites agents).
func (a *Agents) Ensure(ctx context.Context, key, socket, log string) error {
	if ok, _, err := a.Installed(key); err != nil {
		return err
	} else if !ok {
		if _, err := a.Write(key, socket, log); err != nil {
			return err
		}
	}
	st, err := a.State(ctx, key)
	if err != nil {
		return err
	}
	if st.Loaded {
		return nil
	}
	return a.bootstrap(ctx, key, socket, log)
}

func (a *Agents) bootstrap(ctx context.Context, key, socket, log string) error {
	for _, dir := range []string{filepath.Dir(socket), filepath.Dir(log)} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("load agent %s: %w", Label(key), err)
		}
	}
	if _, err := a.launchctl(ctx, "bootstrap", a.Domain, a.PlistPath(key)); err != nil {
		// Another client may have loaded it meanwhile ("Bootstrap failed:
		// 5: Input/output error" is what launchctl says then).
		if st, serr := a.State(ctx, key); serr == nil && st.Loaded {
			return nil
		}
		return err
	}
	return nil
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
	if _, err := a.launchctl(ctx, "bootout", a.target(key)); err != nil {
		return err
	}
	return a.bootstrap(ctx, key, socket, log)
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
