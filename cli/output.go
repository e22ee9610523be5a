package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
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
	// tabwriter writes cell by cell: buffered, a 10,000-row table is a few
	// writes instead of tens of thousands.
	bw := bufio.NewWriterSize(w, 64<<10)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	if header != nil {
		fmt.Fprintln(tw, strings.Join(header, "\t"))
	}
	for _, r := range rows {
		for i := range r {
			r[i] = oneLine(r[i])
		}
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return bw.Flush()
}

// firstLine is the first non-empty line of s, trimmed.
func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
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
	if r := []rune(line); len(r) > summaryMax {
		line = strings.TrimRight(string(r[:summaryMax-1]), " ") + "…"
	}
	return line
}

const summaryMax = 100

// oneLine keeps tabs and newlines from breaking a table row.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\t\n\r") {
		return s
	}
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", "").Replace(s)
}
