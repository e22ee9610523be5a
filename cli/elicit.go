package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	ucli "github.com/urfave/cli/v3"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Elicitation: a server may ask the person behind a call for input. Who
// answers is the elicit mode (--elicit, else MCPX_ELICIT, else ask on a
// terminal and decline elsewhere): ask puts each question on the terminal,
// field by field; defaults accepts a form with its schema's defaults
// (declining one that cannot be filled that way, and every URL); decline
// declines. --json never prompts.

// elicitFlag is --elicit (call).
func elicitFlag() ucli.Flag {
	return &ucli.StringFlag{Name: "elicit", Usage: "who answers when the server asks for input: `MODE` ask (on the terminal), defaults (the form's defaults) or decline (default: ask on a terminal, else decline; $MCPX_ELICIT)"}
}

// elicitMode resolves the elicit mode of cmd: the flag, else MCPX_ELICIT,
// else ask on a terminal and decline elsewhere. --json never asks: an
// explicit --elicit ask with it is a usage error, MCPX_ELICIT=ask under it
// declines.
func (a *App) elicitMode(cmd invocation) (string, error) {
	mode, from := "", ""
	if cmd.IsSet("elicit") {
		mode, from = cmd.String("elicit"), "--elicit"
	} else if v := strings.TrimSpace(a.Getenv("MCPX_ELICIT")); v != "" {
		mode, from = v, "MCPX_ELICIT"
	}
	switch mode {
	case "":
		if a.Terminal && !jsonOut(cmd) {
			return api.ElicitAsk, nil
		}
		return api.ElicitDecline, nil
	case api.ElicitAsk:
		if jsonOut(cmd) {
			if from == "--elicit" {
				return "", usagef("--elicit ask prompts on the terminal, which --json never does; use --elicit defaults or decline")
			}
			return api.ElicitDecline, nil
		}
		if !a.Terminal {
			return api.ElicitDecline, nil // nobody to ask
		}
		return mode, nil
	case api.ElicitDefaults, api.ElicitDecline:
		return mode, nil
	}
	return "", usagef("%s %q: want ask, defaults or decline", from, mode)
}

// elicitDefaults is the elicit mode of a request that cannot ask (prompt,
// read): defaults when MCPX_ELICIT says so, else the daemon declines.
func (a *App) elicitDefaults() string {
	if strings.TrimSpace(a.Getenv("MCPX_ELICIT")) == api.ElicitDefaults {
		return api.ElicitDefaults
	}
	return ""
}

// elicitor asks a person on the terminal (stdin and stderr). view, when
// not nil, is the call's progress line, cleared before each question.
type elicitor struct {
	a    *App
	view *progressView
	in   *bufio.Reader
}

func (a *App) elicitor(view *progressView) *elicitor {
	return &elicitor{a: a, view: view, in: bufio.NewReader(a.Stdin)}
}

// errNoAnswer is stdin closing (Ctrl-D): the elicitation is cancelled.
var errNoAnswer = errors.New("no answer")

// answer asks e and returns the ElicitResult.
func (el *elicitor) answer(ctx context.Context, e api.Elicitation) json.RawMessage {
	if el.view != nil {
		el.view.clear()
	}
	var p api.ElicitParams
	if err := json.Unmarshal(e.Params, &p); err != nil {
		fmt.Fprintf(el.a.Stderr, "mcpx: %s asked for input mcpx cannot read (%v); declined\n", e.Namespace, err)
		return api.ElicitResult(api.ActionDecline, nil)
	}
	var res json.RawMessage
	var err error
	if p.URLMode() {
		res, err = el.askURL(ctx, e.Namespace, p)
	} else {
		res, err = el.askForm(ctx, e.Namespace, p)
	}
	switch {
	case errors.Is(err, errNoAnswer):
		fmt.Fprintln(el.a.Stderr, "\nmcpx: cancelled")
		return api.ElicitResult(api.ActionCancel, nil)
	case err != nil:
		return api.ElicitResult(api.ActionCancel, nil) // interrupted: mcpx ends
	}
	return res
}

