package daemon

import (
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestAliveLockAdmitsOneDaemonPerKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.alive")
	first, err := takeAlive(path, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := takeAlive(path, 100*time.Millisecond); !errors.Is(err, errAlive) {
		t.Fatalf("second lock while the first is held: %v, want errAlive", err)
	}
	first.Close()
	second, err := takeAlive(path, time.Second)
	if err != nil {
		t.Fatalf("lock after the first daemon let go: %v", err)
	}
	second.Close()
}
