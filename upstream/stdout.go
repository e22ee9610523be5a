package upstream

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
)

// stdoutWatch passes a server's stdout through and remembers the first few
// lines in its first stdoutWatched bytes that are not JSON, for errors.
// Safe for one reader and concurrent calls of junk.
type stdoutWatch struct {
	r io.ReadCloser

	mu    sync.Mutex
	seen  int
	line  []byte
	lines []string
}

const (
	stdoutWatched = 64 << 10 // how much of stdout is looked at
	junkLines     = 3        // how many non-JSON lines are kept
	junkLineMax   = 200      // and how much of each
)

func (w *stdoutWatch) Read(b []byte) (int, error) {
	n, err := w.r.Read(b)
	if n > 0 {
		w.mu.Lock()
		if w.seen < stdoutWatched && len(w.lines) < junkLines {
			w.scan(b[:min(n, stdoutWatched-w.seen)])
		}
		w.seen += n
		w.mu.Unlock()
	}
	return n, err
}

// scan collects complete lines; the caller holds mu.
func (w *stdoutWatch) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if room := junkLineMax + 1 - len(w.line); room > 0 {
				w.line = append(w.line, b[:min(len(b), room)]...)
			}
			return
		}
		if room := junkLineMax + 1 - len(w.line); room > 0 {
			w.line = append(w.line, b[:min(i, room)]...)
		}
		w.endLine()
		b = b[i+1:]
	}
}

func (w *stdoutWatch) endLine() {
	line := strings.TrimSpace(string(w.line))
	w.line = w.line[:0]
	if line == "" || line[0] == '{' || line[0] == '[' || len(w.lines) >= junkLines {
		return
	}
	if len(line) > junkLineMax {
		line = line[:junkLineMax] + "…"
	}
	w.lines = append(w.lines, line)
}

// junk is the non-JSON lines seen, quoted and joined ("" when none).
func (w *stdoutWatch) junk() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	lines := w.lines
	if len(lines) == 0 && len(w.line) > 0 && w.line[0] != '{' {
		// A last line without its newline (the server may be waiting).
		if l := strings.TrimSpace(string(w.line)); l != "" {
			lines = []string{l}
		}
	}
	q := make([]string, len(lines))
	for i, l := range lines {
		q[i] = fmt.Sprintf("%q", l)
	}
	return strings.Join(q, ", ")
}
