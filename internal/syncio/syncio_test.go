package syncio

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// Messages written at once from many goroutines come out whole.
func TestWritesStayWhole(t *testing.T) {
	var out bytes.Buffer
	w := &Writer{W: &out}
	msg := strings.Repeat("x", 4096) + "\n"
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				w.Write([]byte(msg))
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 16*50 {
		t.Fatalf("%d lines, want %d", len(lines), 16*50)
	}
	for i, l := range lines {
		if l != msg[:len(msg)-1] {
			t.Fatalf("line %d is torn (%d bytes)", i, len(l))
		}
	}
}
