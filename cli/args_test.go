package cli

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

func TestParseArgsRaw(t *testing.T) {
	dir := t.TempDir()
	obj := filepath.Join(dir, "args.json")
	os.WriteFile(obj, []byte(`{"from":"file"}`+"\n"), 0o644)
	text := filepath.Join(dir, "text.txt")
	os.WriteFile(text, []byte("line one\nline two\n"), 0o644)
	cases := []struct {
		args   []string
		object string
		pairs  []api.ArgPair
	}{
		{nil, "", nil},
		{[]string{`{"a": 1}`}, `{"a": 1}`, nil},
		{[]string{"-"}, `{"from":"stdin"}`, nil},
		{[]string{"@" + obj}, `{"from":"file"}`, nil},
		{[]string{"@" + obj, "b=2"}, `{"from":"file"}`, []api.ArgPair{{Key: "b", Value: "2"}}},
		{[]string{"a=1.5", "s=a=b"}, "", []api.ArgPair{{Key: "a", Value: "1.5"}, {Key: "s", Value: "a=b"}}},
		{[]string{"s:=5"}, "", []api.ArgPair{{Key: "s", Value: "5", JSON: true}}},
		{[]string{"t=@" + text}, "", []api.ArgPair{{Key: "t", Value: "line one\nline two\n"}}},
		{[]string{`t=\@home`}, "", []api.ArgPair{{Key: "t", Value: "@home"}}},
		{[]string{"tag=a", "tag=b"}, "", []api.ArgPair{{Key: "tag", Value: "a"}, {Key: "tag", Value: "b"}}},
	}
	for _, c := range cases {
		got, err := parseArgs(c.args, strings.NewReader(`{"from":"stdin"}`))
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if string(got.object) != c.object || !reflect.DeepEqual(got.pairs, c.pairs) {
			t.Errorf("%q = %s %+v, want %s %+v", c.args, got.object, got.pairs, c.object, c.pairs)
		}
	}
}

func TestParseArgsErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"[1,2]"}, "arguments must be a JSON object"},
		{[]string{"42"}, "arguments must be a JSON object"},
		{[]string{`"text"`}, "arguments must be a JSON object"},
		{[]string{"{bad"}, "not valid JSON"},
		{[]string{"@/nonexistent/args.json"}, "no such file"},
		{[]string{"t=@/nonexistent/value"}, "no such file"},
		{[]string{"nokey"}, "is not key=value"},
		{[]string{"=5"}, "no name"},
		{[]string{"x:={"}, "not valid JSON"},
		{[]string{"b=2", `{"a":1}`}, "JSON object (or - or @FILE) first"},
	}
	for _, c := range cases {
		_, err := parseArgs(c.args, nil)
		var ue *usageError
		if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want a usage error containing %q", c.args, err, c.want)
		}
	}
}
