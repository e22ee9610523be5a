package client

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/version"
)

// A daemon of another build of the same mcpxd is asked to drain and exit
// after the command's request; one started from another path is not.
func TestOlderBuildIsAskedToExit(t *testing.T) {
	for _, samePath := range []bool{true, false} {
		c, ln := newTestClient(t)
		self := filepath.Join(t.TempDir(), "mcpxd")
		if err := os.WriteFile(self, []byte("new build"), 0o755); err != nil {
			t.Fatal(err)
		}
		c.self = self
		theirs := self + ":3:1"
		if !samePath {
			theirs = "/opt/other/mcpxd:3:1"
		}
		var mu sync.Mutex
		var paths []string
		serve(ln, func(_ int64, conn net.Conn) {
			defer conn.Close()
			req, err := http.ReadRequest(bufio.NewReader(conn))
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			mu.Lock()
			paths = append(paths, req.URL.Path)
			mu.Unlock()
			io.WriteString(conn, "HTTP/1.1 200 OK\r\n"+api.HeaderBinary+": "+theirs+"\r\nContent-Length: 2\r\n\r\n{}")
		})
		if _, err := c.Health(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		got := paths
		mu.Unlock()
		wantShutdown := samePath
		if asked := len(got) == 2 && got[1] == api.PathShutdown; asked != wantShutdown || c.ReplacedStale() != wantShutdown {
			t.Errorf("same path %v (mine %s, theirs %s): requests %v, replaced %v", samePath, version.BinaryID(self), theirs, got, c.ReplacedStale())
		}
	}
}
