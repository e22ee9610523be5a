package cli

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mcpx-dev/mcpx/daemon/api"
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
	return tableOf(w, header, len(rows), func(i int, _ []string) []string { return rows[i] })
}

// tableOf is table for n rows that row returns one at a time (it may fill
// and return buf, as long as header): a listing of 10,000 tools is then
// printed without building 10,000 row slices. Each row is asked for twice.
func tableOf(w io.Writer, header []string, n int, row func(i int, buf []string) []string) error {
	// Columns are as wide as their widest cell (in runes) plus two
	// spaces; the last cell of a row is not padded (what text/tabwriter
	// does with these settings, without its cell-by-cell writes).
	var widths []int
	measure := func(r []string) {
		for i := 0; i < len(r)-1; i++ {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(api.OneLine(r[i])))
		}
	}
	buf := make([]string, len(header))
	measure(header)
	for i := range n {
		measure(row(i, buf))
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	write := func(r []string) {
		for i, cell := range r {
			cell = api.OneLine(cell)
			bw.WriteString(cell)
			if i < len(r)-1 {
				bw.WriteString(spaces(widths[i] - utf8.RuneCountInString(cell) + 2))
			}
		}
		bw.WriteByte('\n')
	}
	if header != nil {
		write(header)
	}
	for i := range n {
		write(row(i, buf))
	}
	return bw.Flush()
}

// spaces is n spaces (none for n < 1).
func spaces(n int) string {
	const blank = "                                                                "
	if n < 1 {
		return ""
	}
	if n <= len(blank) {
		return blank[:n]
	}
	return strings.Repeat(" ", n)
}
