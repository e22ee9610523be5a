package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// call calls a tool. Text content goes to stdout; binary content was moved
// to the cache by the daemon and is printed as its path (or copied out with
// --save). A result with isError prints its text on stderr and exits 1.
//
// --json: api.CallResponse. --raw: the CallToolResult exactly as the daemon
// returned it.
func callCommand(a *App) *ucli.Command {
	return &ucli.Command{
		Name:      "call",
		Usage:     "call a tool",
		ArgsUsage: "NS.TOOL [JSON | - | @FILE] [key=value | key:=JSON | key=@FILE ...]",
		Description: "Arguments are one JSON object (\"-\" reads it from stdin, @FILE from a file) and/or\n" +
			"key=value pairs, typed by the tool's input schema in the daemon (numbers, booleans, arrays\n" +
			"and objects are read as JSON; strings stay strings). key:=JSON passes the value as raw JSON,\n" +
			"key=@FILE reads the value from a file, and a repeated key builds an array where the schema\n" +
			"says array. The daemon checks the arguments against the schema first (--no-validate skips\n" +
			"that). `mcpx call NS.TOOL --help` lists the tool's parameters.",
		Flags: []ucli.Flag{
			&ucli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "confirm a destructive call without asking"},
			&ucli.BoolFlag{Name: "raw", Usage: "print the MCP result exactly as the server sent it (--output raw)"},
			&ucli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "`FORMAT` of the result: text, json or raw"},
			&ucli.BoolFlag{Name: "no-validate", Usage: "send the arguments without checking them against the input schema"},
			&ucli.BoolFlag{Name: "progress", Usage: "print the server's progress and log messages on stderr, one line each (a terminal shows a progress bar anyway)"},
			sessionFlag(),
			&ucli.StringFlag{Name: "save", Usage: "copy binary results into `DIR`"},
			&ucli.BoolFlag{Name: "task", Usage: "run a tool whose task support is optional as a task"},
			&ucli.BoolFlag{Name: "detach", Usage: "print the task id at once and let the daemon finish the task (collect it with: mcpx task result ID)"},
			elicitFlag(),
		},
		Action: func(ctx context.Context, cmd *ucli.Command) error { return a.callRun(ctx, cmd) },
	}
}

// callRun runs call with the line cmd (parsed by urfave/cli, or lean.go).
func (a *App) callRun(ctx context.Context, cmd invocation) error {
	if cmd.NArg() == 0 {
		return usagef("call needs NS.TOOL")
	}
	if a.Terminal || a.StderrTTY {
		// A prompt, a task's status or a progress line may be
		// on the terminal: an interrupt cancels the task and
		// clears the line before mcpx ends.
		var stop context.CancelFunc
		ctx, stop = interruptible(ctx)
		defer stop()
	}
	target := cmd.Args().First()
	ns, tool := splitTarget(target)
	if ns == "" || tool == "" {
		return usagef("call: %q is not NS.TOOL", target)
	}
	mode, err := outputMode(cmd)
	if err != nil {
		return err
	}
	elicit, err := a.elicitMode(cmd)
	if err != nil {
		return err
	}
	parsed, err := parseArgs(cmd.Args().Tail(), a.Stdin)
	if err != nil {
		return err
	}
	c, err := a.client(ctx, cmd)
	if err != nil {
		return err
	}
	req := api.CallRequest{Namespace: ns, Tool: tool, Arguments: parsed.object, Pairs: parsed.pairs,
		NoValidate: cmd.Bool("no-validate"), Raw: mode == "raw",
		Session: a.session(cmd), Confirmed: cmd.Bool("yes")}
	req.Task, req.Detach = cmd.Bool("task"), cmd.Bool("detach")
	if elicit != api.ElicitDecline {
		req.Elicit = elicit // decline is the daemon's default
	}
	call := c.Call
	progress := a.StderrTTY || cmd.Bool("progress")
	if progress || elicit == api.ElicitAsk {
		// Stream the call: the server's progress and log messages
		// show while it runs, and its questions are asked on the
		// terminal.
		call = func(ctx context.Context, req api.CallRequest) (*api.CallResponse, error) {
			h := client.StreamHooks{Late: a.answerLate}
			var view *progressView
			if progress {
				view = newProgressView(a.Stderr, a.StderrTTY, ns) // one per attempt (a confirmed retry is another)
				defer view.done()
				h.Frame = view.frame
			}
			if elicit == api.ElicitAsk {
				h.Elicit = a.elicitor(view).answer
			}
			return c.CallStreamWith(ctx, req, h)
		}
	}
	resp, detached, err := a.callTask(ctx, c, a.withStepUp(c, call), req)
	if err != nil {
		return err
	}
	if detached {
		return a.renderDetached(cmd, resp)
	}
	return a.renderCall(cmd, mode, tool, resp)
}

