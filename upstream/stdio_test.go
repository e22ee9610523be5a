package upstream

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/config"
)

func TestLineLimiter(t *testing.T) {
	in := "short\n" + strings.Repeat("a", 100) + "\n" + strings.Repeat("b", 101) + "\nnever\n"
	l := &lineLimiter{r: strings.NewReader(in), max: 100, done: make(chan struct{})}
	br := bufio.NewReaderSize(l, 16)
	var lines []string
	var err error
	for {
		var s string
		s, err = br.ReadString('\n')
		if err != nil {
			break
		}
		lines = append(lines, strings.TrimSuffix(s, "\n"))
	}
	if len(lines) != 2 || lines[0] != "short" || len(lines[1]) != 100 {
		t.Fatalf("lines = %q", lines)
	}
	if err != io.EOF || !l.tripped.Load() {
		t.Fatalf("err = %v, tripped %v; want io.EOF and tripped", err, l.tripped.Load())
	}
	select {
	case <-l.done:
	default:
		t.Fatal("done not closed after the bound")
	}
}

// A server's stdout: whatever it writes, the limiter hands on only lines
// within the bound and fails once a line exceeds it.
func FuzzLineLimiter(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\"}\n{}\n"), uint16(8))
	f.Add([]byte(strings.Repeat("x", 300)+"\n"), uint16(256))
	f.Fuzz(func(t *testing.T, data []byte, max uint16) {
		if max == 0 {
			return
		}
		l := &lineLimiter{r: strings.NewReader(string(data)), max: int64(max), done: make(chan struct{})}
		br := bufio.NewReader(l)
		for {
			s, err := br.ReadString('\n')
			if err != nil {
				break
			}
			if int64(len(s)-1) > int64(max) {
				t.Fatalf("a line of %d bytes passed the bound %d", len(s)-1, max)
			}
		}
	})
}

// One message over mcpx.maxMessageBytes fails the call with a
// *MessageTooLargeError on every transport; the next call gets a fresh
// instance and works.
func TestMessageBound(t *testing.T) {
	for _, tr := range []string{"stdio", "http", "sse"} {
		t.Run(tr, func(t *testing.T) {
			var spec Spec
			if tr == "stdio" {
				spec = fixtureSpec(t, config.Options{}, nil)
			} else {
				spec = network(t, tr == "sse")
			}
			spec.Server.Options.MaxMessageBytes = 64 << 10
			p := newPools(t, Options{})
			if got := call(t, p, spec, Caller{}, "huge", `{"bytes": 1000}`); len(got) != 1000 {
				t.Fatalf("small result: %d bytes", len(got))
			}
			_, err := p.Call(context.Background(), spec, Caller{}, "huge", json.RawMessage(`{"bytes": 1000000}`))
			var tl *MessageTooLargeError
			if !errors.As(err, &tl) || tl.Limit != 64<<10 {
				t.Fatalf("err = %v, want *MessageTooLargeError with the limit", err)
			}
			if got := call(t, p, spec, Caller{}, "echo", `{"text":"after"}`); got != "after" {
				t.Fatalf("echo after the oversized message: %q", got)
			}
		})
	}
}

// A request counts as never read while its bytes are still whole in the
// pipe and nobody can read the pipe any more; a pipe's reader may still
// take what it holds. What the pipe held when stdin was closed still
// counts after the close.
func TestUnreadSince(t *testing.T) {
	pipe := func() (*os.File, *countingWriter, int64) {
		t.Helper()
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		cw := &countingWriter{w: w}
		t.Cleanup(func() { r.Close(); cw.Close() })
		if !cw.unreadSince(0) {
			t.Fatal("nothing written: must count as unread")
		}
		if _, err := cw.Write([]byte("first\n")); err != nil {
			t.Fatal(err)
		}
		before := cw.n.Load()
		if _, err := cw.Write([]byte("second request\n")); err != nil {
			t.Fatal(err)
		}
		return r, cw, before
	}
	linux := runtime.GOOS == "linux"

	r, cw, before := pipe()
	if cw.unreadSince(before) {
		t.Fatal("a reader is left: it may still read the request")
	}
	if linux && !cw.stillInPipe(before) {
		t.Fatal("the second request is still in the pipe")
	}
	buf := make([]byte, 4) // the reader takes part of the first line only, then exits
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if cw.unreadSince(0) {
		t.Fatal("bytes the reader took must not count as unread")
	}
	if linux && !cw.unreadSince(before) {
		t.Fatal("the second request is whole in a pipe nobody reads")
	}
	cw.Close() // as a stop closes stdin
	if linux && !cw.unreadSince(before) {
		t.Fatal("what the pipe held at the close must still count")
	}
	if cw.unreadSince(0) {
		t.Fatal("after the close, bytes the reader took must not count as unread")
	}

	r, cw, before = pipe()
	rest := make([]byte, 9) // the first line, and 3 bytes of the second
	if _, err := io.ReadFull(r, rest); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if cw.unreadSince(before) {
		t.Fatal("part of the second request was read: it may have reached the server")
	}

	// A write to a pipe nobody reads fails (EPIPE) and takes no byte.
	r, cw, _ = pipe()
	r.Close()
	before = cw.n.Load()
	if _, err := cw.Write([]byte("third\n")); err == nil {
		t.Fatal("write to a pipe without reader succeeded")
	}
	if !cw.unreadSince(before) {
		t.Fatal("a failed write must count as unread")
	}
}

// Every stdio server learns the daemon's pid in config.EnvDaemonPid, over
// whatever the captured environment or the entry's env said, so an
// `mcpx serve` below a server refuses to run (mcpx never serves itself).
func TestProcessEnvNamesTheDaemon(t *testing.T) {
	env := processEnv([]string{"A=1", config.EnvDaemonPid + "=1"}, map[string]string{"B": "2", config.EnvDaemonPid: "3"})
	want := []string{"A=1", "B=2", config.EnvDaemonPid + "=" + strconv.Itoa(os.Getpid())}
	if !reflect.DeepEqual(env, want) {
		t.Errorf("processEnv = %q, want %q", env, want)
	}
}
