package daemon

import (
	"errors"
	"net/http"
	"strings"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/resolve"
)

// serveResolve answers GET /v1/resolve?dir=ABS for any directory: which
// daemon key serves it, its configs, socket, manager and state. The answer
// is resolve.DirWith's (the same document `mcpx resolve` prints): it
// reads files only, never dials a socket and activates nothing. MCPX_*
// variables of the daemon's own environment do not influence the answer,
// and this daemon's own socket is reported only for its own key.
func (d *daemon) serveResolve(w http.ResponseWriter, r *http.Request) error {
	res, err := d.resolve(r.URL.Query().Get("dir"))
	if err != nil {
		return err
	}
	return writeJSON(w, res)
}

func (d *daemon) resolve(dir string) (*api.Resolve, error) {
	res, err := resolve.DirWith(dir, d.opts.Paths, withoutMCPX(d.getenv), resolve.Options{
		Self:    d.opts.Self,
		Manager: d.opts.Manager,
	})
	var (
		dirErr   *resolve.DirError
		parseErr *config.ParseError
	)
	switch {
	case errors.As(err, &dirErr):
		return nil, apiErr(http.StatusBadRequest, dirErr.Code, "%v", err)
	case errors.As(err, &parseErr):
		return nil, apiErr(http.StatusUnprocessableEntity, api.CodeConfig, "%v", err)
	case err != nil:
		return nil, apiErr(http.StatusInternalServerError, api.CodeInternal, "%v", err)
	}
	// This daemon serves its own key even before its info file is written,
	// with the schemaHash of the config it has loaded (the info file's).
	if res.DaemonKey == string(d.opts.Key) {
		res.State = api.DaemonRunning
		res.Socket = d.socket
		res.Manager = d.opts.Manager
		res.SchemaHash = string(d.state.Load().schemaHash)
	}
	return res, nil
}

// withoutMCPX hides MCPX_* overrides: they belong to the process that set
// them, not to the directory being resolved.
func withoutMCPX(getenv config.Getenv) config.Getenv {
	return func(k string) string {
		if strings.HasPrefix(k, "MCPX_") {
			return ""
		}
		return getenv(k)
	}
}
