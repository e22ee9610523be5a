package search

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestExplainQuery prints how a query ranks over the benchmark's tools and why
// (MCPX_SEARCH_QUERY="open a ticket" go test ./search -run ExplainQuery -v;
// MCPX_SEARCH_SERVERS=github,slack keeps only those servers;
// MCPX_SEARCH_LIMIT=N prints N hits, not 8):
// what the thesaurus makes of each word, then the best hits with their
// matches.
func TestExplainQuery(t *testing.T) {
	q := os.Getenv("MCPX_SEARCH_QUERY")
	if q == "" {
		t.Skip("MCPX_SEARCH_QUERY=WORDS runs it")
	}
	c := loadCorpus(t)
	if only := os.Getenv("MCPX_SEARCH_SERVERS"); only != "" {
		var keep []recorded
		for _, s := range c.servers {
			if slices.Contains(strings.Split(only, ","), s.Namespace) {
				keep = append(keep, s)
			}
		}
		c.servers = keep
	}
	indexes := c.indexes()
	pq := ParseQuery(q)
	for _, c := range pq.concepts {
		t.Logf("concept %q: %v", c.word, c.alts)
	}
	limit := 8
	if n, err := strconv.Atoi(os.Getenv("MCPX_SEARCH_LIMIT")); err == nil && n > 0 {
		limit = n
	}
	for _, h := range Rank(indexes, pq, limit, c.tie) {
		var why []string
		for _, m := range h.Why {
			why = append(why, m.Word+"/"+m.Via+"@"+func() string {
				var s []string
				for _, f := range m.Fields {
					s = append(s, f.String())
				}
				return strings.Join(s, ",")
			}())
		}
		t.Logf("%.3f %s %v", h.Score, c.name(h.Index, h.Doc), why)
	}
}
