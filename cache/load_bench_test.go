package cache

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
)

// BenchmarkSchemasLoad is the cost of reading one server's snapshot, which
// the daemon does on every discovery request and every call: 20 tools with
// 1 KiB of schema each, about what server-filesystem lists. Kept: the ref
// is unchanged, so Load reuses what it verified. Cold: every Load reads,
// verifies and decodes the blob.
func BenchmarkSchemasLoad(b *testing.B) {
	b.Run("kept", func(b *testing.B) { benchmarkLoad(b, false) })
	b.Run("cold", func(b *testing.B) { benchmarkLoad(b, true) })
}

func benchmarkLoad(b *testing.B, cold bool) {
	dir := b.TempDir()
	store, err := OpenStore(dir + "/cas")
	if err != nil {
		b.Fatal(err)
	}
	c := NewSchemas(store, dir+"/schemas")
	now := time.Now()
	snap := &Snapshot{ServerHash: config.ServerHash("0123456789abcdef"), FetchedAt: &now}
	for i := range 20 {
		tool := fmt.Sprintf(`{"name":"tool_%d","description":%q,"inputSchema":{"type":"object","properties":{"p":{"type":"string","description":%q}}}}`,
			i, strings.Repeat("d", 400), strings.Repeat("x", 600))
		snap.Tools = append(snap.Tools, json.RawMessage(tool))
	}
	if err := c.Save(snap); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		if cold {
			c.forget(snap.ServerHash)
		}
		if _, err := c.Load(snap.ServerHash); err != nil {
			b.Fatal(err)
		}
	}
}
