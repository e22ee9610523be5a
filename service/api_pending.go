package service

// PENDING: declared signatures (this file is deleted once implemented).
// NewDirect is implemented by the client/CLI helper (service/direct.go);
// Detect, NewSystemd and NewLaunchd by the units helper (service/detect.go,
// service/systemd.go, service/launchd.go).

import (
	"context"

	"github.com/mcpx-dev/mcpx/config"
)

// NewDirect returns the direct manager: Ensure takes a flock on
// paths.Lock(key), re-checks the socket, and spawns `self daemon --key K`
// detached (new session, stdin closed, output to paths.Log(key)), then waits
// (bounded) for the socket; on failure the error carries the log's tail.
func NewDirect(paths config.Paths, self string) Manager { panic("pending") }

// Detect picks the manager from MCPX_SERVICE (auto|systemd|launchd|direct).
// note is a sentence for stderr when the choice deserves one (e.g. "the
// binary lives in a temporary build directory; using the direct manager").
func Detect(ctx context.Context, getenv config.Getenv, paths config.Paths, self string) (m Manager, note string, err error) {
	panic("pending")
}
