package upstream

import "sync"

// stderrKeep is how much of a stdio server's stderr is kept for errors.
const stderrKeep = 64 << 10

// ring keeps the last stderrKeep bytes written to it. Safe for concurrent
// use.
type ring struct {
	mu  sync.Mutex
	buf []byte
}

func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	if len(p) >= stderrKeep {
		r.buf = append(r.buf[:0], p[len(p)-stderrKeep:]...)
		return n, nil
	}
	if over := len(r.buf) + len(p) - stderrKeep; over > 0 {
		r.buf = append(r.buf[:0], r.buf[over:]...)
	}
	r.buf = append(r.buf, p...)
	return n, nil
}

// String returns the kept tail.
func (r *ring) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return string(r.buf)
}
