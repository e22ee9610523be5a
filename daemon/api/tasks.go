package api

import (
	"encoding/json"
	"time"
)

// Task routes (protocol 2025-11-25 tasks, owned by the daemon).
const (
	PathTasks      = "/v1/tasks"       // GET [?ns=NS]
	PathTask       = "/v1/task"        // GET ?ns=NS&id=TASK_ID
	PathTaskResult = "/v1/task/result" // POST TaskRequest: waits for the outcome
	PathTaskCancel = "/v1/task/cancel" // POST TaskRequest
)

// Task error codes.
const (
	CodeUnknownTask   = "unknown_task"   // 404: no task of that id in this daemon
	CodeTaskCancelled = "task_cancelled" // 409: the task ended cancelled, it has no result
	CodeTaskFailed    = "task_failed"    // 502: following the task failed (the server, the transport)
)

// Task is a tool call the daemon runs as an MCP task and polls until it is
// terminal; it outlives the request that started it.
type Task struct {
	Namespace     string    `json:"namespace"`
	Tool          string    `json:"tool"`
	TaskID        string    `json:"taskId"`
	Status        string    `json:"status"` // working, input_required, completed, failed, cancelled
	StatusMessage string    `json:"statusMessage,omitempty"`
	StartedAt     time.Time `json:"startedAt"`
	// Done is set once the outcome is known (result or error).
	Done bool `json:"done"`
	// Error is why following the task failed, once Done.
	Error *Error `json:"error,omitempty"`
	// Raw is the last task object the server sent.
	Raw json.RawMessage `json:"raw,omitempty"`
}

// TaskRequest names one task.
type TaskRequest struct {
	Namespace string `json:"namespace"`
	TaskID    string `json:"taskId"`
}

// TasksResponse is GET /v1/tasks.
type TasksResponse struct {
	Tasks []Task `json:"tasks"`
}
