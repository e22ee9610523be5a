package service

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/launchd"
)

// Two commands that find the same agent broken repair it once: the second
// waits on the key's lock and then finds launchd's socket working, instead
// of unloading what the first just loaded.
func TestLaunchdEnsureRepairsOnceUnderRace(t *testing.T) {
	root, err := os.MkdirTemp("", "lr")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	paths := config.Paths{Runtime: filepath.Join(root, "run"), State: filepath.Join(root, "state")}
	bin := filepath.Join(root, "mcpxd")
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	agents := launchd.New(func(k string) string { return map[string]string{"HOME": root}[k] }, bin)
	agents.Domain = "gui/501"
	agents.Wait = func(context.Context, time.Duration) {}
	key := config.DaemonKey("0a1b2c3d4e5f")
	sock := paths.Socket(key)

	var (
		mu       sync.Mutex
		loaded   bool
		ln       net.Listener
		bootouts atomic.Int32
	)
	listen := func() {
		os.Remove(sock)
		if l, err := net.Listen("unix", sock); err == nil {
			ln = l
		}
	}
	agents.Launchctl = func(_ context.Context, args ...string) ([]byte, []byte, int, error) {
		mu.Lock()
		defer mu.Unlock()
		switch args[0] {
		case "print":
			if !loaded {
				return nil, []byte("Could not find service"), 113, nil
			}
			return []byte("x = {\n\tstate = not running\n\tprogram = " + bin + "\n}\n"), nil, 0, nil
		case "bootstrap":
			if loaded {
				return nil, []byte("Bootstrap failed: 5: Input/output error"), 5, nil
			}
			loaded = true
			listen()
			return nil, nil, 0, nil
		case "bootout":
			bootouts.Add(1)
			// launchd takes a while (the daemon finishes its calls), and
			// other launchctl processes run meanwhile.
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
			mu.Lock()
			loaded = false
			if ln != nil {
				ln.Close()
				ln = nil
			}
			return nil, nil, 0, nil
		}
		t.Errorf("unexpected launchctl %s", strings.Join(args, " "))
		return nil, nil, 1, nil
	}
	t.Cleanup(func() {
		if ln != nil {
			ln.Close()
		}
	})
	m := &Launchd{Agents: agents, Paths: paths, Self: bin}
	if err := m.Ensure(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	os.Remove(sock) // a temp cleaner
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.Ensure(context.Background(), key); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if n := bootouts.Load(); n != 1 {
		t.Fatalf("%d bootouts for one broken agent, want 1", n)
	}
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatalf("socket after the repair: %v", err)
	}
	c.Close()
}
