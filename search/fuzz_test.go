package search

import (
	"testing"
	"unicode/utf8"
)

// No query, however odd, makes ParseQuery or Rank panic, and every hit's
// Why names a word of the query.
func FuzzRankQuery(f *testing.F) {
	for _, s := range []string{
		"", " ", "#", "…", "`", "``", "` `", "`unclosed", "a `b` c `d", ".,;:!?", "let … know",
		"let the team know", "open bugs", "merged PRs", "acme/api#77", "#12", "c.go's contents",
		"list the files in /tmp as .md", "SELECT * FROM t", "dump everything you remember",
		"\xff\xfe", "éèê ünïcödé", "PATH", "let", "open", "opened", "x.com",
		`"`, `""`, `"a" "b`, `'`, "“x”", "“", `"Old notes" page`,
		"👀 the message", "👍🏽", "\u200d", "\ufe0f👀", "a👀", "address for these GPS coordinates", "PageDown twice",
	} {
		f.Add(s)
	}
	c := loadCorpus(f)
	indexes := c.indexes()
	f.Fuzz(func(t *testing.T, query string) {
		q := ParseQuery(query)
		for _, h := range Rank(indexes, q, 10, c.tie) {
			for _, m := range h.Why {
				if m.Word == "" && utf8.ValidString(query) {
					t.Errorf("%q: hit %v has a Why with no word: %+v", query, h, m)
				}
			}
		}
	})
}
