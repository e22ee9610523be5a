package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/upstream"
)

// Tasks (protocol 2025-11-25). A tool whose execution.taskSupport is
// "required" (or "optional", when the caller asks) is called as a task. The
// daemon follows every task itself — polling tasks/get, fetching
// tasks/result — in the background, so a caller may detach and collect the
// outcome later (`mcpx task result`), and a task survives the CLI that
// started it. Tasks live in the server session that created them: the
// daemon keeps that instance for the task's run, and knows only the tasks it
// started. Finished tasks are kept for taskKeep.

const (
	// taskTimeout bounds a task's run (unless the server's callTimeout is
	// longer).
	taskTimeout = time.Hour
	// taskKeep is how long a finished task's outcome stays collectable.
	taskKeep = time.Hour
)

// taskTable is the daemon's tasks. The zero value is ready to use.
type taskTable struct {
	mu sync.Mutex
	m  map[taskKey]*taskRun
}

type taskKey struct{ ns, id string }

// taskRun is one task the daemon follows. info is guarded by taskTable.mu.
type taskRun struct {
	info     api.Task
	ended    time.Time
	created  chan struct{} // closed once the server created the task (or answered plainly)
	done     chan struct{} // closed once result/err are set
	cancel   chan struct{}
	stopOnce sync.Once
	result   json.RawMessage
	err      error
}

func (r *taskRun) requestCancel() { r.stopOnce.Do(func() { close(r.cancel) }) }

// startTask runs ns.tool as a task in the background and returns once the
// server created it (or answered the call plainly, or failed).
func (d *daemon) startTask(ctx context.Context, ns, tool string, spec upstream.Spec, caller upstream.Caller, args json.RawMessage) (*taskRun, error) {
	run := &taskRun{
		info:    api.Task{Namespace: ns, Tool: tool, Status: "working", StartedAt: time.Now().UTC()},
		created: make(chan struct{}),
		done:    make(chan struct{}),
		cancel:  make(chan struct{}),
	}
	var createdOnce sync.Once
	markCreated := func() { createdOnce.Do(func() { close(run.created) }) }
	update := func(raw json.RawMessage) {
		var st upstream.TaskState
		_ = json.Unmarshal(raw, &st)
		d.tasks.mu.Lock()
		defer d.tasks.mu.Unlock()
		if st.TaskID != "" && run.info.TaskID == "" {
			run.info.TaskID = st.TaskID
			if d.tasks.m == nil {
				d.tasks.m = map[taskKey]*taskRun{}
			}
			d.tasks.m[taskKey{ns, st.TaskID}] = run
		}
		if st.Status != "" {
			run.info.Status = st.Status
		}
		run.info.StatusMessage = st.StatusMessage
		run.info.Raw = raw
	}

	d.bgMu.Lock()
	if d.bgClosed {
		d.bgMu.Unlock()
		return nil, apiErr(http.StatusServiceUnavailable, api.CodeShuttingDown, "the daemon is shutting down")
	}
	d.bg.Add(1)
	d.bgMu.Unlock()
	go func() {
		defer d.bg.Done()
		defer markCreated()
		timeout := max(taskTimeout, spec.Server.Options.CallTimeout.D())
		raw, err := d.pools.RunTask(d.bgCtx, spec, caller, tool, args, upstream.TaskHooks{
			Created: func(task json.RawMessage) { update(task); markCreated() },
			Status:  update,
			Cancel:  run.cancel,
			Timeout: timeout,
		})
		d.tasks.mu.Lock()
		run.result, run.err = raw, err
		run.ended = time.Now()
		run.info.Done = true
		if err != nil {
			run.info.Error = &taskError(err).body
			if errors.Is(err, upstream.ErrTaskCancelled) {
				run.info.Status = "cancelled"
			}
		}
		d.tasks.mu.Unlock()
		if run.info.TaskID != "" {
			d.log.Printf("task %s of %s.%s ended: %s", run.info.TaskID, ns, tool, run.info.Status)
		}
		close(run.done)
		d.pokeStatus()
	}()
	select {
	case <-run.created:
		return run, nil
	case <-ctx.Done():
		run.requestCancel()
		return nil, ctx.Err()
	}
}

// taskError maps the outcome of a task that has no result.
func taskError(err error) *httpError {
	if errors.Is(err, upstream.ErrTaskCancelled) {
		return apiErr(http.StatusConflict, api.CodeTaskCancelled, "the task was cancelled")
	}
	return mapError(err)
}

