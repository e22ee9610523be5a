package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/mcpx-dev/mcpx/config"
)

func TestRunTask(t *testing.T) {
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{}, nil)
	var mu sync.Mutex
	var created json.RawMessage
	var statuses []string
	raw, err := p.RunTask(context.Background(), spec, Caller{}, "task_sleep", json.RawMessage(`{"seconds":0.3}`), TaskHooks{
		Created: func(task json.RawMessage) { mu.Lock(); created = task; mu.Unlock() },
		Status: func(task json.RawMessage) {
			var st TaskState
			_ = json.Unmarshal(task, &st)
			mu.Lock()
			statuses = append(statuses, st.Status)
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := text(t, raw); got != "slept 0.3 seconds" {
		t.Errorf("result = %q", got)
	}
	var st TaskState
	if err := json.Unmarshal(created, &st); err != nil || st.TaskID == "" {
		t.Errorf("created = %s (%v)", created, err)
	}
	if len(statuses) == 0 || statuses[len(statuses)-1] != "completed" {
		t.Errorf("statuses = %v, want ending in completed", statuses)
	}
}

func TestRunTaskPlainAnswer(t *testing.T) {
	// A server that answers a task-augmented call with a plain result (a
	// tool without task support in mcp-go) has it returned as is.
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{}, nil)
	created := false
	raw, err := p.RunTask(context.Background(), spec, Caller{}, "echo", json.RawMessage(`{"text":"plain"}`),
		TaskHooks{Created: func(json.RawMessage) { created = true }})
	if err != nil {
		t.Fatal(err)
	}
	if created || text(t, raw) != "plain" {
		t.Errorf("created=%v result=%s", created, raw)
	}
}

func TestRunTaskCancel(t *testing.T) {
	p := newPools(t, Options{})
	spec := fixtureSpec(t, config.Options{}, nil)
	cancel := make(chan struct{})
	var once sync.Once
	_, err := p.RunTask(context.Background(), spec, Caller{}, "task_sleep", json.RawMessage(`{"seconds":2}`), TaskHooks{
		Created: func(json.RawMessage) { once.Do(func() { close(cancel) }) },
		Cancel:  cancel,
	})
	if !errors.Is(err, ErrTaskCancelled) {
		t.Fatalf("err = %v, want ErrTaskCancelled", err)
	}
}
