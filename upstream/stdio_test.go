package upstream

import (
	"bufio"
	"errors"
	"strings"
	"testing"
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
	if !errors.Is(err, errMessageTooLarge) || !l.tripped.Load() {
		t.Fatalf("err = %v, want errMessageTooLarge", err)
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
