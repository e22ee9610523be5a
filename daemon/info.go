package daemon

import (
	"errors"
	"io/fs"
	"os"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/proc"
	"github.com/mcpx-dev/mcpx/internal/version"
)

// writeInfo writes the info file (0600, atomically) for the current state;
// nothing once the daemon hands its socket to a successor (handoff.go),
// whose file it is then.
func (d *daemon) writeInfo() error {
	if d.retired.Load() {
		return nil
	}
	st := d.state.Load()
	return config.WriteRuntimeJSON(d.opts.Paths.Info(d.opts.Key), config.InfoFile{
		DaemonKey:  string(d.opts.Key),
		SchemaHash: string(st.schemaHash),
		Socket:     d.socket,
		Pid:        os.Getpid(),
		PidStart:   proc.StartTime(os.Getpid()),
		Manager:    d.opts.Manager,
		Configs:    configs(st),
		Version:    version.String(),
		StartedAt:  d.started,
		Binary:     d.binary,
	}, 0o600)
}

// removeInfo removes the info file if it is still this daemon's.
func (d *daemon) removeInfo() {
	path := d.opts.Paths.Info(d.opts.Key)
	info, err := config.ReadInfo(path)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err == nil && (info.Pid != os.Getpid() || !info.StartedAt.Equal(d.started) || info.Socket != d.socket) {
		return // another daemon's now
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		d.log.Printf("remove info file: %v", err)
	}
}
