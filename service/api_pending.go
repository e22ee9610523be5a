package service

// PENDING: declared signatures (this file is deleted once implemented).
// NewDirect is implemented by the client/CLI helper (service/direct.go);
// Detect, NewSystemd and NewLaunchd by the units helper (service/detect.go,
// service/systemd.go, service/launchd.go).

import (
	"context"

	"github.com/mcpx-dev/mcpx/config"
)

// Detect picks the manager from MCPX_SERVICE (auto|systemd|launchd|direct).
// note is a sentence for stderr when the choice deserves one (e.g. "the
// binary lives in a temporary build directory; using the direct manager").
func Detect(ctx context.Context, getenv config.Getenv, paths config.Paths, self string) (m Manager, note string, err error) {
	panic("pending")
}