// askURL shows the URL and, with consent, opens it.
func (el *elicitor) askURL(ctx context.Context, ns string, p api.ElicitParams) (json.RawMessage, error) {
	w := el.a.Stderr
	fmt.Fprintf(w, "mcpx: %s asks you to open a page in your browser: %s\n\n    %s\n\n", ns, api.OneLine(p.Message), p.URL)
	u, err := url.Parse(p.URL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		fmt.Fprintf(w, "mcpx: that is not a web address; declined\n")
		return api.ElicitResult(api.ActionDecline, nil), nil
	}
	ok, err := el.yesNo(ctx, fmt.Sprintf("Open it (%s)? [Y/n] ", u.Host), true)
	if err != nil {
		return nil, err
	}
	if !ok {
		return api.ElicitResult(api.ActionDecline, nil), nil
	}
	if el.a.openBrowser(p.URL) {
		fmt.Fprintf(w, "mcpx: opened your browser; waiting for %s…\n", ns)
	} else {
		fmt.Fprintf(w, "mcpx: open the address above in a browser; waiting for %s…\n", ns)
	}
	return api.ElicitResult(api.ActionAccept, nil), nil
}

// askForm asks every field of the form, then whether to send the answers.
func (el *elicitor) askForm(ctx context.Context, ns string, p api.ElicitParams) (json.RawMessage, error) {
	w := el.a.Stderr
	fields, err := api.ElicitFields(p.RequestedSchema)
	if err != nil {
		fmt.Fprintf(w, "mcpx: %s asked for input mcpx cannot show (%v); declined\n", ns, err)
		return api.ElicitResult(api.ActionDecline, nil), nil
	}
	fmt.Fprintf(w, "mcpx: %s asks: %s\n", ns, api.OneLine(p.Message))
	fmt.Fprintln(w, "  (Enter keeps the [default]; Ctrl-D cancels)")
	content := map[string]any{}
	for _, f := range fields {
		v, err := el.askField(ctx, f)
		if err != nil {
			return nil, err
		}
		if v != nil {
			content[f.Name] = v
		}
	}
	ok, err := el.yesNo(ctx, fmt.Sprintf("Send these answers to %s? [Y/n] ", ns), true)
	if err != nil {
		return nil, err
	}
	if !ok {
		return api.ElicitResult(api.ActionDecline, nil), nil
	}
	return api.ElicitResult(api.ActionAccept, content), nil
}

// askField asks one field until the answer is valid; nil means left out.
func (el *elicitor) askField(ctx context.Context, f api.ElicitField) (any, error) {
	w := el.a.Stderr
	label := f.Title
	if label == "" {
		label = f.Name
	}
	var notes []string
	if f.Description != "" {
		notes = append(notes, api.OneLine(f.Description))
	}
	if h := fieldHint(f); h != "" {
		notes = append(notes, h)
	}
	if f.Required && f.Default == nil {
		notes = append(notes, "required")
	}
	head := "  " + label
	if len(notes) > 0 {
		head += " (" + strings.Join(notes, "; ") + ")"
	}
	if len(f.Choices) > 0 {
		fmt.Fprintln(w, head+":")
		for i, c := range f.Choices {
			name := c
			if i < len(f.Titles) && f.Titles[i] != "" {
				name = f.Titles[i]
				if !strings.EqualFold(f.Titles[i], c) {
					name += " (" + c + ")"
				}
			}
			fmt.Fprintf(w, "    %d) %s\n", i+1, name)
		}
		head = "  choose"
		if f.Type == "array" {
			head += " one or more, separated by commas"
		}
	}
	prompt := head
	if d := defaultText(f); d != "" {
		prompt += " [" + d + "]"
	}
	prompt += ": "
	for {
		line, err := el.readLine(ctx, prompt, f.Secret)
		if err != nil {
			return nil, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			if f.Default != nil {
				return f.Default, nil
			}
			if !f.Required {
				return nil, nil
			}
			fmt.Fprintln(w, "    ↳ an answer is required")
			continue
		}
		v, err := parseField(f, line)
		if err == nil {
			return v, nil
		}
		fmt.Fprintf(w, "    ↳ %v\n", err)
	}
}

