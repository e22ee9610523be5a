package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/config"
)

// Tasks (protocol 2025-11-25): a tools/call augmented with "task" returns a
// task at once; the caller polls tasks/get until the task is terminal and
// fetches the outcome with tasks/result. A task lives in the session that
// created it, so RunTask holds its instance for the whole task.

// TaskHooks observe and steer one task run.
type TaskHooks struct {
	// Created receives the task object of the CreateTaskResult.
	Created func(task json.RawMessage)
	// Status receives every task object tasks/get returns.
	Status func(task json.RawMessage)
	// Cancel, when closed, makes RunTask send tasks/cancel (once) and keep
	// polling until the server reports the task terminal.
	Cancel <-chan struct{}
	// Timeout bounds the whole task (0: the server's callTimeout).
	Timeout time.Duration
}

// TaskState is the part of a task object RunTask reads.
type TaskState struct {
	TaskID        string `json:"taskId"`
	Status        string `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	PollInterval  *int64 `json:"pollInterval,omitempty"`
}

// Terminal reports whether status ends a task.
func Terminal(status string) bool {
	switch status {
	case string(mcp.TaskStatusCompleted), string(mcp.TaskStatusFailed), string(mcp.TaskStatusCancelled):
		return true
	}
	return false
}

// ErrTaskCancelled is the outcome of a task the server reports cancelled.
var ErrTaskCancelled = errors.New("task cancelled")

// RunTask calls tool as a task and returns the raw CallToolResult that
// tasks/result gives once the task is terminal. A server that answers the
// call with a plain result (it ran the tool at once) has that result
// returned as is, without Created being called.
func (p *Pools) RunTask(ctx context.Context, spec Spec, caller Caller, tool string, args json.RawMessage, h TaskHooks) (json.RawMessage, error) {
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	params := struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Task      map[string]any  `json:"task"`
	}{tool, args, map[string]any{}}
	if spec.Server != nil && h.Timeout > 0 {
		s := *spec.Server
		s.Options.CallTimeout = config.Duration(h.Timeout)
		spec.Server = &s
	}
	var out json.RawMessage
	err := p.with(ctx, spec, caller, tool, func(ctx context.Context, cn *conn) error {
		raw, err := cn.request(ctx, string(mcp.MethodToolsCall), params)
		if err != nil {
			return err
		}
		var created struct {
			Task json.RawMessage `json:"task"`
		}
		if json.Unmarshal(raw, &created) != nil || len(created.Task) == 0 || string(created.Task) == "null" {
			out = raw // not a task after all
			return nil
		}
		var st TaskState
		if err := json.Unmarshal(created.Task, &st); err != nil || st.TaskID == "" {
			return fmt.Errorf("tools/call %s: the task the server created has no taskId", tool)
		}
		if h.Created != nil {
			h.Created(created.Task)
		}
		out, err = cn.followTask(ctx, st, h)
		return err
	})
	return out, err
}

// followTask polls task st until it is terminal, then fetches its result.
func (cn *conn) followTask(ctx context.Context, st TaskState, h TaskHooks) (json.RawMessage, error) {
	cancelled := false
	cancelCh := h.Cancel
	for !Terminal(st.Status) {
		wait := time.Second
		if st.PollInterval != nil {
			wait = min(max(time.Duration(*st.PollInterval)*time.Millisecond, 50*time.Millisecond), 5*time.Second)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			cn.cancelTask(st.TaskID)
			return nil, ctx.Err()
		case <-cancelCh:
			t.Stop()
			cancelCh = nil
			if !cancelled {
				cancelled = true
				if _, err := cn.request(ctx, string(mcp.MethodTasksCancel), map[string]string{"taskId": st.TaskID}); err != nil {
					var re *RPCError
					if !errors.As(err, &re) {
						return nil, err
					}
				}
			}
		case <-t.C:
		}
		raw, err := cn.request(ctx, string(mcp.MethodTasksGet), map[string]string{"taskId": st.TaskID})
		if err != nil {
			return nil, err
		}
		var next TaskState
		if err := json.Unmarshal(raw, &next); err != nil {
			return nil, fmt.Errorf("tasks/get %s: %w", st.TaskID, err)
		}
		if next.TaskID == "" {
			next.TaskID = st.TaskID
		}
		st = next
		if h.Status != nil {
			h.Status(raw)
		}
	}
	if st.Status == string(mcp.TaskStatusCancelled) {
		return nil, ErrTaskCancelled
	}
	return cn.request(ctx, string(mcp.MethodTasksResult), map[string]string{"taskId": st.TaskID})
}

// cancelTask tells the server to stop task id (best effort, off the
// caller's path): the caller gave up waiting.
func (cn *conn) cancelTask(id string) {
	cn.notes.Add(1)
	go func() {
		defer cn.notes.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, _ = cn.request(ctx, string(mcp.MethodTasksCancel), map[string]string{"taskId": id})
	}()
}
