package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/testkit"
)

const versionFlag = "-X github.com/mcpx-dev/mcpx/internal/version.Version="

// installBuild builds both binaries with version v into a fresh directory
// under bin/ (units refuse temporary build directories) and returns it.
func buildVersion(t *testing.T, v string) string {
	t.Helper()
	dir, err := os.MkdirTemp(filepath.Join(repoRoot, "bin"), "upgrade-"+v+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if _, err := testkit.BuildBinaries(dir, versionFlag+v); err != nil {
		t.Fatal(err)
	}
	return dir
}

// install puts the binaries of from over those in to, as an installer
// does (each file replaced by rename).
func install(t *testing.T, from, to string) {
	t.Helper()
	for _, name := range []string{"mcpx", "mcpxd"} {
		// cp writes the copy in its own process: a file this process
		// held open for writing would make the call loop's concurrent
		// fork+exec fail with ETXTBSY (golang.org/issue/22315).
		tmp := filepath.Join(to, "."+name+".new")
		if out, err := exec.Command("cp", filepath.Join(from, name), tmp).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v\n%s", err, out)
		}
		if err := os.Rename(tmp, filepath.Join(to, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// upgradeUnderLoad runs 200 calls while v2 is installed over v1 and
// checks that every call succeeded and that the daemon runs v2 afterwards.
func upgradeUnderLoad(t *testing.T, e *Env) {
	installed := buildVersion(t, "v1.0.0-test")
	v2 := buildVersion(t, "v2.0.0-test")
	e.Bin = filepath.Join(installed, "mcpx")
	if r := e.MustOK("call", "demo.echo", "text=warm"); r.Stdout != "warm" {
		t.Fatalf("first call:\n%s", r)
	}
	var st struct {
		Live *struct {
			Version string `json:"version"`
		} `json:"live"`
	}
	e.JSON(&st, "status")
	if st.Live == nil || st.Live.Version != "v1.0.0-test" {
		t.Fatalf("status before the upgrade: %+v", st.Live)
	}

	const calls = 200
	var (
		mu     sync.Mutex
		failed []string
	)
	progress := make(chan int, calls)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < calls; i++ {
			want := fmt.Sprintf("u%d", i)
			if r := e.Mcpx("call", "demo.echo", "text="+want); r.Code != 0 || r.Stdout != want {
				mu.Lock()
				failed = append(failed, r.String())
				mu.Unlock()
			}
			progress <- i
		}
	}()
	for i := range progress {
		if i == 50 {
			install(t, v2, installed)
		}
		if i == calls-1 {
			break
		}
	}
	<-done
	if len(failed) > 0 {
		t.Fatalf("%d of %d calls failed across the upgrade; first:\n%s", len(failed), calls, failed[0])
	}
	e.JSON(&st, "status")
	if st.Live == nil || st.Live.Version != "v2.0.0-test" {
		r := e.Mcpx("status")
		t.Fatalf("status after the upgrade: %+v\n%s", st.Live, r)
	}
	if r := e.MustOK("doctor"); strings.Contains(r.Stdout, "older build") {
		t.Fatalf("doctor after the upgrade still reports an older daemon:\n%s", r)
	}
}

func TestUpgradeUnderLoadDirect(t *testing.T) {
	upgradeUnderLoad(t, NewEnv(t))
}

func TestUpgradeUnderLoadSystemd(t *testing.T) {
	e, _ := newSystemdEnv(t)
	upgradeUnderLoad(t, e)
}
