package client

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The user these tests act for when they run as root, so that root can
// play launchd: the process that listens on the user's socket.
const testUser = 1000

// rootHeldSocket listens (as this process, root) on a socket in dir, which
// is given to testUser with mode, and returns a client of testUser for it
// that answers GET /v1/health.
func rootHeldSocket(t *testing.T, dirOwner int, mode os.FileMode) *Client {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root: the listener plays launchd, the client another user")
	}
	c, _ := newTestClient(t)
	dir := filepath.Join(filepath.Dir(c.Socket()), "agent")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	c.socket = filepath.Join(dir, "k.sock")
	ln, err := net.Listen("unix", c.socket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	if err := os.Chown(dir, dirOwner, dirOwner); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	c.uid = testUser
	serve(ln, func(_ int64, conn net.Conn) {
		defer conn.Close()
		// A client that refuses the listener closes without a request.
		req, err := http.ReadRequest(bufio.NewReader(conn))
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		body := `{"ok":true}`
		fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	})
	return c
}

// launchd (and PID 1 for a system socket unit) listens as root on the
// user's socket; in the user's own 0700 directory that is accepted.
func TestRootListenerInUsersPrivateDirIsAccepted(t *testing.T) {
	c := rootHeldSocket(t, testUser, 0o700)
	if _, err := c.Health(context.Background()); err != nil {
		t.Fatalf("Health through a root listener in the user's 0700 directory: %v", err)
	}
}

// Root's socket where others could have put it is refused.
func TestRootListenerOutsideUsersPrivateDirIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name  string
		owner int
		mode  os.FileMode
		why   string
	}{
		{"open directory", testUser, 0o755, "mode 0755"},
		{"another user's directory", 4321, 0o700, "owned by uid 4321"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := rootHeldSocket(t, tc.owner, tc.mode)
			_, err := c.Health(context.Background())
			if !errors.Is(err, ErrForeignDaemon) || !strings.Contains(err.Error(), "uid 0") || !strings.Contains(err.Error(), tc.why) {
				t.Fatalf("Health: %v; want ErrForeignDaemon naming uid 0 and %q", err, tc.why)
			}
		})
	}
}

// Another non-root user is refused even in the user's own directory.
func TestForeignListenerInUsersPrivateDirIsRefused(t *testing.T) {
	c := rootHeldSocket(t, testUser, 0o700)
	c.peerUID = func(net.Conn) (int, error) { return 4321, nil }
	_, err := c.Health(context.Background())
	if !errors.Is(err, ErrForeignDaemon) || !strings.Contains(err.Error(), "served by uid 4321") {
		t.Fatalf("Health: %v; want ErrForeignDaemon for uid 4321", err)
	}
}
