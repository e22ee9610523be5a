package e2e

import (
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

func TestTasksOfEverything(t *testing.T) {
	e := NewEnv(t)
	everythingConfig(t, e)
	e.MustOK("refresh")

	// taskSupport "required": called as a task, and call waits for it.
	r := e.MustOK("call", "everything.simulate-research-query", "topic=owls")
	if !strings.Contains(r.Stdout, "Research Report: owls") {
		t.Fatalf("task call printed:\n%s", r)
	}
	var resp api.CallResponse
	e.JSON(&resp, "call", "everything.simulate-research-query", "topic=bats")
	if resp.Task == nil || resp.Task.Status != "completed" || resp.Task.TaskID == "" || !strings.Contains(string(resp.Result), "bats") {
		t.Fatalf("task call --json: %+v", resp)
	}

	// --detach: the id at once; the daemon follows the task; collected later.
	r = e.MustOK("call", "--detach", "everything.simulate-research-query", "topic=moths")
	id := strings.TrimSpace(r.Stdout)
	if id == "" || strings.ContainsAny(id, " \n") || !strings.Contains(r.Stderr, "mcpx task result everything "+id) {
		t.Fatalf("--detach: %s", r)
	}
	var got api.Task
	e.JSON(&got, "task", "get", "everything", id)
	if got.TaskID != id || got.Tool != "simulate-research-query" {
		t.Errorf("task get: %+v", got)
	}
	var list api.TasksResponse
	e.JSON(&list, "tasks", "everything")
	found := false
	for _, tk := range list.Tasks {
		found = found || tk.TaskID == id
	}
	if !found {
		t.Errorf("tasks lacks %s: %+v", id, list)
	}
	if r := e.MustOK("task", "result", "everything", id); !strings.Contains(r.Stdout, "Research Report: moths") {
		t.Errorf("task result:\n%s", r)
	}
	e.JSON(&got, "task", "get", "everything", id)
	if !got.Done || got.Status != "completed" {
		t.Errorf("after result: %+v", got)
	}

	// Cancelled: the result says so (exit 1).
	r = e.MustOK("call", "--detach", "everything.simulate-research-query", "topic=never")
	id = strings.TrimSpace(r.Stdout)
	e.JSON(&got, "task", "cancel", "everything", id)
	if got.Status != "cancelled" {
		t.Errorf("task cancel: %+v", got)
	}
	if r := e.Mcpx("task", "result", "everything", id); r.Code != 1 || !strings.Contains(r.Stderr, "cancelled") {
		t.Errorf("result of a cancelled task: %s", r)
	}

	// Bad input.
	if r := e.Mcpx("task", "get", "everything", "no-such-task"); r.Code != 2 {
		t.Errorf("unknown task: %s", r)
	}
	if r := e.Mcpx("task", "get", "everything"); r.Code != 2 {
		t.Errorf("task get without id: %s", r)
	}
	if r := e.Mcpx("call", "--task", "everything.echo", "message=x"); r.Code != 2 || !strings.Contains(r.Stderr, "task") {
		t.Errorf("--task on a tool without task support: %s", r)
	}
}