// fieldHint describes what a field accepts.
func fieldHint(f api.ElicitField) string {
	bounds := func(what string, lo, hi *float64) string {
		switch {
		case lo != nil && hi != nil:
			return fmt.Sprintf("%s from %s to %s", what, num(*lo), num(*hi))
		case lo != nil:
			return fmt.Sprintf("%s of at least %s", what, num(*lo))
		case hi != nil:
			return fmt.Sprintf("%s of at most %s", what, num(*hi))
		}
		return what
	}
	switch {
	case f.Type == "boolean":
		return "y/n"
	case f.Type == "integer" && len(f.Choices) == 0:
		return bounds("a whole number", f.Minimum, f.Maximum)
	case f.Type == "number" && len(f.Choices) == 0:
		return bounds("a number", f.Minimum, f.Maximum)
	case f.Type == "string" && len(f.Choices) == 0:
		var parts []string
		switch f.Format {
		case "email":
			parts = append(parts, "an email address")
		case "uri":
			parts = append(parts, "a URI")
		case "date":
			parts = append(parts, "a date YYYY-MM-DD")
		case "date-time":
			parts = append(parts, "a date and time like 2026-07-28T09:00:00Z")
		}
		if f.Secret {
			parts = append(parts, "not shown as you type")
		}
		if f.MinLen != nil && f.MaxLen != nil {
			parts = append(parts, fmt.Sprintf("%d to %d characters", *f.MinLen, *f.MaxLen))
		} else if f.MaxLen != nil {
			parts = append(parts, fmt.Sprintf("at most %d characters", *f.MaxLen))
		} else if f.MinLen != nil {
			parts = append(parts, fmt.Sprintf("at least %d characters", *f.MinLen))
		}
		return strings.Join(parts, ", ")
	}
	return ""
}

// defaultText shows a field's default the way it is typed ("" for none;
// a secret's is hidden).
func defaultText(f api.ElicitField) string {
	if f.Default == nil {
		if f.Type == "boolean" {
			return "y/n"
		}
		return ""
	}
	if f.Secret {
		return "keep"
	}
	switch f.Type {
	case "boolean":
		var b bool
		_ = json.Unmarshal(f.Default, &b)
		if b {
			return "Y/n"
		}
		return "y/N"
	case "array":
		var list []string
		_ = json.Unmarshal(f.Default, &list)
		var idx []string
		for _, v := range list {
			if i := slices.Index(f.Choices, v); i >= 0 {
				idx = append(idx, strconv.Itoa(i+1))
			}
		}
		return strings.Join(idx, ",")
	}
	if len(f.Choices) > 0 {
		var s string
		_ = json.Unmarshal(f.Default, &s)
		if i := slices.Index(f.Choices, s); i >= 0 {
			return strconv.Itoa(i + 1)
		}
	}
	var s string
	if json.Unmarshal(f.Default, &s) == nil {
		return s
	}
	return string(f.Default)
}

// parseField reads an answer to f, or says why it is not one.
func parseField(f api.ElicitField, s string) (any, error) {
	switch f.Type {
	case "boolean":
		switch strings.ToLower(s) {
		case "y", "yes", "true", "1":
			return true, nil
		case "n", "no", "false", "0":
			return false, nil
		}
		return nil, errors.New("answer y or n")
	case "array":
		return parseChoices(f, s)
	}
	if len(f.Choices) > 0 {
		return choice(f, s)
	}
	switch f.Type {
	case "integer", "number":
		return parseNumber(f, s)
	}
	return parseString(f, s)
}

