package daemon

import (
	"time"

	sddaemon "github.com/coreos/go-systemd/v22/daemon"
)

// notify sends an sd_notify(3) message; best effort and silent outside
// systemd (no NOTIFY_SOCKET).
func notify(state string) {
	_, _ = sddaemon.SdNotify(false, state)
}

// watchdogInterval is systemd's watchdog timeout for this process (0: none
// or unreadable).
func watchdogInterval() time.Duration {
	v, err := sddaemon.SdWatchdogEnabled(false)
	if err != nil {
		return 0
	}
	return v
}