// outputMode is the call's output form: text (default), json (--json or
// --output json) or raw (--raw or --output raw).
func outputMode(cmd invocation) (string, error) {
	mode := cmd.String("output")
	switch mode {
	case "", "text", "json", "raw":
	default:
		return "", usagef("--output must be text, json or raw, not %q", mode)
	}
	if cmd.Bool("raw") {
		if mode != "" && mode != "raw" {
			return "", usagef("--raw and --output %s contradict each other", mode)
		}
		mode = "raw"
	}
	if mode == "" {
		mode = "text"
		if jsonOut(cmd) {
			mode = "json"
		}
	}
	return mode, nil
}

// callConfirmed calls, asking for confirmation on a terminal when the daemon
// requires it, and turns policy refusals into exit 4 with one sentence.
func (a *App) callConfirmed(ctx context.Context, call func(context.Context, api.CallRequest) (*api.CallResponse, error), req api.CallRequest) (*api.CallResponse, error) {
	name := req.Namespace + "." + req.Tool
	for {
		resp, err := call(ctx, req)
		var ae *client.APIError
		if !errors.As(err, &ae) {
			return resp, err
		}
		switch ae.Code() {
		case api.CodeConfirmation:
			if req.Confirmed {
				return nil, &exitError{code: ExitPolicy, kind: api.CodeConfirmation, msg: fmt.Sprintf("the daemon refused %s even though it was confirmed: %s", name, ae.Error())}
			}
			if !a.Terminal {
				return nil, &exitError{code: ExitPolicy, kind: api.CodeConfirmation, msg: fmt.Sprintf("%s is destructive and needs confirmation; pass --yes to call it.", name)}
			}
			ok, err := a.confirm(ctx, fmt.Sprintf("Call %s (destructive)? [y/N] ", name))
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, &exitError{code: ExitPolicy, kind: api.CodeConfirmation, msg: fmt.Sprintf("%s not called.", name)}
			}
			req.Confirmed = true
		case api.CodePolicyDenied:
			return nil, &exitError{code: ExitPolicy, kind: api.CodePolicyDenied, msg: fmt.Sprintf("%s. The config's policy denies %s (policy.destructive: deny); change the policy to call it.",
				strings.TrimSuffix(ae.Error(), "."), name)}
		case api.CodeAnnotationsUnknown:
			return nil, &exitError{code: ExitPolicy, kind: api.CodeAnnotationsUnknown, msg: fmt.Sprintf("%s. mcpx cannot tell whether %s is destructive because its schema could not be read, so the policy refuses it; fix the server (see `mcpx ls %s`) and retry.",
				strings.TrimSuffix(ae.Error(), "."), name, req.Namespace)}
		default:
			return nil, err
		}
	}
}

// confirm asks on stderr and reads one line from stdin. An interrupt
// (ctx done) while waiting for the answer ends the wait with ctx's error:
// the read itself cannot be cancelled, so it is left to the exiting
// process.
func (a *App) confirm(ctx context.Context, question string) (bool, error) {
	fmt.Fprint(a.Stderr, question)
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(a.Stdin).ReadString('\n')
		answer <- line
	}()
	select {
	case line := <-answer:
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true, nil
		}
		return false, nil
	case <-ctx.Done():
		fmt.Fprintln(a.Stderr)
		return false, ctx.Err()
	}
}

func (a *App) renderCall(cmd invocation, mode, tool string, resp *api.CallResponse) error {
	if dir := cmd.String("save"); dir != "" {
		if err := saveBlobs(dir, tool, resp.Blobs); err != nil {
			return err
		}
	}
	code := ExitOK
	if resp.IsError {
		code = ExitToolError
	}
	switch {
	case mode == "raw" && jsonOut(cmd):
		// The result as received, with the stored paths beside it.
		if err := writeJSON(a.Stdout, resp); err != nil {
			return err
		}
	case mode == "raw":
		if _, err := a.Stdout.Write(append(bytes.TrimSpace(resp.Result), '\n')); err != nil {
			return err
		}
	case mode == "json":
		if err := writeJSON(a.Stdout, resp); err != nil {
			return err
		}
	default:
		out, tty := a.Stdout, a.StdoutTTY
		if resp.IsError {
			out, tty = a.Stderr, true // a message for people
		}
		text, err := resultText(resp)
		if err != nil {
			return err
		}
		if tty && text != "" && !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
		if _, err := io.WriteString(out, text); err != nil {
			return err
		}
	}
	if code != ExitOK {
		return silent(code)
	}
	return nil
}

