package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// The note on namespaces never read names a few and counts the rest: with
// hundreds of servers configured, a line of every name says nothing.
func TestNoteUnreadNamesAFew(t *testing.T) {
	for _, c := range []struct {
		unread int
		want   string
	}{
		{0, ""},
		{1, "mcpx: s0 has not been read yet; `mcpx refresh` reads it (or name it: `mcpx ls s0`).\n"},
		{3, "mcpx: s0, s1, s2 have not been read yet; `mcpx refresh` reads them.\n"},
		{500, "mcpx: s0, s1, s2 and 497 more have not been read yet; `mcpx refresh` reads them.\n"},
	} {
		var nss []api.Namespace
		for i := range c.unread {
			nss = append(nss, api.Namespace{Name: fmt.Sprint("s", i), State: api.StateUnread})
		}
		nss = append(nss, api.Namespace{Name: "read", State: api.StateCached})
		var stderr strings.Builder
		(&App{Stderr: &stderr}).noteUnread(nss)
		if stderr.String() != c.want {
			t.Errorf("%d unread: %q, want %q", c.unread, stderr.String(), c.want)
		}
	}
}
