package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/internal/owner"
)

// readKeyRecord finds which configs key stands for (rec.Configs), which
// state and cache directories its clients use (in the paths returned) and
// the token store they chose (rec.TokenStore, runtime copy only). The copy
// in the runtime directory comes first: under systemd or launchd the
// daemon does not see the shell's environment, but the runtime directory
// is where the socket is, and the client wrote what it uses there. Without
// it, the record under the state directory (as the daemon's own
// environment finds it) is read. The built-in key needs no record.
func readKeyRecord(paths config.Paths, key config.DaemonKey) (*config.KeyRecord, config.Paths, error) {
	rec, err := config.ReadKeyRecord(paths.RuntimeKeyRecord(key))
	switch {
	case err == nil:
		if rec.DaemonKey != string(key) {
			return nil, paths, fmt.Errorf("%s names key %q, not %s", paths.RuntimeKeyRecord(key), rec.DaemonKey, key)
		}
		for _, d := range []struct {
			dst *string
			val string
		}{{&paths.State, rec.StateDir}, {&paths.Cache, rec.CacheDir}} {
			if d.val == "" {
				continue
			}
			if !filepath.IsAbs(d.val) {
				return nil, paths, fmt.Errorf("%s: directory %q is not absolute", paths.RuntimeKeyRecord(key), d.val)
			}
			*d.dst = filepath.Clean(d.val)
		}
		return rec, paths, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, paths, err
	case key == config.BuiltinKey:
		return &config.KeyRecord{DaemonKey: string(key)}, paths, nil
	}
	if err := owner.CheckDir(paths.State); err != nil {
		return nil, paths, fmt.Errorf("read key record: %w", err)
	}
	rec, err = config.ReadKeyRecord(paths.KeyRecord(key))
	if err != nil {
		return nil, paths, err
	}
	rec.TokenStore = "" // the runtime copy's alone: this one is not the client's latest word
	return rec, paths, nil
}