// snapshotInfo copies run's info under the lock.
func (d *daemon) snapshotInfo(run *taskRun) api.Task {
	d.tasks.mu.Lock()
	defer d.tasks.mu.Unlock()
	return run.info
}

// taskResponse waits for run's outcome and returns it as a CallResponse,
// or its error.
func (d *daemon) taskResponse(ctx context.Context, run *taskRun) (*api.CallResponse, error) {
	select {
	case <-run.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	info := d.snapshotInfo(run)
	if run.err != nil {
		e := taskError(run.err)
		e.body.Namespace, e.body.Tool = info.Namespace, info.Tool
		return nil, e
	}
	resp, err := d.extractBlobs(info.Namespace, info.Tool, run.result)
	if err != nil {
		return nil, apiErr(http.StatusBadGateway, api.CodeTransport, "result of %s.%s: %v", info.Namespace, info.Tool, err)
	}
	if info.TaskID != "" {
		resp.Task = &info
	}
	return &resp, nil
}

// findTask returns the run of task id of ns, pruning old finished ones.
func (d *daemon) findTask(ns, id string) (*taskRun, error) {
	d.tasks.mu.Lock()
	defer d.tasks.mu.Unlock()
	d.pruneTasksLocked()
	if run, ok := d.tasks.m[taskKey{ns, id}]; ok {
		return run, nil
	}
	e := apiErr(http.StatusNotFound, api.CodeUnknownTask, "no task %s of %s in this daemon (it knows the tasks it started in the last hour)", id, ns)
	e.body.Namespace = ns
	return nil, e
}

func (d *daemon) pruneTasksLocked() {
	for k, run := range d.tasks.m {
		if run.info.Done && time.Since(run.ended) > taskKeep {
			delete(d.tasks.m, k)
		}
	}
}

// taskOf finds the task a /v1/task* request names.
func (d *daemon) taskOf(r *http.Request) (*taskRun, error) {
	req, err := taskRequestOf(r)
	if err != nil {
		return nil, err
	}
	return d.findTask(req.Namespace, req.TaskID)
}

func taskRequestOf(r *http.Request) (api.TaskRequest, error) {
	var req api.TaskRequest
	if r.Method == http.MethodGet {
		req.Namespace, req.TaskID = r.URL.Query().Get("ns"), r.URL.Query().Get("id")
	} else if err := decodeBody(r, &req); err != nil {
		return req, err
	}
	if req.Namespace == "" || req.TaskID == "" {
		return req, apiErr(http.StatusBadRequest, api.CodeBadRequest, "a task is named by its namespace and its task id")
	}
	return req, nil
}

// serveTask answers GET /v1/task?ns=&id=: the task's last known state.
func (d *daemon) serveTask(w http.ResponseWriter, r *http.Request) error {
	run, err := d.taskOf(r)
	if err != nil {
		return err
	}
	return writeJSON(w, d.snapshotInfo(run))
}

// serveTaskResult answers POST /v1/task/result, waiting for the outcome.
func (d *daemon) serveTaskResult(w http.ResponseWriter, r *http.Request) error {
	run, err := d.taskOf(r)
	if err != nil {
		return err
	}
	resp, err := d.taskResponse(r.Context(), run)
	if err != nil {
		return err
	}
	return writeJSON(w, resp)
}

// serveTaskCancel answers POST /v1/task/cancel: tasks/cancel is sent, and
// the answer is the task's state once it ended (or after a few seconds).
func (d *daemon) serveTaskCancel(w http.ResponseWriter, r *http.Request) error {
	run, err := d.taskOf(r)
	if err != nil {
		return err
	}
	run.requestCancel()
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case <-run.done:
	case <-t.C:
	case <-r.Context().Done():
		return r.Context().Err()
	}
	return writeJSON(w, d.snapshotInfo(run))
}

// serveTasks answers GET /v1/tasks[?ns=]: the tasks this daemon follows,
// oldest first.
func (d *daemon) serveTasks(w http.ResponseWriter, r *http.Request) error {
	ns := r.URL.Query().Get("ns")
	if ns != "" {
		if _, err := d.state.Load().server(ns); err != nil {
			return err
		}
	}
	d.tasks.mu.Lock()
	d.pruneTasksLocked()
	out := []api.Task{}
	for _, run := range d.tasks.m {
		if ns == "" || run.info.Namespace == ns {
			out = append(out, run.info)
		}
	}
	d.tasks.mu.Unlock()
	slices.SortFunc(out, func(a, b api.Task) int { return a.StartedAt.Compare(b.StartedAt) })
	return writeJSON(w, api.TasksResponse{Tasks: out})
}
