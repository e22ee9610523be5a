package daemon

import (
	"io"
	"reflect"
	"sync"

	"github.com/mcpx-dev/mcpx/config"
)

// The secrets of every server (config.Server.Secrets: tokens expanded into
// a URL's path, query or userinfo, header values, variables named like
// credentials, env values that are not existing paths — never the user's
// HOME, PATH and the like) are replaced by "[redacted]" in everything the
// daemon says — error answers (ls, refresh, call), its log, and the
// failed-fetch errors it saves in the schema cache. Expanded values are
// never written to the cache otherwise.

// redactor returns the redactor for the current config and captured
// environment, rebuilt only when either changed. Safe for concurrent use.
func (d *daemon) redactor() config.Redactor {
	st := d.state.Load()
	if st == nil {
		return config.Redactor{}
	}
	env, err := d.env.get()
	if err != nil {
		return config.Redactor{}
	}
	d.redactMu.Lock()
	defer d.redactMu.Unlock()
	envID := reflect.ValueOf(env).Pointer() // the env file's map is replaced, never modified
	if d.redactState == st && d.redactEnv == envID {
		return d.redactCur
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	var secrets []string
	for _, name := range st.names {
		secrets = append(secrets, st.cfg.Servers[name].Secrets(lookup)...)
	}
	d.redactCur, d.redactState, d.redactEnv = config.NewRedactor(secrets), st, envID
	return d.redactCur
}

// redact is d.redactor().String.
func (d *daemon) redact(s string) string { return d.redactor().String(s) }

// redactingWriter is the daemon's log output with secrets taken out. Each
// log line arrives in one Write.
type redactingWriter struct {
	mu sync.Mutex
	w  io.Writer
	d  *daemon
}

func (r *redactingWriter) Write(p []byte) (int, error) {
	out := r.d.redact(string(p))
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := io.WriteString(r.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}
