package cli

import (
	"bytes"
	"context"
	"testing"
)

func BenchmarkVersionInProcess(b *testing.B) {
	for b.Loop() {
		var out, errb bytes.Buffer
		a := &App{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, LookupEnv: func(string) (string, bool) { return "", false }}
		if code := a.Run(context.Background(), []string{"mcpx", "version"}); code != 0 {
			b.Fatal(errb.String())
		}
	}
}
