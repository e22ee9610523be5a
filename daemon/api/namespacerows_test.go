package api

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// What AppendNamespaceRows writes, DecodeNamespaceRows reads back: every
// row as the Namespace it abbreviates, and the unavailable sources.
func FuzzNamespaceRowsRoundTrip(f *testing.F) {
	f.Add("demo", "", "", 7, 1, 0, false, "cached", "", "", 0)
	f.Add("n<s>&", "d\"e\\s\n\u2028,:}", "/p/é", 0, -1, 3, true, "untrusted", "e\x00\xff", "/c.json", 2)
	f.Fuzz(func(t *testing.T, name, desc, source string, tools, live, replaced int, exits bool, state, errText, path string, unavailable int) {
		rows := []NamespaceRow{
			{Name: name, Description: desc, Source: source, Tools: tools, Live: live, Replaced: replaced,
				ExitsAfterAnswer: exits, State: state, Error: errText},
			{Name: desc, State: name},
		}
		var gone []UnavailableSource
		for i := range unavailable % 3 {
			gone = append(gone, UnavailableSource{Path: path, Host: name, Error: errText + string(rune('a'+i))})
		}
		data := AppendNamespaceRows(nil, namespaceRowsOf(rows), gone)
		got, err := DecodeNamespaceRows(data)
		if err != nil {
			t.Fatalf("%v in %q", err, data)
		}
		// What encoding/json makes of each row is what the row says
		// (invalid UTF-8 becomes U+FFFD on the way).
		want := &NamespacesResponse{Namespaces: []Namespace{}}
		for _, r := range rows {
			b, _ := json.Marshal(r)
			var n Namespace
			if err := json.Unmarshal(b, &n); err != nil {
				t.Fatal(err)
			}
			want.Namespaces = append(want.Namespaces, n)
		}
		if len(gone) > 0 {
			b, _ := json.Marshal(gone)
			if err := json.Unmarshal(b, &want.Unavailable); err != nil {
				t.Fatal(err)
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("read back\n %+v\nwant\n %+v\nfrom %q", got, want, data)
		}
	})
}

// A row line the reader takes is read as encoding/json reads it into a
// NamespaceRow; what it refuses is an error naming the line, never a
// panic.
func FuzzDecodeNamespaceRow(f *testing.F) {
	f.Add(`{"name":"demo","tools":7,"live":1,"state":"cached"}`)
	f.Add(`{"name":"a\u00e9","exitsAfterAnswer":true,"state":"error","error":"x","future":"y","n":-1.5e3}`)
	f.Add(`{"name":"a","tools":01}`)
	f.Add(`{"name":"a","later":{"b":[1,2,"x,]"]},"more":[],"state":"cached"}`)
	f.Add(`{"name":"a","later":{"b":1,}}`)
	f.Add(`{"name":"a",}`)
	f.Add(`{"tools":+1}`)
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsRune(line, '\n') {
			return
		}
		got, err := DecodeNamespaceRows([]byte("{}\n" + line + "\n"))
		if err != nil {
			if !strings.Contains(err.Error(), "line 2") {
				t.Fatalf("%q: error %v does not name the line", line, err)
			}
			return
		}
		var row NamespaceRow
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("%q: read as %+v, but encoding/json: %v", line, got.Namespaces[0], err)
		}
		want := Namespace{Name: row.Name, Description: row.Description, Source: row.Source, Tools: row.Tools, Live: row.Live,
			Replaced: row.Replaced, ExitsAfterAnswer: row.ExitsAfterAnswer, State: row.State, Error: row.Error}
		if !reflect.DeepEqual(got.Namespaces[0], want) {
			t.Fatalf("%q:\n got %+v\nwant %+v", line, got.Namespaces[0], want)
		}
	})
}

// Every field of NamespaceRow is written and read back: a field added to
// the struct and not to the rows fails here.
func TestNamespaceRowsCarryEveryField(t *testing.T) {
	var row NamespaceRow
	v := reflect.ValueOf(&row).Elem()
	for i := range v.NumField() {
		switch f := v.Field(i); f.Kind() {
		case reflect.String:
			f.SetString("x" + v.Type().Field(i).Name)
		case reflect.Int:
			f.SetInt(int64(i + 1))
		case reflect.Bool:
			f.SetBool(true)
		default:
			t.Fatalf("field %s: kind %s not covered by this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	data := AppendNamespaceRows(nil, namespaceRowsOf([]NamespaceRow{row}), nil)
	want, _ := json.Marshal(row)
	if got := strings.Split(string(data), "\n")[1]; got != string(want) {
		t.Fatalf("row %s\nwant %s", got, want)
	}
	got, err := DecodeNamespaceRows(data)
	if err != nil {
		t.Fatal(err)
	}
	n := got.Namespaces[0]
	back := NamespaceRow{Name: n.Name, Description: n.Description, Source: n.Source, Tools: n.Tools, Live: n.Live,
		Replaced: n.Replaced, ExitsAfterAnswer: n.ExitsAfterAnswer, State: n.State, Error: n.Error}
	if back != row {
		t.Fatalf("read back %+v, want %+v", back, row)
	}
	if string(AppendNamespaceRows(nil, namespaceRowsOf(nil), nil)) != "{}\n" {
		t.Fatal("an empty listing is not its first line alone")
	}
}

func namespaceRowsOf(rows []NamespaceRow) func(func(*NamespaceRow) bool) {
	return func(yield func(*NamespaceRow) bool) {
		for i := range rows {
			if !yield(&rows[i]) {
				return
			}
		}
	}
}
