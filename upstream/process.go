package upstream

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcpx-dev/mcpx/config"
)

// proc is the operating-system side of a stdio server: a child in its own
// process group whose stderr is read into a ring buffer. mcpx starts it and
// reaps it (startPipes); mcp-go's stdio transport speaks over its
// stdin/stdout pipes.
type proc struct {
	cmd    *exec.Cmd
	stderr ring
	// errW is the parent's copy of the stderr pipe's write end, closed right
	// after the child starts so that EOF means "every holder exited".
	errW *os.File
	// exited is closed when stderr reaches EOF: every holder of the write
	// end exited or closed it (a server may close its stderr and live on).
	exited chan struct{}
	// waited is closed once the child was reaped (set by startStdio).
	waited chan struct{}
	// out watches its stdout for lines that are not JSON (stdout.go).
	out *stdoutWatch
}

// newProc builds (but does not start) the command for a stdio server. The
// command is looked up on the PATH of env, not the daemon's own PATH, since
// the daemon runs with the service manager's environment.
func newProc(srv *config.Server, env []string, dir string) (*proc, error) {
	path, err := lookPath(srv.Command, env, dir)
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stderr pipe: %w", err)
	}
	cmd := &exec.Cmd{
		Path:        path,
		Args:        append([]string{srv.Command}, srv.Args...),
		Env:         env,
		Dir:         dir,
		Stderr:      w,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	p := &proc{cmd: cmd, errW: w, exited: make(chan struct{})}
	go func() {
		_, _ = io.Copy(&p.stderr, r)
		_ = r.Close()
		close(p.exited)
	}()
	return p, nil
}

// started drops the parent's copy of the stderr write end; call it once the
// transport's Start returned, whether or not it succeeded.
func (p *proc) started() { _ = p.errW.Close() }

// stderrTail waits briefly for stderr to be fully read, then returns it.
func (p *proc) stderrTail(wait time.Duration) string {
	select {
	case <-p.exited:
	case <-time.After(wait):
	}
	return p.stderr.String()
}

// stopGroup is the signal half of stopping: the transport has already closed
// stdin and reaps the leader, closing leaderDone when it has. After grace
// the group gets SIGTERM, after another grace SIGKILL. Members that outlive
// the leader get the same treatment, so nothing of the server is left.
func (p *proc) stopGroup(leaderDone <-chan struct{}, grace time.Duration) {
	if p.cmd.Process == nil {
		return
	}
	pgid := p.cmd.Process.Pid
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-leaderDone:
			return true
		case <-t.C:
			return false
		}
	}
	if !wait(grace) {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		if !wait(grace) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-leaderDone
		}
	}
	if groupGone(pgid) {
		return
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for !groupGone(pgid) {
		if time.Now().After(deadline) {
			// Members still there keep the pgid from being reused,
			// so this reaches only the server's processes.
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The group is empty: its number may already belong to someone else,
	// so it is not signalled again.
}

// groupGone reports whether no process is left in group pgid.
func groupGone(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// processEnv is the child's environment: base (the captured caller
// environment) with the server's env block on top, in a stable order, and
// config.EnvDaemonPid naming this daemon last (whatever base or the block
// said), so an `mcpx serve` anywhere below the server refuses to run.
func processEnv(base []string, extra map[string]string) []string {
	env := make([]string, 0, len(base)+len(extra)+1)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := extra[k]; !over && k != config.EnvDaemonPid {
			env = append(env, kv)
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if k != config.EnvDaemonPid {
			env = append(env, k+"="+extra[k])
		}
	}
	return append(env, config.EnvDaemonPid+"="+strconv.Itoa(os.Getpid()))
}

// lookPath finds command the way a shell with env's PATH would. A name with
// a slash is taken as is (relative to dir).
func lookPath(command string, env []string, dir string) (string, error) {
	if command == "" {
		return "", errors.New("no command")
	}
	if strings.Contains(command, "/") {
		return command, nil
	}
	pathVar := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, d := range filepath.SplitList(pathVar) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) && dir != "" {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, command)
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("look up %q in PATH %q: %w", command, pathVar, exec.ErrNotFound)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil {
		return false
	}
	m := fi.Mode()
	return m.Type()&fs.ModeType == 0 && m.Perm()&0o111 != 0
}
