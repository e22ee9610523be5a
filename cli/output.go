package cli

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"unicode/utf8"
)

// writeJSON prints v as indented JSON: the documented --json output.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// table prints rows under a header, columns aligned with two spaces.
func table(w io.Writer, header []string, rows [][]string) error {
	all := rows
	if header != nil {
		all = append([][]string{header}, rows...)
	}
	// Columns are as wide as their widest cell (in runes) plus two
	// spaces; the last cell of a row is not padded (what text/tabwriter
	// does with these settings, without its cell-by-cell writes).
	var widths []int
	for _, r := range all {
		for i := range r {
			r[i] = oneLine(r[i])
			if i == len(r)-1 {
				break
			}
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
		}
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	for _, r := range all {
		for i, cell := range r {
			bw.WriteString(cell)
			if i < len(r)-1 {
				for n := widths[i] - utf8.RuneCountInString(cell) + 2; n > 0; n-- {
					bw.WriteByte(' ')
				}
			}
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// firstLine is the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for s != "" {
		var line string
		line, s, _ = strings.Cut(s, "\n")
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

// summary is what a table shows of a tool's description: its first
// sentence of its first line, at most summaryMax characters (the whole text
// is in `mcpx schema` and in --json).
func summary(s string) string {
	line := firstLine(s)
	if i := strings.Index(line, ". "); i >= 0 {
		line = line[:i+1]
	}
	if utf8.RuneCountInString(line) <= summaryMax {
		return line
	}
	if r := []rune(line); len(r) > summaryMax {
		line = strings.TrimRight(string(r[:summaryMax-1]), " ") + "…"
	}
	return line
}

const summaryMax = 100

// oneLine keeps tabs and newlines from breaking a table row.
func oneLine(s string) string {
	clean := true
	for i := 0; i < len(s) && clean; i++ {
		clean = s[i] != '\t' && s[i] != '\n' && s[i] != '\r'
	}
	if clean {
		return s
	}
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", "").Replace(s)
}
