package daemon

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/proc"
	"github.com/mcpx-dev/mcpx/internal/version"
	"github.com/mcpx-dev/mcpx/upstream"
)

// Upgrades that cut no call. When a client finds this daemon running an
// older build of the mcpxd installed at its path, it asks it to exit
// (POST /v1/shutdown, client/upgrade.go). Exiting first and letting the
// next connection start the new build would make every new call wait for
// the calls in flight here, each of which may take its whole callTimeout.
// So the daemon hands its listening socket over instead, the way systemd
// passes it (fd 3, LISTEN_FDS=1, LISTEN_FDNAMES=mcpx, EnvListenInherited,
// and a readiness pipe, as the direct manager does):
//
//  1. it starts the mcpxd now installed at its own path, on the same
//     listening socket, and waits until that successor serves (both accept
//     meanwhile: the kernel hands each connection to one of them);
//  2. under systemd it makes the successor, adopted by the user manager
//     (startSuccessor), the unit's main process (sd_notify MAINPID=), so
//     the unit stays active and systemd follows the new daemon; the old one
//     is then just another process of the unit (KillMode=mixed leaves it
//     alone until the unit stops);
//  3. it stops accepting and finishes every request it accepted, each call
//     within its own callTimeout (drainBound), then stops its servers and
//     exits without touching the info file or the socket, which are the
//     successor's now.
//
// What makes two daemons for one key safe for that while: the old one
// gives up its alive lock just before the successor starts, records its
// own servers in a file of its own (upstream.RetiredChildren) so the
// successor does not reap them as orphans, and writes no info file once
// retired. Under launchd the job is the unit of supervision and a process
// it did not start would not be followed, so a launchd daemon drains and
// exits as before (the socket stays with launchd).

// handoffReadyWithin bounds how long a successor may take to serve.
const handoffReadyWithin = 10 * time.Second

// newerBuildInstalled reports whether the mcpxd at this daemon's own path
// is another build than the one running, under a manager whose socket a
// successor can take over.
func (d *daemon) newerBuildInstalled() bool {
	if d.opts.Manager != "systemd" && d.opts.Manager != "direct" || d.binary == "" {
		return false
	}
	theirs := version.BinaryID(d.opts.Self)
	return theirs != "" && theirs != d.binary
}

// handOff starts the mcpxd at opts.Self on this daemon's listening socket
// and returns once it serves; alive is this daemon's alive lock, released
// for the successor. On error nothing was handed over and this daemon
// keeps its lock, files and socket.
func (d *daemon) handOff(alive *flock.Flock) error {
	ln := d.lns.current()
	if ln == nil {
		return errors.New("no unix listener to hand over")
	}
	lnFile, err := ln.File() // a duplicate, inherited by the successor
	if err != nil {
		return fmt.Errorf("duplicate the listening socket: %w", err)
	}
	defer lnFile.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return err
	}
	defer readyR.Close()

	// From here the info file is the successor's to write (a failed
	// hand-off changes nothing: this daemon stops anyway).
	d.retired.Store(true)
	children := d.opts.Paths.Children(d.opts.Key)
	retired := upstream.RetiredChildren(children, os.Getpid(), proc.StartTime(os.Getpid()))
	if err := d.pools.MoveChildren(retired); err != nil {
		readyW.Close()
		return err
	}
	if err := alive.Unlock(); err != nil {
		readyW.Close()
		d.pools.MoveChildren("")
		return fmt.Errorf("release the alive lock: %w", err)
	}

	env := append(successorEnv(os.Environ()), "LISTEN_FDS=1", "LISTEN_FDNAMES=mcpx",
		api.EnvListenInherited+"=1", api.EnvListenManager+"="+d.opts.Manager, api.EnvReadyFD+"=4")
	pid, err := d.startSuccessor(env, lnFile, readyW)
	readyW.Close()
	if err == nil {
		err = awaitReady(pid, readyR)
	}
	if err != nil {
		// Take back what was given up; this daemon stops without a
		// successor.
		d.pools.MoveChildren("")
		if ok, _ := alive.TryLock(); !ok {
			d.log.Printf("hand-off failed and the alive lock is taken: another daemon for %s runs", d.opts.Key)
		}
		return fmt.Errorf("start %s: %w", d.opts.Self, err)
	}
	d.lns.keepPaths()
	if d.opts.Manager == "systemd" {
		notify("MAINPID=" + strconv.Itoa(pid))
	}
	d.log.Printf("handed the socket to pid %d (%s); finishing the requests in flight", pid, version.BinaryID(d.opts.Self))
	return nil
}

