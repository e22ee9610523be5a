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
	// Columns are as wide as their widest cell (in runes) plus two
	// spaces; the last cell of a row is not padded (what text/tabwriter
	// does with these settings, without its cell-by-cell writes).
	var widths []int
	measure := func(r []string) {
		for i := range r {
			r[i] = api.OneLine(r[i])
			if i == len(r)-1 {
				break
			}
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
		}
	}
	measure(header)
	for _, r := range rows {
		measure(r)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	write := func(r []string) {
		for i, cell := range r {
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
	for _, r := range rows {
		write(r)
	}
	return bw.Flush()
}

// table2 is table for two columns whose n rows row returns: a listing of
// 10,000 tools is then printed without building 10,000 row slices.
func table2(w io.Writer, header [2]string, n int, row func(int) (string, string)) error {
	width := utf8.RuneCountInString(api.OneLine(header[0]))
	for i := range n {
		name, _ := row(i)
		width = max(width, utf8.RuneCountInString(api.OneLine(name)))
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	write := func(a, b string) {
		a = api.OneLine(a)
		bw.WriteString(a)
		bw.WriteString(spaces(width - utf8.RuneCountInString(a) + 2))
		bw.WriteString(api.OneLine(b))
		bw.WriteByte('\n')
	}
	write(header[0], header[1])
	for i := range n {
		write(row(i))
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
