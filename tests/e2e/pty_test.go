package e2e

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A pseudo-terminal for commands that ask a person: the command gets the
// terminal as stdin, stdout and stderr (its controlling terminal), and the
// test reads what it shows and types answers, like expect.

// terminal is one command running on a pseudo-terminal.
type terminal struct {
	t      testing.TB
	ptm    *os.File
	cmd    *exec.Cmd
	done   chan struct{}
	waitMu sync.Mutex
	err    error

	mu   sync.Mutex
	out  bytes.Buffer // everything shown
	seen int          // how much of out expect has consumed
	more chan struct{}
}

// OnTerminal runs mcpx args in Work on a fresh pseudo-terminal with env
// added to the Env's environment. It is killed at the end of the test.
func (e *Env) OnTerminal(env []string, args ...string) *terminal {
	e.t.Helper()
	ptm, pts, err := openPTY()
	if err != nil {
		e.t.Skipf("no pseudo-terminal: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	cmd := exec.CommandContext(ctx, mcpxBin, args...)
	cmd.Dir = e.Work
	cmd.Env = append(append(e.Environ(), "TERM=dumb"), env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pts, pts, pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		cancel()
		e.t.Fatal(err)
	}
	pts.Close()
	tm := &terminal{t: e.t, ptm: ptm, cmd: cmd, done: make(chan struct{}), more: make(chan struct{}, 1)}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptm.Read(buf)
			if n > 0 {
				tm.mu.Lock()
				tm.out.Write(buf[:n])
				tm.mu.Unlock()
				select {
				case tm.more <- struct{}{}:
				default:
				}
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		tm.waitMu.Lock()
		tm.err = err
		tm.waitMu.Unlock()
		close(tm.done)
	}()
	e.t.Cleanup(func() {
		cancel()
		<-tm.done
		ptm.Close()
	})
	return tm
}

// expect waits until the terminal shows want after what earlier expects
// consumed, and consumes up to its end.
func (tm *terminal) expect(want string) {
	tm.t.Helper()
	if _, ok := tm.expectAny(30*time.Second, want); !ok {
		tm.t.Fatalf("the terminal never showed %q; it shows:\n%s", want, tm.shown())
	}
}

// expectAny waits until one of wants shows (after what was consumed) and
// returns which; false when none did within d.
func (tm *terminal) expectAny(d time.Duration, wants ...string) (string, bool) {
	deadline := time.After(d)
	for {
		if w, ok := tm.find(wants); ok {
			return w, true
		}
		select {
		case <-tm.more:
		case <-tm.done:
			time.Sleep(200 * time.Millisecond) // the reader may hold the last output
			return tm.find(wants)
		case <-deadline:
			return "", false
		}
	}
}

// find consumes up to the end of the first of wants shown since the last
// consumed output.
func (tm *terminal) find(wants []string) (string, bool) {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	rest := tm.out.String()[tm.seen:]
	best, at := "", -1
	for _, w := range wants {
		if i := strings.Index(rest, w); i >= 0 && (at < 0 || i < at) {
			best, at = w, i
		}
	}
	if at < 0 {
		return "", false
	}
	tm.seen += at + len(best)
	return best, true
}

// send types line and Enter.
func (tm *terminal) send(line string) {
	tm.t.Helper()
	if _, err := tm.ptm.WriteString(line + "\r"); err != nil {
		tm.t.Fatalf("type %q: %v", line, err)
	}
}

// eof types Ctrl-D at the start of a line (the end of input).
func (tm *terminal) eof() {
	tm.t.Helper()
	if _, err := tm.ptm.Write([]byte{4}); err != nil {
		tm.t.Fatal(err)
	}
}

// wait waits for the command to end and returns its exit code.
func (tm *terminal) wait() int {
	tm.t.Helper()
	select {
	case <-tm.done:
	case <-time.After(60 * time.Second):
		tm.t.Fatalf("the command did not end; the terminal shows:\n%s", tm.shown())
	}
	tm.waitMu.Lock()
	defer tm.waitMu.Unlock()
	var ee *exec.ExitError
	if errors.As(tm.err, &ee) {
		return ee.ExitCode()
	}
	if tm.err != nil {
		tm.t.Fatalf("run: %v", tm.err)
	}
	return 0
}

// shown is everything the terminal showed.
func (tm *terminal) shown() string {
	time.Sleep(50 * time.Millisecond) // let the reader catch up
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.out.String()
}
