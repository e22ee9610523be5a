package search

import (
	_ "embed"
	"strings"
)

// verbs.txt is the English words that can be verbs (WordNet 3.0's verb
// index, written by scripts/wordnet-verbs), one a line, in byte order
// after its comment lines. It is searched where it lies, never parsed, so
// it costs nothing until a query asks and no memory beyond the binary's.
//
//go:embed verbs.txt
var verbsText string

// isVerb reports whether w (lower case, as written) can be a verb in its
// base form: "approve", "draft", "comment"; not "child", "tasks", "gitlab".
func isVerb(w string) bool {
	text := verbsText
	for strings.HasPrefix(text, "#") {
		_, text, _ = strings.Cut(text, "\n")
	}
	// Binary search over the lines: lo and hi are offsets of line starts.
	lo, hi := 0, len(text)
	for lo < hi {
		mid := lo + (hi-lo)/2
		start := strings.LastIndexByte(text[:mid], '\n') + 1
		end := strings.IndexByte(text[start:], '\n')
		if end < 0 {
			end = len(text) - start
		}
		line := text[start : start+end]
		switch {
		case line == w:
			return true
		case line < w:
			lo = start + end + 1
		default:
			hi = start
		}
	}
	return false
}