// resultText renders a call result for people: text items joined with
// newlines, one line per blob (path, MIME type, size), resource links as
// their URI, and the structured content when there is nothing else.
func resultText(resp *api.CallResponse) (string, error) {
	result := &api.CallResult{}
	if len(resp.Result) > 0 {
		var err error
		if result, err = api.DecodeCallResult(resp.Result); err != nil {
			return "", fmt.Errorf("read the call result: %w", err)
		}
	}
	blobs := map[int]api.Blob{}
	for _, b := range resp.Blobs {
		blobs[b.Index] = b
	}
	// Text is written exactly as sent: parts are separated by a newline
	// only where the previous part does not end with one, and the last
	// part gets none (the caller adds one on a terminal).
	var parts []string
	for i, item := range result.Content {
		if b, ok := blobs[i]; ok {
			parts = append(parts, blobLine(b)+"\n")
			continue
		}
		switch {
		case item.Type == "text":
			parts = append(parts, item.Text)
		case item.Type == "resource" && item.Resource != nil && item.Resource.Text != "":
			parts = append(parts, item.Resource.Text)
		case item.Type == "resource_link" || (item.Type == "resource" && item.Resource != nil):
			uri := item.URI
			if item.Resource != nil {
				uri = item.Resource.URI
			}
			parts = append(parts, uri)
		}
	}
	if len(parts) == 0 && len(result.StructuredContent) > 0 && string(result.StructuredContent) != "null" {
		b, err := json.MarshalIndent(result.StructuredContent, "", "  ")
		if err != nil {
			return "", err
		}
		parts = append(parts, string(b))
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 && !strings.HasSuffix(parts[i-1], "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(p)
	}
	return b.String(), nil
}

func blobLine(b api.Blob) string {
	mt := b.MimeType
	if mt == "" {
		mt = "application/octet-stream"
	}
	return fmt.Sprintf("%s (%s, %s bytes)", b.Path, mt, strconv.FormatInt(b.Size, 10))
}

// saveBlobs copies each blob into dir under its suggested name, or
// <tool>-<index><ext> from its MIME type, never overwriting a file. The
// blobs' paths are updated to the copies.
func saveBlobs(dir, tool string, blobs []api.Blob) error {
	if len(blobs) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save results: %w", err)
	}
	for i := range blobs {
		b := &blobs[i]
		name := filepath.Base(b.Name)
		if name == "." || name == "/" || name == ".." || name == "" {
			name = fmt.Sprintf("%s-%d%s", tool, b.Index, extension(b.MimeType))
		}
		dst, err := copyNew(b.Path, dir, name)
		if err != nil {
			return fmt.Errorf("save result %d of %s: %w", b.Index, tool, err)
		}
		b.Path = dst
	}
	return nil
}

// extension picks a file extension for a MIME type.
func extension(mt string) string {
	common := map[string]string{
		"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp",
		"image/svg+xml": ".svg", "audio/wav": ".wav", "audio/x-wav": ".wav", "audio/mpeg": ".mp3",
		"audio/ogg": ".ogg", "application/pdf": ".pdf", "application/json": ".json", "text/plain": ".txt",
		"application/zip": ".zip",
	}
	base, _, _ := strings.Cut(mt, ";")
	base = strings.TrimSpace(strings.ToLower(base))
	if ext, ok := common[base]; ok {
		return ext
	}
	if exts, err := mime.ExtensionsByType(base); err == nil && len(exts) > 0 {
		return exts[0]
	}
	return ".bin"
}

// copyNew copies src to dir/name, adding -1, -2... before the extension when
// the name is taken. It returns the path written.
func copyNew(src, dir, name string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for n := 0; ; n++ {
		dst := filepath.Join(dir, name)
		if n > 0 {
			dst = filepath.Join(dir, fmt.Sprintf("%s-%d%s", stem, n, ext))
		}
		out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		_, err = io.Copy(out, in)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(dst)
			return "", err
		}
		return dst, nil
	}
}
