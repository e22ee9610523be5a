package search

import (
	"fmt"
	"strings"
	"testing"
)

// bigIndex is 10,000 tools shaped like the fixture's filler tools (what
// scripts/bench's "10,000 tools: search" row searches), with the fixture
// server's name.
func bigIndex(b *testing.B) ([]*Index, []string) {
	b.Helper()
	var docs []*Doc
	var names []string
	for i := range 10000 {
		name := fmt.Sprintf("tool_%03d", i)
		t, err := ParseTool([]byte(fmt.Sprintf(`{"name":%q,"description":"Generated filler tool %s.","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}`, name, name)))
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, NewDoc(t))
		names = append(names, name)
	}
	return []*Index{NewIndex(docs, NewServerDoc(Server{Name: "mcpx-fixture"}))}, names
}

func BenchmarkRank10000(b *testing.B) {
	indexes, names := bigIndex(b)
	tie := func(x, y Hit) int { return strings.Compare(names[x.Doc], names[y.Doc]) }
	// The last names the server: every tool has that word (server name).
	for _, q := range []string{"tool_0042", "open a ticket in the repo", "fixture tool_0042"} {
		b.Run(strings.ReplaceAll(q, " ", "_"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Rank(indexes, ParseQuery(q), 10, tie)
			}
		})
	}
}

func BenchmarkIndex10000(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		bigIndex(b)
	}
}
