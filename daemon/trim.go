package daemon

import (
	"context"
	"runtime/debug"
	"time"
)

// trimAfter is how long the daemon must go without a request before it
// returns its free memory to the system.
const trimAfter = time.Second

// trimLoop returns the heap's free pages to the system once at start (the
// packages' init garbage: JSON-schema meta-schemas, mcp-go) and whenever a
// burst of requests has been followed by trimAfter of quiet. The Go runtime
// would give them back too, but over minutes; a daemon that mostly waits
// should hold what it uses, not what its last burst used. Between bursts it
// sleeps on trimPoke, so an idle daemon is not woken for it.
func (d *daemon) trimLoop(ctx context.Context) {
	debug.FreeOSMemory()
	for {
		select { // a burst starts
		case <-ctx.Done():
			return
		case <-d.trimPoke:
		}
		for quiet := false; !quiet; {
			select {
			case <-ctx.Done():
				return
			case <-time.After(trimAfter):
			}
			select {
			case <-d.trimPoke: // requests since: the burst goes on
			default:
				quiet = d.inflight.Load() == 0
			}
		}
		debug.FreeOSMemory()
	}
}
