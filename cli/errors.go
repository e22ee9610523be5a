package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/owner"
	"github.com/mcpx-dev/mcpx/service"
)

// failure is a classified error: its exit code, its stable code for --json
// (the table in docs/cli.md), what failed, what to do, a server's or
// daemon's output tail, and the daemon's details when it answered.
type failure struct {
	exit int
	code string
	what string
	hint string
	tail string
	api  *api.Error
}

// describe maps a failure to its exit code and the message for stderr:
// "mcpx: <what>. <what to do>", then the tail of a server's or daemon's
// output when there is one. The remedy is added here, once.
func (a *App) describe(err error) (int, string) {
	f := classify(err)
	return f.exit, f.text()
}

func (f failure) text() string {
	what, hint, tail := undouble(f.what), f.hint, f.tail
	if what == "" && hint == "" {
		return ""
	}
	var b strings.Builder
	b.WriteString("mcpx: ")
	if strings.HasPrefix(hint, "did you mean") {
		// "unknown tool x; did you mean y?" reads as one sentence.
		what, hint = strings.TrimSuffix(strings.TrimSpace(what), ".")+"; "+hint, ""
	}
	b.WriteString(sentence(what))
	if tail = strings.TrimRight(tail, "\n"); tail != "" {
		// The server's own words, quoted once; what to do follows on
		// its own line.
		for _, line := range strings.Split(tail, "\n") {
			b.WriteString("\n  | ")
			b.WriteString(line)
		}
		if hint != "" {
			b.WriteString("\n")
			b.WriteString(capitalize(sentence(hint)))
		}
		return b.String()
	}
	if hint != "" {
		b.WriteString(" ")
		b.WriteString(capitalize(sentence(hint)))
	}
	return b.String()
}

// undouble drops a prefix repeated back to back, as wrapped errors from
// libraries produce ("failed to send request: failed to send request: x"
// → "failed to send request: x").
func undouble(s string) string {
	parts := strings.Split(s, ": ")
	out := make([]string, 0, len(parts))
	for i, p := range parts {
		if i > 0 && p == parts[i-1] {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, ": ")
}

// doc is f as an api.ErrorDoc; ok is false for failures that print nothing
// (the command already printed its answer, or the user interrupted).
func (f failure) doc() (api.ErrorDoc, bool) {
	if f.what == "" && f.hint == "" && f.code == "" {
		return api.ErrorDoc{}, false
	}
	b := api.ErrorBody{Code: f.code, Message: sentence(f.what), Exit: f.exit, Hint: capitalize(sentence(f.hint)), Stderr: f.tail}
	if e := f.api; e != nil {
		b.Namespace, b.Tool, b.Argument, b.Suggestion, b.Problems, b.RetryAfter = e.Namespace, e.Tool, e.Argument, e.Suggestion, e.Problems, e.RetryAfter
		b.Scope = e.Scope
	}
	return api.ErrorDoc{Error: b}, true
}

// sentence ends s with a period unless it already ends a sentence.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "`") {
		return s
	}
	return s + "."
}

