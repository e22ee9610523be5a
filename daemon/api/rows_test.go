package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func rowsOf(ns string, pairs ...[2]string) []byte {
	head, _ := json.Marshal(map[string]any{"namespace": Namespace{Name: ns, Tools: len(pairs), State: "cached"}})
	b := append(head, '\n')
	for _, p := range pairs {
		b = AppendToolRow(b, p[0], p[1])
	}
	return b
}

// Rows read back as written, whatever the strings hold.
func TestToolRowsRoundTrip(t *testing.T) {
	pairs := [][2]string{
		{"plain", "Adds two numbers."},
		{"escapes", "line one\nline \"two\"\t\\ back"},
		{"html", "<b>&amp;</b>"},
		{"unicode", "café ☕ \u2028 𝄞"},
		{"empty", ""},
		{"comma,bracket]", "[\"not\",\"a row\"]"},
	}
	r, err := DecodeToolRows(rowsOf("fx", pairs...))
	if err != nil {
		t.Fatal(err)
	}
	if r.Namespace.Name != "fx" || r.Namespace.Tools != len(pairs) || len(r.Rows) != len(pairs) {
		t.Fatalf("got %+v", r)
	}
	for i, p := range pairs {
		want := ToolRow{Name: p[0], Summary: p[1]}
		if !reflect.DeepEqual(r.Rows[i], want) {
			t.Errorf("row %d = %+v, want %+v", i, r.Rows[i], want)
		}
	}
	// No tools: the first line alone.
	if r, err := DecodeToolRows(rowsOf("none")); err != nil || len(r.Rows) != 0 || r.Rows == nil {
		t.Errorf("empty list: %+v, %v", r, err)
	}
}

// A string that encoding/json would read differently is read by it.
func TestToolRowsLikeEncodingJSON(t *testing.T) {
	for _, s := range []string{`"a\u00e9b"`, "\"bad \xff utf8\"", `"\ud834\udd1e"`, `"x\/y"`} {
		var want string
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatal(err)
		}
		got, rest, err := jsonString(s + `,`)
		if err != nil || got != want || rest != "," {
			t.Errorf("jsonString(%q) = %q, %q, %v; want %q", s, got, rest, err, want)
		}
	}
}

func TestToolRowsErrors(t *testing.T) {
	head := `{"namespace":{"name":"fx"}}` + "\n"
	for _, bad := range []string{
		``, `{}` + "\n", head + `["a"]` + "\n", head + `["a","b","c"]` + "\n", head + `["a","b"]`,
		head + `["a",1]` + "\n", head + `["a","b` + "\n", head + `["a","b"] ` + "\n", head + "[\"a\",\"\x01\"]\n",
	} {
		if r, err := DecodeToolRows([]byte(bad)); err == nil {
			t.Errorf("DecodeToolRows(%q) = %+v, want an error", bad, r)
		}
	}
}

// The CLI reads these rows from the daemon's socket: any input is an
// answer or an error, never a panic, and what decodes is what
// encoding/json reads from the same rows.
func FuzzDecodeToolRows(f *testing.F) {
	f.Add(rowsOf("fx", [2]string{"a", "b"}, [2]string{"c\n", "\"d\""}))
	f.Add([]byte(`{"namespace":{"name":"x"}}` + "\n" + `["\u00e9","\\"]` + "\n"))
	f.Add([]byte("{\"namespace\":{}}\n[\"\xff\",\"\"]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeToolRows(data)
		if err != nil {
			return
		}
		lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")[1:]
		if len(r.Rows) != len(lines) {
			if !(len(r.Rows) == 0 && len(lines) == 1 && lines[0] == "") {
				t.Fatalf("%d tools from %d lines", len(r.Rows), len(lines))
			}
			return
		}
		for i, l := range lines {
			var want [2]string
			if err := json.Unmarshal([]byte(l), &want); err != nil {
				t.Fatalf("line %q decoded to %+v but encoding/json says %v", l, r.Rows[i], err)
			}
			if r.Rows[i].Name != want[0] || r.Rows[i].Summary != want[1] {
				t.Fatalf("line %q: %q %q, encoding/json %q", l, r.Rows[i].Name, r.Rows[i].Summary, want)
			}
		}
	})
}

// plain8 finds any special byte at any position among plain ones.
func TestPlain8(t *testing.T) {
	for b := 0; b < 256; b++ {
		special := b < 0x20 || b == '"' || b == '\\' || b >= 0x80
		for pos := range 8 {
			s := []byte("azAZ09 ~")
			s[pos] = byte(b)
			if got := plain8(string(s)); got == special {
				t.Fatalf("plain8(%q) = %v", s, got)
			}
		}
	}
}

// OneLine keeps a table row on one line, for short cells (read byte by
// byte) and long ones (vectorised scans) alike.
func TestOneLine(t *testing.T) {
	long := strings.Repeat("x", 40)
	for in, want := range map[string]string{
		"":                "",
		"plain":           "plain",
		"a\tb":            "a b",
		"a\r\nb":          "a b",
		"line\n":          "line ",
		long:              long,
		long + "\tb":      long + " b",
		"é\n" + long:      "é " + long,
		long + "\r" + "x": long + "x",
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
