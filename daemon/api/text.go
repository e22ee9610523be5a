package api

import (
	"strings"
	"unicode/utf8"
)

// Text for tables and listings, shared by the daemon (which sends
// summaries in brief tool lists) and the CLI (which shows them).

// FirstLine is the first non-empty line of s, trimmed.
func FirstLine(s string) string {
	for s != "" {
		var line string
		line, s, _ = strings.Cut(s, "\n")
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

// Summary is what a table shows of a tool's description: its first
// sentence of its first line, at most SummaryMax characters, on one line
// (the whole text is in `mcpx schema` and in --json).
func Summary(s string) string {
	line := OneLine(FirstLine(s))
	if i := strings.Index(line, ". "); i >= 0 {
		line = line[:i+1]
	}
	if utf8.RuneCountInString(line) <= SummaryMax {
		return line
	}
	if r := []rune(line); len(r) > SummaryMax {
		line = strings.TrimRight(string(r[:SummaryMax-1]), " ") + "…"
	}
	return line
}

// SummaryMax is the longest Summary, in characters.
const SummaryMax = 100

// OneLine keeps tabs and newlines from breaking a table row.
func OneLine(s string) string {
	if !breaksLine(s) {
		return s
	}
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", "").Replace(s)
}

// breaksLine reports whether s holds a tab, newline or carriage return.
func breaksLine(s string) bool {
	if len(s) < 32 {
		// A table's names, counts and states: one pass costs less
		// than three calls (a listing of 500 servers asks 5,000 times).
		for i := 0; i < len(s); i++ {
			if c := s[i]; c == '\n' || c == '\t' || c == '\r' {
				return true
			}
		}
		return false
	}
	// Three vectorised scans beat one strings.ContainsAny, which builds a
	// byte set on every call (10,000 calls for a listing).
	return strings.IndexByte(s, '\n') >= 0 || strings.IndexByte(s, '\t') >= 0 || strings.IndexByte(s, '\r') >= 0
}
