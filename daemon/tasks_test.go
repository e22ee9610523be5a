package daemon

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

func TestTasks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tasks of several seconds (-short)")
	}
	_, d, _ := startFixture(t)
	d.mustOK(http.MethodPost, api.PathRefresh, api.RefreshRequest{Namespace: "fx"}, nil)

	// Required: run as a task and waited for.
	var resp api.CallResponse
	d.mustOK(http.MethodPost, api.PathCall, api.CallRequest{Namespace: "fx", Tool: "task_sleep", Arguments: []byte(`{"seconds":0.2}`)}, &resp)
	if resp.Task == nil || resp.Task.Status != "completed" || !strings.Contains(string(resp.Result), "slept 0.2 seconds") {
		t.Fatalf("task_sleep: %+v result %s", resp.Task, resp.Result)
	}

	// Optional: plain unless asked.
	resp = api.CallResponse{}
	d.mustOK(http.MethodPost, api.PathCall, api.CallRequest{Namespace: "fx", Tool: "maybe_task"}, &resp)
	if resp.Task != nil {
		t.Errorf("maybe_task ran as a task unasked: %+v", resp.Task)
	}
	resp = api.CallResponse{}
	d.mustOK(http.MethodPost, api.PathCall, api.CallRequest{Namespace: "fx", Tool: "maybe_task", Task: true}, &resp)
	if resp.Task == nil || resp.Task.TaskID == "" {
		t.Errorf("maybe_task with task: %+v", resp)
	}

	// Detached: the id at once, the outcome later.
	resp = api.CallResponse{}
	d.mustOK(http.MethodPost, api.PathCall, api.CallRequest{Namespace: "fx", Tool: "task_sleep", Arguments: []byte(`{"seconds":0.5}`), Detach: true}, &resp)
	if resp.Task == nil || resp.Task.TaskID == "" || resp.Task.Done || string(resp.Result) != "null" {
		t.Fatalf("detached: %+v result %s", resp.Task, resp.Result)
	}
	id := resp.Task.TaskID
	var list api.TasksResponse
	d.mustOK(http.MethodGet, api.PathTasks+"?ns=fx", nil, &list)
	if len(list.Tasks) != 3 {
		t.Errorf("tasks: %+v", list)
	}
	var got api.CallResponse
	d.mustOK(http.MethodPost, api.PathTaskResult, api.TaskRequest{Namespace: "fx", TaskID: id}, &got)
	if got.Task == nil || got.Task.TaskID != id || !strings.Contains(string(got.Result), "slept 0.5 seconds") {
		t.Errorf("task result: %+v %s", got.Task, got.Result)
	}
	var info api.Task
	d.mustOK(http.MethodGet, api.PathTask+"?ns=fx&id="+id, nil, &info)
	if !info.Done || info.Status != "completed" {
		t.Errorf("task after result: %+v", info)
	}

	// Cancelled.
	d.mustOK(http.MethodPost, api.PathCall, api.CallRequest{Namespace: "fx", Tool: "task_sleep", Arguments: []byte(`{"seconds":3}`), Detach: true}, &resp)
	d.mustOK(http.MethodPost, api.PathTaskCancel, api.TaskRequest{Namespace: "fx", TaskID: resp.Task.TaskID}, &info)
	if info.Status != "cancelled" {
		t.Errorf("cancel: %+v", info)
	}
	if code, e := d.do(http.MethodPost, api.PathTaskResult, api.TaskRequest{Namespace: "fx", TaskID: resp.Task.TaskID}, nil); code != http.StatusConflict || e.Code != api.CodeTaskCancelled {
		t.Errorf("result of a cancelled task: %d %+v", code, e)
	}

	// Bad input.
	if code, e := d.do(http.MethodGet, api.PathTask+"?ns=fx&id=nope", nil, nil); code != http.StatusNotFound || e.Code != api.CodeUnknownTask {
		t.Errorf("unknown task: %d %+v", code, e)
	}
	if code, e := d.do(http.MethodGet, api.PathTask+"?ns=fx", nil, nil); code != http.StatusBadRequest || e.Code != api.CodeBadRequest {
		t.Errorf("task without id: %d %+v", code, e)
	}
	if code, e := d.do(http.MethodPost, api.PathCall, api.CallRequest{Namespace: "fx", Tool: "echo", Arguments: []byte(`{"text":"x"}`), Task: true}, nil); code != http.StatusBadRequest {
		t.Errorf("task of a tool without task support: %d %+v", code, e)
	}
}

func TestResourceAndPromptRoutes(t *testing.T) {
	_, d, started := startFixture(t)
	var rr api.ResourcesResponse
	d.mustOK(http.MethodGet, api.PathResources, nil, &rr)
	if len(rr.Namespaces) != 6 || len(rr.Resources) != 0 || rr.Resources == nil || rr.Templates == nil {
		t.Errorf("resources before refresh: %+v", rr)
	}
	var pr api.PromptsResponse
	d.mustOK(http.MethodGet, api.PathPrompts+"?ns=fx", nil, &pr)
	if len(pr.Namespaces) != 1 || pr.Namespaces[0].State != api.StateUnread || pr.Prompts == nil {
		t.Errorf("prompts before refresh: %+v", pr)
	}
	if code, e := d.do(http.MethodGet, api.PathResources+"?ns=fxx", nil, nil); code != http.StatusNotFound || e.Suggestion != "fx" {
		t.Errorf("unknown namespace: %d %+v", code, e)
	}
	if code, e := d.do(http.MethodPost, api.PathRead, api.ReadRequest{Namespace: "fx"}, nil); code != http.StatusBadRequest {
		t.Errorf("read without URI: %d %+v", code, e)
	}
	if code, e := d.do(http.MethodPost, api.PathPrompt, api.PromptRequest{Name: "x"}, nil); code != http.StatusBadRequest {
		t.Errorf("prompt without namespace: %d %+v", code, e)
	}
	if code, _ := d.do(http.MethodPost, api.PathPrompt, `{"namespace": 3}`, nil); code != http.StatusBadRequest {
		t.Errorf("malformed body: %d", code)
	}
	if _, err := os.Stat(started); !os.IsNotExist(err) {
		t.Errorf("listing resources or prompts started the server (marker: %v)", err)
	}

	// The fixture has no prompts: once read, asking for one is a 404.
	d.mustOK(http.MethodPost, api.PathRefresh, api.RefreshRequest{Namespace: "fx"}, nil)
	if code, e := d.do(http.MethodPost, api.PathPrompt, api.PromptRequest{Namespace: "fx", Name: "none"}, nil); code != http.StatusNotFound || e.Code != api.CodeUnknownPrompt {
		t.Errorf("unknown prompt: %d %+v", code, e)
	}
}
