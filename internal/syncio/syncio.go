// Package syncio has a writer that several goroutines may share.
package syncio

import (
	"io"
	"sync"
)

// Writer writes each Write to W whole: JSON-RPC messages that several
// goroutines write to one stdout (an MCP library and code answering beside
// it) never interleave.
type Writer struct {
	mu sync.Mutex
	W  io.Writer
}

func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.W.Write(p)
}
