package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// A failure to start serving is said on stderr, as mcpx says every
// failure; under `mcpx --json serve` (mcpxd serve -json) it is also the
// error document every mcpx command prints on stdout under --json
// (docs/cli.md, "Errors"), as long as serve has written nothing there
// yet: once it has, stdout belongs to the host.

// unknownNamespaceError is a --ns naming no configured server.
type unknownNamespaceError struct {
	ns, suggestion string
	have           []string
}

func (e *unknownNamespaceError) Error() string {
	if e.suggestion != "" {
		return fmt.Sprintf("--ns %s: no such namespace; did you mean %s?", e.ns, e.suggestion)
	}
	return fmt.Sprintf("--ns %s: no such namespace (have %s)", e.ns, strings.Join(e.have, ", "))
}

// reporter says serve's failures on stderr, and on stdout as JSON when
// asked to and stdout is still untouched.
type reporter struct {
	stderr io.Writer
	stdout *watchedWriter
	json   bool
}

// fail reports a failure of kind code (docs/cli.md's error codes) and
// returns exit.
func (r *reporter) fail(exit int, code, msg, suggestion string) int {
	msg = strings.TrimSuffix(msg, ".") + "."
	fmt.Fprintf(r.stderr, "mcpx: %s\n", msg)
	if r.json && !r.stdout.used.Load() {
		b, _ := json.MarshalIndent(api.ErrorDoc{Error: api.ErrorBody{Code: code, Message: msg, Exit: exit, Suggestion: suggestion}}, "", "  ")
		_, _ = r.stdout.w.Write(append(b, '\n'))
	}
	return exit
}

// failed reports what Run returned.
func (r *reporter) failed(err error) int {
	var un *unknownNamespaceError
	var ce *client.ConfigError
	switch {
	case errors.As(err, &un):
		return r.fail(exitUsage, api.CodeUnknownNamespace, err.Error(), un.suggestion)
	case errors.As(err, &ce):
		return r.fail(exitUsage, api.CodeConfig, err.Error(), "")
	case isUsage(err):
		return r.fail(exitUsage, api.CodeUsage, err.Error(), "")
	}
	return r.fail(exitUnavailable, api.CodeInternal, "serve: "+err.Error(), "")
}

// jsonAsked reports whether args ask for -json, read before the flags are
// parsed (a line that does not parse is answered in JSON too): -json or
// --json, alone or with a true value.
func jsonAsked(args []string) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name != "json" || !strings.HasPrefix(a, "-") {
			continue
		}
		if on, err := strconv.ParseBool(value); !hasValue || (err == nil && on) {
			return true
		}
	}
	return false
}

// watchedWriter is stdout, noting whether anything was written to it.
type watchedWriter struct {
	w    io.Writer
	used atomic.Bool
}

func (w *watchedWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		w.used.Store(true)
	}
	return w.w.Write(p)
}