// startSuccessor starts `mcpxd daemon --key K` with env and the listening
// socket and readiness pipe as fd 3 and 4, and returns its pid.
//
// Under systemd it is started through sh, which exits at once, so the
// successor is adopted by the user manager (a subreaper) before it becomes
// the unit's main process: systemd then follows it as its own child. A
// main process that is not its child ("alien") is one systemd may not see
// exit, and on a stop does not wait for after SIGTERM but kills at once.
// Under the direct manager it is this daemon's child, in a session of its
// own, as the direct manager starts a daemon.
func (d *daemon) startSuccessor(env []string, lnFile, readyW *os.File) (int, error) {
	args := []string{"daemon", "--key", string(d.opts.Key)}
	var cmd *exec.Cmd
	var pidOut io.ReadCloser
	if d.opts.Manager == "systemd" {
		cmd = exec.Command("/bin/sh", append([]string{"-c", `"$0" "$@" >&2 & echo $!`, d.opts.Self}, args...)...)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return 0, err
		}
		pidOut = out
	} else {
		cmd = exec.Command(d.opts.Self, args...)
		cmd.Stdout = os.Stderr
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	cmd.Env = env
	cmd.ExtraFiles = []*os.File{lnFile, readyW} // fd 3, fd 4
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	if pidOut == nil {
		go cmd.Wait() // reaped here if it ends first; else by whoever adopts it
		return cmd.Process.Pid, nil
	}
	line, _ := io.ReadAll(io.LimitReader(pidOut, 32))
	if err := cmd.Wait(); err != nil {
		return 0, fmt.Errorf("sh: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(line)))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("sh printed no pid: %q", line)
	}
	return pid, nil
}

// awaitReady waits for "READY=1" on the successor's readiness pipe; a
// successor that exits first, or does not serve within handoffReadyWithin
// (it is then killed), is an error.
func awaitReady(pid int, readyR *os.File) error {
	ready := make(chan bool, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(readyR, 64))
		ready <- strings.HasPrefix(string(b), "READY=1")
	}()
	timer := time.NewTimer(handoffReadyWithin)
	defer timer.Stop()
	select {
	case ok := <-ready:
		if ok {
			return nil
		}
		return errors.New("it exited before it served")
	case <-timer.C:
		syscall.Kill(pid, syscall.SIGKILL)
		return fmt.Errorf("it did not serve within %s", handoffReadyWithin)
	}
}

// successorEnv is this daemon's environment without what described its own
// start (listen descriptors, readiness pipe, watchdog).
func successorEnv(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return strings.HasPrefix(name, "LISTEN_") || strings.HasPrefix(name, "WATCHDOG_") ||
			name == api.EnvListenInherited || name == api.EnvListenManager || name == api.EnvReadyFD
	})
}

// current is the listener on the socket's path now: the last one served
// (a re-bound socket, alive.go, is appended), unwrapped.
func (l *listeners) current() *net.UnixListener {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.lns) - 1; i >= 0; i-- {
		if ul := unixListener(l.lns[i]); ul != nil {
			return ul
		}
	}
	return nil
}

// keepPaths makes closing the listeners leave the socket file, which the
// successor serves.
func (l *listeners) keepPaths() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ln := range l.lns {
		if ul := unixListener(ln); ul != nil {
			ul.SetUnlinkOnClose(false)
		}
	}
}

func unixListener(ln net.Listener) *net.UnixListener {
	if ll, ok := ln.(*limitListener); ok {
		ln = ll.Listener
	}
	ul, _ := ln.(*net.UnixListener)
	return ul
}

// clientSlack is how much longer than a call's own bound (its server's
// startTimeout + callTimeout) the client waits for its answer
// (client/call.go); past that nobody reads it.
const clientSlack = 30 * time.Second

// drainBound is how long a stopping daemon lets requests in flight finish:
// as long as the longest call could still take (its server's startTimeout
// and callTimeout, and the client's slack), at least ShutdownGrace. A call
// ends within its own bound anyway (upstream enforces it), so the drain
// ends as soon as the last request does; this is only the backstop.
func (d *daemon) drainBound() time.Duration {
	bound := d.opts.ShutdownGrace
	for _, s := range d.state.Load().cfg.Servers {
		o := s.Options
		call, start := o.CallTimeout.D(), o.StartTimeout.D()
		if call <= 0 {
			call = config.DefaultCallTimeout
		}
		if start <= 0 {
			start = config.DefaultStartTimeout
		}
		bound = max(bound, start+call+clientSlack)
	}
	return bound
}
