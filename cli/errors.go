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

// describe maps a failure to its exit code and the message for stderr:
// "mcpx: <what>. <what to do>", then the tail of a server's or daemon's
// output when there is one. The remedy is added here, once.
func (a *App) describe(err error) (int, string) {
	code, what, hint, tail := classify(err)
	if what == "" && hint == "" {
		return code, ""
	}
	var b strings.Builder
	b.WriteString("mcpx: ")
	if strings.HasPrefix(hint, "did you mean") {
		// "unknown tool x; did you mean y?" reads as one sentence.
		what, hint = strings.TrimSuffix(strings.TrimSpace(what), ".")+"; "+hint, ""
	}
	b.WriteString(sentence(what))
	if hint != "" {
		b.WriteString(" ")
		b.WriteString(capitalize(sentence(hint)))
	}
	if tail = strings.TrimRight(tail, "\n"); tail != "" {
		b.WriteString("\n")
		for _, line := range strings.Split(tail, "\n") {
			b.WriteString("  | ")
			b.WriteString(line)
			b.WriteString("\n")
		}
		return code, strings.TrimRight(b.String(), "\n")
	}
	return code, b.String()
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
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// classify returns the exit code, what failed, what to do and an output tail.
func classify(err error) (code int, what, hint, tail string) {
	var (
		ee   *exitError
		ue   *usageError
		ce   *client.ConfigError
		ae   *client.APIError
		se   *service.StartError
		unv  *config.UnsetVarError
		perr *config.ParseError
		uns  *owner.UnsafeError
	)
	switch {
	case errors.As(err, &ee):
		return ee.code, ee.msg, "", ""
	case errors.As(err, &uns):
		// State someone else could have written: refused, like an
		// untrusted config.
		return ExitPolicy, uns.Error(), "", ""
	case errors.As(err, &ue):
		help := "mcpx --help"
		if ue.cmd != "" && ue.cmd != "mcpx" {
			help = ue.cmd + " --help"
		}
		return ExitUsage, ue.Error(), "see `" + help + "`", ""
	case errors.As(err, &unv):
		return ExitUsage, fmt.Sprintf("server %s uses ${%s}, which is not set in your environment", unv.Server, unv.Var),
			fmt.Sprintf("export %s, or remove it from the server's config", unv.Var), ""
	case errors.As(err, &perr):
		return ExitUsage, perr.Error(), "fix the config file (`mcpx config --path` lists them)", ""
	case errors.As(err, &ce):
		return ExitUsage, ce.Error(), "", ""
	case errors.As(err, &ae):
		return classifyAPI(ae)
	case errors.Is(err, context.Canceled):
		return ExitInterrupted, "", "", ""
	case errors.As(err, &se):
		return ExitUnavailable, se.Error(), "run `mcpx status` or `mcpx logs`", se.Tail
	case errors.Is(err, client.ErrDaemonUnavailable), errors.Is(err, context.DeadlineExceeded):
		return ExitUnavailable, err.Error(), "run `mcpx status`", ""
	default:
		// Exit 1 belongs to the tool's own isError: any other failure of
		// mcpx to do the job (I/O, an answer it cannot read) is 3.
		return ExitUnavailable, err.Error(), "", ""
	}
}

func classifyAPI(e *client.APIError) (int, string, string, string) {
	b := e.Body
	what := e.Error()
	switch b.Code {
	case api.CodeUnknownNamespace:
		if b.Suggestion != "" {
			return ExitUsage, what, fmt.Sprintf("did you mean %s?", b.Suggestion), ""
		}
		return ExitUsage, what, "run `mcpx ls` to see the namespaces", ""
	case api.CodeUnknownTool:
		if b.Suggestion != "" {
			s := b.Suggestion
			if b.Namespace != "" && !strings.Contains(s, ".") {
				s = b.Namespace + "." + s
			}
			return ExitUsage, what, fmt.Sprintf("did you mean %s?", s), ""
		}
		if b.Namespace != "" {
			return ExitUsage, what, fmt.Sprintf("run `mcpx ls %s` to see its tools", b.Namespace), ""
		}
		return ExitUsage, what, "run `mcpx ls` to see the tools", ""
	case api.CodeBadRequest, api.CodeConfig, api.CodeUnsetVariable, api.CodeDirectoryNotFound,
		api.CodeDirectoryNotAbsolute, api.CodeRequestTooLarge:
		return ExitUsage, what, "", ""
	case api.CodeConfirmation:
		return ExitPolicy, what, "pass --yes to confirm", ""
	case api.CodePolicyDenied, api.CodeAnnotationsUnknown:
		return ExitPolicy, what, "", ""
	case api.CodeServerError:
		// The server itself answered the call with a JSON-RPC error: the
		// tool failed, mcpx did not.
		return ExitToolError, what, "", b.Stderr
	case api.CodeStartFailed:
		return ExitUnavailable, what, serverHint(b.Namespace), b.Stderr
	case api.CodeCooldown:
		if b.RetryAfter != nil {
			wait := time.Until(*b.RetryAfter).Round(time.Second)
			what = fmt.Sprintf("%s (cooling down until %s, in %s)", strings.TrimSuffix(what, "."), b.RetryAfter.Local().Format("15:04:05"), max(wait, 0))
		}
		return ExitUnavailable, what, serverHint(b.Namespace), b.Stderr
	default:
		return ExitUnavailable, what, "run `mcpx status`", b.Stderr
	}
}

func serverHint(ns string) string {
	if ns == "" {
		return "check the server's command in `mcpx config`"
	}
	return fmt.Sprintf("check the %s server's entry in `mcpx config`", ns)
}
