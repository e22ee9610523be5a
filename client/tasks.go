package client

import (
	"context"
	"net/url"
	"time"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Tasks lists the tasks the daemon follows (GET /v1/tasks), of one
// namespace or, with ns "", of every one.
func (c *Client) Tasks(ctx context.Context, ns string) (*api.TasksResponse, error) {
	var q url.Values
	if ns != "" {
		q = url.Values{"ns": {ns}}
	}
	var r api.TasksResponse
	if err := c.get(ctx, api.PathTasks, q, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Task returns one task's last known state (GET /v1/task).
func (c *Client) Task(ctx context.Context, ns, id string) (*api.Task, error) {
	var r api.Task
	if err := c.get(ctx, api.PathTask, url.Values{"ns": {ns}, "id": {id}}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// TaskResult waits for a task's outcome (POST /v1/task/result). A task
// that ended cancelled is an *APIError with code task_cancelled.
func (c *Client) TaskResult(ctx context.Context, ns, id string) (*api.CallResponse, error) {
	var r callAnswer
	if err := c.post(ctx, api.PathTaskResult, api.TaskRequest{Namespace: ns, TaskID: id}, &r); err != nil {
		return nil, err
	}
	return r.CallResponse, nil
}

// CancelTask asks the server to cancel a task (POST /v1/task/cancel) and
// returns its state once it ended, or after a few seconds.
func (c *Client) CancelTask(ctx context.Context, ns, id string) (*api.Task, error) {
	var r api.Task
	if err := c.post(ctx, api.PathTaskCancel, api.TaskRequest{Namespace: ns, TaskID: id}, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// TaskAbandoned is FollowTask's error when its caller gave up (ctx ended):
// the task was asked to cancel, and Cancelled says whether the daemon
// accepted that. It unwraps to ctx's error.
type TaskAbandoned struct {
	Cancelled bool
	Err       error
}

func (e *TaskAbandoned) Error() string { return "task abandoned: " + e.Err.Error() }
func (e *TaskAbandoned) Unwrap() error { return e.Err }

// FollowTask polls t every interval until it ends, calling onStatus with
// its first and every later state, then collects its result. When ctx ends
// first, the task is cancelled (best effort, bounded) and the error is a
// *TaskAbandoned.
func (c *Client) FollowTask(ctx context.Context, t api.Task, interval time.Duration, onStatus func(api.Task)) (*api.CallResponse, error) {
	onStatus(t)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for !t.Done {
		select {
		case <-ctx.Done():
			cctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			_, err := c.CancelTask(cctx, t.Namespace, t.TaskID)
			return nil, &TaskAbandoned{Cancelled: err == nil, Err: ctx.Err()}
		case <-tick.C:
		}
		next, err := c.Task(ctx, t.Namespace, t.TaskID)
		if err != nil {
			return nil, err
		}
		t = *next
		onStatus(t)
	}
	return c.TaskResult(ctx, t.Namespace, t.TaskID)
}