// capitalize upper-cases the first letter (hints start a sentence).
func capitalize(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// Stable error codes of --json (docs/cli.md has the table). Codes the
// daemon answers with (api.Code*) pass through unless mapped here.
const (
	codeUsage       = api.CodeUsage
	codeConfig      = api.CodeConfig
	codeUnsetVar    = "unset_variable"
	codeUnavailable = "daemon_unavailable"
	codeServer      = "server_failed"
	codeToolFailed  = "tool_failed"
	codeInterrupted = "interrupted"
	codeInternal    = api.CodeInternal
	codeUnsafeState = "unsafe_state"
)

// classify returns the exit code, code, what failed, what to do and an
// output tail.
func classify(err error) failure {
	var (
		ee   *exitError
		ue   *usageError
		ce   *client.ConfigError
		ae   *client.APIError
		se   *service.StartError
		unv  *config.UnsetVarError
		perr *config.ParseError
		uns  *owner.Error
	)
	switch {
	case errors.As(err, &ee):
		return failure{exit: ee.code, code: ee.kind, what: ee.msg, hint: ee.hint, tail: ee.tail}
	case errors.Is(err, service.ErrUnknownService):
		return failure{exit: ExitUsage, code: codeUsage, what: err.Error()}
	case errors.As(err, &uns) && uns.Kind == nil:
		// State someone else could have written: refused, like an
		// untrusted config. (A refusal of a caller's own kind, such as
		// another user's socket, is classified by that kind below.)
		return failure{exit: ExitPolicy, code: codeUnsafeState, what: uns.Error()}
	case errors.As(err, &ue):
		help := "mcpx --help"
		if ue.cmd != "" && ue.cmd != "mcpx" {
			help = ue.cmd + " --help"
		}
		hint := "see `" + help + "`"
		if ue.suggest != "" {
			hint = "did you mean " + ue.suggest + "?"
		} else if ue.hint != "" {
			hint = ue.hint
		}
		return failure{exit: ExitUsage, code: codeUsage, what: ue.Error(), hint: hint}
	case errors.As(err, &unv) && strings.HasPrefix(unv.Var, "input:"):
		return failure{exit: ExitUsage, code: codeUnsetVar, what: unv.Error()}
	case errors.As(err, &unv):
		return failure{exit: ExitUsage, code: codeUnsetVar, what: fmt.Sprintf("server %s uses ${%s}, which is not set in your environment", unv.Server, unv.Var),
			hint: fmt.Sprintf("export %s, or remove it from the server's config", unv.Var)}
	case errors.As(err, &perr):
		return failure{exit: ExitUsage, code: codeConfig, what: perr.Error(), hint: "fix the config file (`mcpx config --path` lists them)"}
	case errors.As(err, &ce):
		return failure{exit: ExitUsage, code: codeConfig, what: ce.Error()}
	case errors.As(err, &ae):
		f := classifyAPI(ae)
		f.api = &ae.Body
		return f
	case errors.Is(err, context.Canceled):
		return failure{exit: ExitInterrupted}
	case errors.As(err, &se):
		return failure{exit: ExitUnavailable, code: codeUnavailable, what: se.Error(), hint: "run `mcpx status` or `mcpx logs`", tail: se.Tail}
	case errors.Is(err, client.ErrDaemonUnavailable):
		return failure{exit: ExitUnavailable, code: codeUnavailable, what: err.Error(), hint: "run `mcpx status`"}
	case errors.Is(err, context.DeadlineExceeded):
		return failure{exit: ExitUnavailable, code: api.CodeTimeout, what: err.Error(), hint: "run `mcpx status`"}
	default:
		// Exit 1 belongs to the tool's own isError: any other failure of
		// mcpx to do the job (I/O, an answer it cannot read) is 3.
		return failure{exit: ExitUnavailable, code: codeInternal, what: err.Error()}
	}
}

func classifyAPI(e *client.APIError) failure {
	b := e.Body
	what := e.Error()
	f := func(exit int, code, hint, tail string) failure {
		return failure{exit: exit, code: code, what: what, hint: hint, tail: tail}
	}
	switch b.Code {
	case api.CodeUnknownNamespace:
		if b.Suggestion != "" {
			return f(ExitUsage, b.Code, fmt.Sprintf("did you mean %s?", b.Suggestion), "")
		}
		return f(ExitUsage, b.Code, "run `mcpx ls` to see the namespaces", "")
	case api.CodeUnknownTool:
		if b.Suggestion != "" {
			s := b.Suggestion
			if b.Namespace != "" && !strings.Contains(s, ".") {
				s = b.Namespace + "." + s
			}
			return f(ExitUsage, b.Code, fmt.Sprintf("did you mean %s?", s), "")
		}
		if b.Namespace != "" {
			return f(ExitUsage, b.Code, fmt.Sprintf("run `mcpx ls %s` to see its tools", b.Namespace), "")
		}
		return f(ExitUsage, b.Code, "run `mcpx ls` to see the tools", "")
	case api.CodeUnknownPrompt:
		if b.Suggestion != "" {
			return f(ExitUsage, b.Code, fmt.Sprintf("did you mean %s.%s?", b.Namespace, b.Suggestion), "")
		}
		return f(ExitUsage, b.Code, fmt.Sprintf("run `mcpx prompts %s` to see its prompts", b.Namespace), "")
	case api.CodeUnknownTask:
		return f(ExitUsage, b.Code, "run `mcpx tasks` to see the tasks the daemon knows", "")
	case api.CodeTaskCancelled:
		return f(ExitToolError, b.Code, "", "")
	case api.CodeLoginRequired:
		return f(ExitUnavailable, b.Code, fmt.Sprintf("run `mcpx login %s`", b.Namespace), "")
	case api.CodeInsufficientScope:
		if b.Scope == "" { // the login holds what the server asked for
			return f(ExitUnavailable, b.Code, "", "")
		}
		return f(ExitUnavailable, b.Code, fmt.Sprintf("run `mcpx login %s`, which asks for the scope %s", b.Namespace, b.Scope), "")
	case api.CodeLoginFailed:
		return f(ExitUnavailable, b.Code, "", "")
	case api.CodeInvalidArguments:
		if b.Suggestion != "" {
			return f(ExitUsage, b.Code, fmt.Sprintf("did you mean %s?", b.Suggestion), "")
		}
		return f(ExitUsage, b.Code, fmt.Sprintf("see `mcpx call %s.%s --help`", b.Namespace, b.Tool), "")
	case api.CodeConfig, api.CodeUnsetVariable:
		return f(ExitUsage, b.Code, "", "")
	case api.CodeBadRequest, api.CodeDirectoryNotFound, api.CodeDirectoryNotAbsolute:
		return f(ExitUsage, codeUsage, "", "")
	case api.CodeRequestTooLarge:
		return f(ExitUsage, b.Code, "pass large values in a file the tool reads, not as arguments", "")
	case api.CodeConfirmation:
		return f(ExitPolicy, b.Code, "pass --yes to confirm", "")
	case api.CodePolicyDenied, api.CodeAnnotationsUnknown, api.CodeUntrusted, api.CodeToolHidden:
		return f(ExitPolicy, b.Code, "", "")
	case api.CodeServerError:
		// The server itself answered the call with a JSON-RPC error: the
		// tool failed, mcpx did not.
		return f(ExitToolError, codeToolFailed, "", b.Stderr)
	case api.CodeStartFailed, api.CodeTransport:
		return f(ExitUnavailable, codeServer, serverHint(b.Namespace), b.Stderr)
	case api.CodeCooldown:
		if b.RetryAfter != nil {
			wait := max(time.Until(*b.RetryAfter).Round(time.Second), 0)
			if strings.Contains(what, "cooling down until") {
				what = fmt.Sprintf("%s (retry in %s)", strings.TrimSuffix(what, "."), wait)
			} else {
				what = fmt.Sprintf("%s (cooling down until %s, in %s)", strings.TrimSuffix(what, "."), b.RetryAfter.Local().Format("15:04:05"), wait)
			}
		}
		return f(ExitUnavailable, codeServer, serverHint(b.Namespace), b.Stderr)
	case api.CodeTimeout:
		return f(ExitUnavailable, b.Code, "run `mcpx status`", b.Stderr)
	default:
		code := b.Code
		if code == "" {
			code = codeInternal
		}
		return f(ExitUnavailable, code, "run `mcpx status`", b.Stderr)
	}
}

func serverHint(ns string) string {
	if ns == "" {
		return "check the server's command in `mcpx config`"
	}
	return fmt.Sprintf("check the %s server's entry in `mcpx config`", ns)
}
