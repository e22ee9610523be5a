package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Tasks (MCP 2025-11-25): the daemon runs a tool whose taskSupport is
// "required" (or "optional" with --task) as a task and follows it. `call`
// waits for the outcome — on a terminal it shows the task's status while it
// runs — or, with --detach, prints the task id at once; `task result`
// collects it later.

// callTask calls, following a task to its end. detached reports that the
// answer is a task still running (--detach).
// call sends one request (plain or streamed); c follows the task.
func (a *App) callTask(ctx context.Context, c *client.Client, call func(context.Context, api.CallRequest) (*api.CallResponse, error), req api.CallRequest) (resp *api.CallResponse, detached bool, err error) {
	detach := req.Detach
	if a.Terminal && !detach {
		// Come back as soon as it is a task, and show its status here.
		req.Detach = true
	}
	resp, err = a.callConfirmed(ctx, call, req)
	if err != nil || resp.Task == nil || resp.Task.Done || !isNull(resp.Result) {
		return resp, false, err
	}
	if detach {
		return resp, true, nil
	}
	resp, err = a.followTask(ctx, c, *resp.Task)
	return resp, false, err
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// followTask shows a task's status on stderr until it ends, then collects
// its result. An interrupt cancels the task.
func (a *App) followTask(ctx context.Context, c *client.Client, t api.Task) (*api.CallResponse, error) {
	last := ""
	show := func(t api.Task) {
		line := t.Status
		if t.StatusMessage != "" {
			line += ": " + t.StatusMessage
		}
		if line != last {
			fmt.Fprintf(a.Stderr, "mcpx: task %s of %s.%s %s\n", t.TaskID, t.Namespace, t.Tool, line)
			last = line
		}
	}
	resp, err := c.FollowTask(ctx, t, 500*time.Millisecond, show)
	var ab *client.TaskAbandoned
	if errors.As(err, &ab) && ab.Cancelled {
		fmt.Fprintf(a.Stderr, "mcpx: task %s cancelled\n", t.TaskID)
	}
	return resp, err
}

// renderDetached prints a detached task: its id (stdout), and how to
// collect it (stderr). --json: api.CallResponse with task set.
func (a *App) renderDetached(cmd invocation, resp *api.CallResponse) error {
	if jsonOut(cmd) {
		return writeJSON(a.Stdout, resp)
	}
	t := resp.Task
	fmt.Fprintln(a.Stdout, t.TaskID)
	fmt.Fprintf(a.Stderr, "mcpx: %s.%s runs as task %s; collect it with `mcpx task result %s %s`.\n", t.Namespace, t.Tool, t.TaskID, t.Namespace, t.TaskID)
	return nil
}

func taskArgs(cmd *ucli.Command, what string) (ns, id string, err error) {
	if cmd.NArg() != 2 {
		return "", "", usagef("task %s needs NS and TASK_ID", what)
	}
	return cmd.Args().Get(0), cmd.Args().Get(1), nil
}

func taskLine(t api.Task) []string {
	status := t.Status
	if t.StatusMessage != "" {
		status += ": " + t.StatusMessage
	}
	if t.Error != nil && t.Status != "cancelled" {
		status += " (" + t.Error.Error + ")"
	}
	return []string{t.TaskID, t.Namespace + "." + t.Tool, status, t.StartedAt.Local().Format(time.DateTime)}
}

// task get|result|cancel NS TASK_ID.
//
// --json: api.Task (get, cancel), api.CallResponse (result).
func taskCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:  "task",
		Usage: "look at, collect or cancel a task the daemon runs",
		Commands: []*ucli.Command{
			{
				Name:      "get",
				Usage:     "show a task's status",
				ArgsUsage: "NS TASK_ID",
				Action: func(ctx context.Context, cmd *ucli.Command) error {
					ns, id, err := taskArgs(cmd, "get")
					if err != nil {
						return err
					}
					c, err := a.client(ctx, cmd)
					if err != nil {
						return err
					}
					t, err := c.Task(ctx, ns, id)
					if err != nil {
						return err
					}
					if jsonOut(cmd) {
						return writeJSON(a.Stdout, t)
					}
					return table(a.Stdout, []string{"TASK", "TOOL", "STATUS", "STARTED"}, [][]string{taskLine(*t)})
				},
			},
			{
				Name:      "result",
				Usage:     "wait for a task's result and print it as `call` does",
				ArgsUsage: "NS TASK_ID",
				Flags: []ucli.Flag{
					&ucli.BoolFlag{Name: "raw", Usage: "print the full result JSON"},
					&ucli.StringFlag{Name: "save", Usage: "copy binary results into `DIR`"},
				},
				Action: func(ctx context.Context, cmd *ucli.Command) error {
					ns, id, err := taskArgs(cmd, "result")
					if err != nil {
						return err
					}
					c, err := a.client(ctx, cmd)
					if err != nil {
						return err
					}
					resp, err := c.TaskResult(ctx, ns, id)
					if err != nil {
						return err
					}
					tool := id
					if resp.Task != nil {
						tool = resp.Task.Tool
					}
					mode, err := outputMode(cmd)
					if err != nil {
						return err
					}
					return a.renderCall(cmd, mode, tool, resp)
				},
			},
			{
				Name:      "cancel",
				Usage:     "cancel a task",
				ArgsUsage: "NS TASK_ID",
				Action: func(ctx context.Context, cmd *ucli.Command) error {
					ns, id, err := taskArgs(cmd, "cancel")
					if err != nil {
						return err
					}
					c, err := a.client(ctx, cmd)
					if err != nil {
						return err
					}
					t, err := c.CancelTask(ctx, ns, id)
					if err != nil {
						return err
					}
					if jsonOut(cmd) {
						return writeJSON(a.Stdout, t)
					}
					fmt.Fprintf(a.Stdout, "task %s: %s\n", t.TaskID, t.Status)
					return nil
				},
			},
		},
	}
}

// tasks lists the tasks the daemon follows.
//
// --json: api.TasksResponse.
func tasksCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "tasks",
		Usage:     "list the tasks the daemon runs or ran in the last hour",
		ArgsUsage: "[NS]",
		Action: func(ctx context.Context, cmd *ucli.Command) error {
			if cmd.NArg() > 1 {
				return usagef("tasks takes at most one namespace")
			}
			c, err := a.client(ctx, cmd)
			if err != nil {
				return err
			}
			r, err := c.Tasks(ctx, cmd.Args().First())
			if err != nil {
				return err
			}
			if jsonOut(cmd) {
				return writeJSON(a.Stdout, r)
			}
			rows := make([][]string, 0, len(r.Tasks))
			for _, t := range r.Tasks {
				rows = append(rows, taskLine(t))
			}
			if len(rows) == 0 {
				return nil
			}
			return table(a.Stdout, []string{"TASK", "TOOL", "STATUS", "STARTED"}, rows)
		},
	}
}