// parseChoices reads a comma-separated answer to an array field f.
func parseChoices(f api.ElicitField, s string) (any, error) {
	var out []string
	for _, part := range strings.Split(s, ",") {
		c, err := choice(f, strings.TrimSpace(part))
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	if f.MinLen != nil && len(out) < *f.MinLen {
		return nil, fmt.Errorf("choose at least %d", *f.MinLen)
	}
	if f.MaxLen != nil && len(out) > *f.MaxLen {
		return nil, fmt.Errorf("choose at most %d", *f.MaxLen)
	}
	return out, nil
}

// parseNumber reads an answer to an integer or number field f.
func parseNumber(f api.ElicitField, s string) (any, error) {
	x, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, errors.New("not a number")
	}
	if f.Type == "integer" {
		if _, err := strconv.ParseInt(s, 10, 64); err != nil {
			return nil, errors.New("not a whole number")
		}
	}
	if f.Minimum != nil && x < *f.Minimum {
		return nil, fmt.Errorf("at least %s", num(*f.Minimum))
	}
	if f.Maximum != nil && x > *f.Maximum {
		return nil, fmt.Errorf("at most %s", num(*f.Maximum))
	}
	return json.Number(s), nil
}

// parseString reads an answer to a string field f: its length, and its
// format where it has one.
func parseString(f api.ElicitField, s string) (any, error) {
	n := len([]rune(s))
	if f.MinLen != nil && n < *f.MinLen {
		return nil, fmt.Errorf("at least %d characters", *f.MinLen)
	}
	if f.MaxLen != nil && n > *f.MaxLen {
		return nil, fmt.Errorf("at most %d characters", *f.MaxLen)
	}
	switch f.Format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return nil, errors.New("not an email address")
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" {
			return nil, errors.New("not a URI (it needs a scheme, like https:)")
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return nil, errors.New("not a date YYYY-MM-DD")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return nil, errors.New("not a date and time like 2026-07-28T09:00:00Z")
		}
	}
	return s, nil
}

// choice reads one of f's choices by number or by value.
func choice(f api.ElicitField, s string) (string, error) {
	if i, err := strconv.Atoi(s); err == nil && i >= 1 && i <= len(f.Choices) {
		return f.Choices[i-1], nil
	}
	for i, c := range f.Choices {
		if strings.EqualFold(c, s) || (i < len(f.Titles) && strings.EqualFold(f.Titles[i], s)) {
			return c, nil
		}
	}
	return "", fmt.Errorf("choose 1 to %d", len(f.Choices))
}

// yesNo asks a yes/no question; an empty answer is def.
func (el *elicitor) yesNo(ctx context.Context, q string, def bool) (bool, error) {
	for {
		line, err := el.readLine(ctx, q, false)
		if err != nil {
			return false, err
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "":
			return def, nil
		case "y", "yes":
			return true, nil
		case "n", "no":
			return false, nil
		}
	}
}

// readLine prompts on stderr and reads one line of stdin (without echo
// for a secret). The end of stdin is errNoAnswer; an interrupt (ctx) ends
// the wait with ctx's error (the read itself is left to the exiting
// process, as confirm does).
func (el *elicitor) readLine(ctx context.Context, prompt string, secret bool) (string, error) {
	if secret {
		// Echo goes off before the prompt shows: what is typed after it
		// is never shown.
		if f, ok := el.a.Stdin.(*os.File); ok {
			if restore, err := noEcho(f); err == nil {
				stop := atInterrupt(func() { restore(); fmt.Fprintln(el.a.Stderr) })
				defer func() { stop(); restore(); fmt.Fprintln(el.a.Stderr) }()
			}
		}
	}
	fmt.Fprint(el.a.Stderr, prompt)
	type read struct {
		line string
		err  error
	}
	got := make(chan read, 1)
	go func() {
		line, err := el.in.ReadString('\n')
		got <- read{line, err}
	}()
	select {
	case r := <-got:
		if r.err != nil && (r.line == "" || !errors.Is(r.err, io.EOF)) {
			return "", errNoAnswer
		}
		return strings.TrimRight(r.line, "\r\n"), nil
	case <-ctx.Done():
		fmt.Fprintln(el.a.Stderr)
		return "", ctx.Err()
	}
}

// answerLate tells the person their answer came too late.
func (a *App) answerLate(e api.Elicitation, err error) {
	fmt.Fprintf(a.Stderr, "mcpx: the answer for %s came too late: %v\n", e.Namespace, err)
}
