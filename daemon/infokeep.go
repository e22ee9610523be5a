package daemon

import (
	"errors"
	"io/fs"
	"os"
	"time"

	"github.com/mcpx-dev/mcpx/config"
)

// Keeping the info file true. `mcpx status` and `mcpx stop` find a
// directly started daemon through its info file only, so a file removed
// (a cleaned runtime directory) or replaced by another daemon's would make
// a running daemon look stopped and unstoppable. The daemon checks the
// file on the first request after infoCheckEvery has passed since the last
// check — most requests pay one atomic load — and rewrites a missing or
// foreign one before it answers. Re-binding a removed socket (alive.go)
// checks at once, and the socket watch checks it every SocketCheck too, so
// a file removed right after a check is not left missing until some later
// request.

// infoCheckEvery is the shortest time between two checks of the info file.
const infoCheckEvery = time.Second

// keepInfo checks the info file when infoCheckEvery has passed since the
// last check; now is the request's start (unix nanoseconds).
func (d *daemon) keepInfo(now int64) {
	last := d.infoChecked.Load()
	if now-last < int64(infoCheckEvery) || !d.infoChecked.CompareAndSwap(last, now) {
		return
	}
	d.repairInfo()
}

// repairInfo rewrites the info file unless it names this daemon, and not
// once the daemon handed its socket to a successor (whose file it is).
func (d *daemon) repairInfo() {
	if d.retired.Load() {
		return
	}
	d.infoMu.Lock()
	defer d.infoMu.Unlock()
	path := d.opts.Paths.Info(d.opts.Key)
	info, err := config.ReadInfo(path)
	why := ""
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why = "was removed"
	case err != nil:
		why = "does not read (" + err.Error() + ")"
	case info.Pid != os.Getpid() || !info.StartedAt.Equal(d.started) || info.Socket != d.socket:
		why = "named another daemon"
	default:
		return
	}
	if err := d.writeInfo(); err != nil {
		d.log.Printf("info file %s %s; rewrite it: %v", path, why, err)
		return
	}
	d.log.Printf("info file %s %s; rewrote it", path, why)
}
