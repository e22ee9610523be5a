package daemon

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/upstream/auth"
)

// The token store the client chose in its shell (runtime key record) wins
// over the daemon's own environment; the state copy never names one.
func TestKeyRecordCarriesTheTokenStore(t *testing.T) {
	if config.EnvTokenStore != auth.StoreEnv {
		t.Fatalf("config.EnvTokenStore %q != auth.StoreEnv %q", config.EnvTokenStore, auth.StoreEnv)
	}
	root := t.TempDir()
	paths := config.Paths{Runtime: filepath.Join(root, "run"), State: filepath.Join(root, "state")}
	for _, d := range []string{paths.Runtime, paths.KeysDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	key := config.DaemonKey("0123456789ab")
	rec := config.KeyRecord{DaemonKey: string(key), Configs: []string{"/p/.mcpx.json"}, CreatedAt: time.Now(), TokenStore: "file"}
	if err := config.WriteJSONAtomic(paths.KeyRecord(key), rec, 0o600); err != nil {
		t.Fatal(err)
	}
	got, _, err := readKeyRecord(paths, key)
	if err != nil || got.TokenStore != "" || len(got.Configs) != 1 {
		t.Fatalf("from the state copy: %+v, %v; want no token store", got, err)
	}
	if err := config.WriteJSONAtomic(paths.RuntimeKeyRecord(key), rec, 0o600); err != nil {
		t.Fatal(err)
	}
	got, _, err = readKeyRecord(paths, key)
	if err != nil || got.TokenStore != "file" {
		t.Fatalf("from the runtime copy: %+v, %v", got, err)
	}

	own := func(k string) string { return map[string]string{auth.StoreEnv: "keyring", "HOME": "/h"}[k] }
	if g := withTokenStore(own, "file"); g(auth.StoreEnv) != "file" || g("HOME") != "/h" {
		t.Errorf("with the client's store: %q, %q", g(auth.StoreEnv), g("HOME"))
	}
	if g := withTokenStore(own, ""); g(auth.StoreEnv) != "keyring" {
		t.Errorf("without one: %q", g(auth.StoreEnv))
	}
}
