package daemon

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// serveResolve answers GET /v1/resolve?dir=ABS for any directory: which
// daemon key serves it, its configs, socket, manager and state. It reads
// files only: it never dials a socket and activates nothing. MCPX_*
// variables of the daemon's own environment do not influence the answer,
// and this daemon's own socket override is reported only for its own key.
func (d *daemon) serveResolve(w http.ResponseWriter, r *http.Request) error {
	dir := r.URL.Query().Get("dir")
	if !filepath.IsAbs(dir) {
		return apiErr(http.StatusBadRequest, api.CodeDirectoryNotAbsolute, "resolve needs an absolute directory, not %q", dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(real); err == nil && !fi.IsDir() {
			err = syscall.ENOTDIR
		}
	}
	if err != nil {
		return apiErr(http.StatusBadRequest, api.CodeDirectoryNotFound, "resolve %s: %v", dir, err)
	}
	res, err := d.resolve(real)
	if err != nil {
		return err
	}
	return writeJSON(w, res)
}

func (d *daemon) resolve(dir string) (*api.Resolve, error) {
	getenv := withoutMCPX(d.getenv)
	sources, err := config.Discover(dir, getenv)
	if err != nil {
		return nil, configErr(err)
	}
	key := config.KeyOf(sources)
	res := &api.Resolve{Dir: dir, DaemonKey: string(key), Configs: sources, Socket: d.opts.Paths.Socket(key)}
	if res.Configs == nil {
		res.Configs = []string{}
	}
	cfg, err := config.Load(sources, d.opts.Self)
	if err != nil {
		return nil, configErr(err)
	}
	res.SchemaHash = string(cfg.SchemaHash())

	own := key == d.opts.Key
	if own {
		res.Socket = d.socket
		res.Manager = d.opts.Manager
	}
	info, err := api.ReadInfo(d.opts.Paths.Info(key))
	switch {
	case err == nil:
		if info.Socket != "" {
			res.Socket = info.Socket
		}
		res.Manager = info.Manager
		if info.SchemaHash != "" {
			res.SchemaHash = info.SchemaHash
		}
		res.State = "stale"
		if pidAlive(info.Pid) {
			res.State = "running"
		}
	case own:
		res.State = "running"
	case errors.Is(err, fs.ErrNotExist):
		res.State = "idle"
		if _, err := os.Stat(d.opts.Paths.KeyRecord(key)); err != nil {
			res.State = "unknown"
		}
	default:
		res.State = "unknown"
	}
	return res, nil
}

// configErr is 422 config_error naming file:line:col when known.
func configErr(err error) error {
	return apiErr(http.StatusUnprocessableEntity, api.CodeConfig, "%v", err)
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

// pidAlive reports whether a process exists (kill 0; EPERM means it does).
func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
