package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/fixture"
)

// waitStarted waits until the fixture's slow tool logged "started secs".
func waitStarted(t *testing.T, log string, secs int) {
	t.Helper()
	eventually(t, "slow to start", func() bool {
		b, _ := os.ReadFile(log)
		return strings.Contains(string(b), "started "+strconv.Itoa(secs))
	})
}

// A call cut short on an instance that then answers nothing (a server stuck
// in the tool) gets that instance stopped and counted; a call in flight on
// another instance of the same server finishes, and the next call of the
// first scope starts a fresh instance.
func TestHungInstanceReplaced(t *testing.T) {
	p := newPools(t, Options{})
	p.hangGrace = 300 * time.Millisecond
	started := filepath.Join(t.TempDir(), "started.log")
	spec := fixtureSpec(t, config.Options{Scope: config.ScopeSession},
		map[string]string{"FIXTURE_HANG_TOOL": "time", fixture.StartedLogEnv: started})
	a, b := Caller{Session: "a"}, Caller{Session: "b"}
	hungPid := pidOf(t, p, spec, a)

	other := make(chan error, 1)
	go func() {
		raw, err := p.Call(context.Background(), spec, b, "slow", json.RawMessage(`{"seconds":3}`))
		if err == nil && text(t, raw) != "slept 3 seconds" {
			err = fmt.Errorf("slow answered %s", raw)
		}
		other <- err
	}()
	waitStarted(t, started, 3)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := p.Call(ctx, spec, a, "time", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hung call: %v, want the caller's deadline", err)
	}
	eventually(t, "the hung instance to be stopped", func() bool { return processGone(hungPid) })
	if h := p.Health(spec.Hash); h.Replaced != 1 || h.ExitsAfterAnswer {
		t.Errorf("health = %+v, want one replaced", h)
	}
	if err := <-other; err != nil {
		t.Fatalf("the call on the other instance: %v", err)
	}
	if pid := pidOf(t, p, spec, a); pid == hungPid {
		t.Fatalf("the hung instance %d answered again", pid)
	}
	if n := p.Replaced(); n != 1 {
		t.Errorf("Replaced() = %d, want 1", n)
	}
}

// A server that answers a ping after a call was cut short keeps its
// instance.
func TestCancelledButAnsweringInstanceKept(t *testing.T) {
	p := newPools(t, Options{})
	p.hangGrace = 2 * time.Second
	started := filepath.Join(t.TempDir(), "started.log")
	spec := fixtureSpec(t, config.Options{}, map[string]string{fixture.StartedLogEnv: started})
	pid := pidOf(t, p, spec, Caller{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := p.Call(ctx, spec, Caller{}, "slow", json.RawMessage(`{"seconds":32}`))
		done <- err
	}()
	waitStarted(t, started, 32)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if got := pidOf(t, p, spec, Caller{}); got != pid {
		t.Errorf("an answering instance was replaced: pid %d, then %d", pid, got)
	}
	if h := p.Health(spec.Hash); h.Replaced != 0 {
		t.Errorf("health = %+v, want nothing replaced", h)
	}
}

// Concurrent calls to a server that exits after each answer all succeed
// when they may be sent twice, and the pool learns to give it one instance
// per call.
func TestExitAfterAnswerConcurrent(t *testing.T) {
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{}, map[string]string{"FIXTURE_EXIT_AFTER_CALL": "1"})
	var wg sync.WaitGroup
	errs := make(chan error, 24)
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			want := fmt.Sprint(i)
			raw, err := p.Call(context.Background(), spec, Caller{Idempotent: true}, "echo", json.RawMessage(`{"text":"`+want+`"}`))
			if err == nil && text(t, raw) != want {
				err = fmt.Errorf("echo %s answered %s", want, raw)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if h := p.Health(spec.Hash); !h.ExitsAfterAnswer {
		t.Errorf("health = %+v, want ExitsAfterAnswer", h)
	}
	if p.Restart(context.Background(), spec.Hash); p.Health(spec.Hash).ExitsAfterAnswer {
		t.Error("a restart did not forget that the server exits after each answer")
	}
}

// A request the server read but did not answer before it exited is sent
// again only when the caller says that is harmless; otherwise the error
// says why it was not.
func TestMayHaveReadResentOnlyIfIdempotent(t *testing.T) {
	for _, idempotent := range []bool{true, false} {
		t.Run(fmt.Sprint("idempotent=", idempotent), func(t *testing.T) {
			p := newPools(t, Options{})
			started := filepath.Join(t.TempDir(), "started.log")
			spec := fixtureSpec(t, config.Options{}, map[string]string{
				"FIXTURE_EXIT_AFTER_CALL": "1", fixture.StartedLogEnv: started})
			if _, err := p.List(context.Background(), spec, Caller{}); err != nil { // a live instance to share
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				raw, err := p.Call(context.Background(), spec, Caller{Idempotent: idempotent}, "slow", json.RawMessage(`{"seconds":1}`))
				if err == nil && text(t, raw) != "slept 1 seconds" {
					err = fmt.Errorf("slow answered %s", raw)
				}
				done <- err
			}()
			waitStarted(t, started, 1)
			// Answered by the same instance, which then exits with slow
			// read and unanswered.
			call(t, p, spec, Caller{}, "echo", `{"text":"bye"}`)
			err := <-done
			var ee *ExitError
			switch {
			case idempotent && err != nil:
				t.Fatalf("an idempotent call was lost: %v", err)
			case !idempotent && (!errors.As(err, &ee) || !strings.Contains(ee.NotResent, "not sent again")):
				t.Fatalf("err = %v, want an *ExitError saying why it was not sent again", err)
			case !idempotent && !strings.Contains(err.Error(), "readOnlyHint"):
				t.Errorf("the message does not name the annotations: %v", err)
			}
		})
	}
}
