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
