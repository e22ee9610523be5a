package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/peercred"
)

// LiveStatus asks an already running daemon on socket for GET /v1/status:
// one plain request, bounded by 5 s, with no activation, no retry and no
// key record or environment written. Callers use it only when the service
// manager says the daemon runs, so the connection cannot start one.
func LiveStatus(ctx context.Context, socket string) (*api.Status, error) {
	// Bounded as it is, it needs no health check of its own (silence.go).
	c := &Client{socket: socket, peerUID: peercred.UID, uid: os.Getuid(), silentAfter: -1}
	const bound = 5 * time.Second
	ctx, cancel := context.WithTimeout(context.WithValue(ctx, noActivate{}, true), bound)
	defer cancel()
	status, data, _, err := c.roundTrip(ctx, "GET", api.PathStatus, nil)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Errorf("GET %s on %s: no answer within %s: %w", api.PathStatus, socket, bound, ErrDaemonUnavailable)
	}
	if err != nil {
		return nil, fmt.Errorf("GET %s on %s: %w", api.PathStatus, socket, err)
	}
	if status != 200 {
		return nil, fmt.Errorf("GET %s on %s: daemon answered %d", api.PathStatus, socket, status)
	}
	var st api.Status
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("GET %s on %s: decode: %w", api.PathStatus, socket, err)
	}
	return &st, nil
}
