package cli

import (
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// table lays rows out exactly as text/tabwriter did (minwidth 0, padding
// 2, spaces), without its cell-by-cell writes.
func TestTableSameAsTabwriter(t *testing.T) {
	rows := [][]string{{"a", "bé", "c"}, {"longer name", "x", "tail"}, {"ü", "", "z"}, {"q", "w\tx", "e\ny"}}
	hdr := []string{"H1", "HEADER2", "H3"}
	clone := func() [][]string {
		var o [][]string
		for _, r := range rows {
			o = append(o, append([]string(nil), r...))
		}
		return o
	}
	var got, want strings.Builder
	if err := table(&got, hdr, clone()); err != nil {
		t.Fatal(err)
	}
	tw := tabwriter.NewWriter(&want, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(hdr, "\t"))
	for _, r := range clone() {
		for i := range r {
			r[i] = api.OneLine(r[i])
		}
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	if got.String() != want.String() {
		t.Fatalf("got\n%s\nwant\n%s", got.String(), want.String())
	}
}

func TestSummary(t *testing.T) {
	long := strings.Repeat("é", 120)
	for in, want := range map[string]string{
		"":                                "",
		"\n\n  First line. Second.\nmore": "First line.",
		"no period":                       "no period",
		long:                              strings.Repeat("é", 99) + "…",
	} {
		if got := api.Summary(in); got != want {
			t.Errorf("api.Summary(%q) = %q, want %q", in, got, want)
		}
	}
}

// tableOf with a reused row buffer prints exactly what table does.
func TestTableOfSameAsTable(t *testing.T) {
	rows := [][2]string{{"a", "bé"}, {"longer name", "x"}, {"ü", ""}, {"q\tr", "w\tx\ny"}, {"", "only"}}
	var got, want strings.Builder
	if err := tableOf(&got, []string{"TOOL", "DESCRIPTION"}, len(rows), func(i int, buf []string) []string {
		buf[0], buf[1] = rows[i][0], rows[i][1]
		return buf
	}); err != nil {
		t.Fatal(err)
	}
	var cells [][]string
	for _, r := range rows {
		cells = append(cells, []string{r[0], r[1]})
	}
	if err := table(&want, []string{"TOOL", "DESCRIPTION"}, cells); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Fatalf("tableOf:\n%q\ntable:\n%q", got.String(), want.String())
	}
}
