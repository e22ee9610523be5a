package upstream

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestStdoutWatchQuotesNonJSONLines(t *testing.T) {
	in := "Welcome v1\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n  debug: x  \nthird\nfourth\n"
	w := &stdoutWatch{r: io.NopCloser(iotest.OneByteReader(strings.NewReader(in)))}
	out, err := io.ReadAll(w)
	if err != nil || string(out) != in {
		t.Fatalf("passed through %q, %v", out, err)
	}
	if got, want := w.junk(), `"Welcome v1", "debug: x", "third"`; got != want {
		t.Errorf("junk = %s, want %s", got, want)
	}
	// A last line without a newline counts; JSON alone is no junk.
	w = &stdoutWatch{r: io.NopCloser(strings.NewReader("{\"a\":1}\nwaiting for input"))}
	io.ReadAll(w)
	if got := w.junk(); got != `"waiting for input"` {
		t.Errorf("junk = %s", got)
	}
	w = &stdoutWatch{r: io.NopCloser(strings.NewReader("{\"a\":1}\n"))}
	io.ReadAll(w)
	if got := w.junk(); got != "" {
		t.Errorf("junk of JSON = %s", got)
	}
}
