package cache

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Tests that need a second process re-execute this test binary with
// MCPX_CACHE_HELPER naming what the child does (go-systemd style).
const (
	helperEnv    = "MCPX_CACHE_HELPER"
	helperDirEnv = "MCPX_CACHE_DIR"
	helperArgEnv = "MCPX_CACHE_ARG"
)

// fakeClock is a movable clock for Store.Now.
type fakeClock struct{ t time.Time }

func (c *fakeClock) Now() time.Time          { return c.t }
func (c *fakeClock) Advance(d time.Duration) { c.t = c.t.Add(d) }

func newStore(t testing.TB) (*Store, *fakeClock) {
	t.Helper()
	s, err := OpenStore(filepath.Join(t.TempDir(), "cas"))
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	s.Now = clk.Now
	return s, clk
}

func put(t testing.TB, s *Store, data string) Digest {
	t.Helper()
	d, n, err := s.Put(strings.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(data)) {
		t.Fatalf("Put size = %d, want %d", n, len(data))
	}
	return d
}

func digestOf(data []byte) Digest {
	sum := sha256.Sum256(data)
	return Digest(hex.EncodeToString(sum[:]))
}

// helper starts this test binary as a child doing mode; its stdout is
// returned as a line reader.
func helper(t *testing.T, mode, dir, arg string) (*exec.Cmd, *bufio.Reader, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, helperDirEnv+"="+dir, helperArgEnv+"="+arg)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, bufio.NewReader(out), in
}

// waitLine reads the child's stdout until a line starting with want.
func waitLine(t *testing.T, r *bufio.Reader, want string) string {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if strings.HasPrefix(line, want) {
			return strings.TrimSpace(line)
		}
		if err != nil {
			t.Fatalf("child ended before saying %q: %v", want, err)
		}
	}
}

// stallingReader yields n bytes, then announces it and blocks forever.
type stallingReader struct {
	n      int
	rnd    *rand.Rand
	stalls func()
}

func (r *stallingReader) Read(p []byte) (int, error) {
	if r.n <= 0 {
		r.stalls()
		select {}
	}
	if len(p) > r.n {
		p = p[:r.n]
	}
	r.rnd.Read(p)
	r.n -= len(p)
	return len(p), nil
}

func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("re-exec helper for multi-process tests")
	}
	s, err := OpenStore(os.Getenv(helperDirEnv))
	if err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	arg := os.Getenv(helperArgEnv)
	switch mode {
	case "slowput":
		// Write 1 MiB, then stall until killed.
		r := &stallingReader{n: 1 << 20, rnd: rand.New(rand.NewSource(1)), stalls: func() { fmt.Println("started") }}
		_, _, err := s.Put(r)
		fmt.Println("ERROR put returned", err)
		os.Exit(1)
	case "lease":
		if _, err := s.Lease(Digest(arg), time.Hour); err != nil {
			fmt.Println("ERROR", err)
			os.Exit(1)
		}
		fmt.Println("leased")
		_, _ = io.Copy(io.Discard, os.Stdin) // hold until killed
		os.Exit(0)
	case "churn":
		s.Grace = 0
		n, _ := strconv.Atoi(arg)
		if _, err := churn(s, os.Getpid(), n); err != nil {
			fmt.Println("ERROR", err)
			os.Exit(1)
		}
		fmt.Println("done")
		os.Exit(0)
	}
	fmt.Println("ERROR unknown mode", mode)
	os.Exit(2)
}
