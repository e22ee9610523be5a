package daemon

import (
	"sync"

	"github.com/mcpx-dev/mcpx/search"
)

// snapIndex is what the daemon derives from one snapshot beyond its decoded
// tool list: the compiled argument validators of its tools (built on first
// use, once per tool) and its search documents. Each toolIndex (index.go,
// one per snapshot digest) holds one, so it is built once per distinct
// snapshot however often the snapshot is loaded. The zero value is ready.
// Safe for concurrent use.
type snapIndex struct {
	mu    sync.Mutex
	tools map[string]*toolSchema // by tool name, compiled on first use

	docsOnce sync.Once
	docs     map[string]*search.Doc // by tool name: the search documents
}
