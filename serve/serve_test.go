package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

func TestToolName(t *testing.T) {
	cases := map[[2]string]string{
		{"everything", "echo"}:          "everything.echo",
		{"fs", "read_file"}:             "fs.read_file",
		{"my server", "do/it"}:          "my_server.do_it",
		{"ns", "wëird"}:                 "ns.w_ird",
		{"a", strings.Repeat("x", 200)}: "a." + strings.Repeat("x", 126),
	}
	for in, want := range cases {
		if got := toolName(in[0], in[1]); got != want {
			t.Errorf("toolName(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
	used := map[string]bool{}
	if a, b := uniqueName("ns.a_b", used), uniqueName("ns.a_b", used); a != "ns.a_b" || b != "ns.a_b_2" {
		t.Errorf("uniqueName: %q, %q", a, b)
	}
}

func TestResourceURI(t *testing.T) {
	served := resourceURI("everything", "demo://resource/static/document/a.md")
	if served != "mcpx://everything/demo://resource/static/document/a.md" {
		t.Fatalf("resourceURI = %q", served)
	}
	ns, uri, ok := splitResourceURI(served)
	if !ok || ns != "everything" || uri != "demo://resource/static/document/a.md" {
		t.Errorf("splitResourceURI = %q %q %v", ns, uri, ok)
	}
	for _, bad := range []string{"demo://x", "mcpx://", "mcpx://ns", "mcpx://ns/", "mcpx:///x"} {
		if _, _, ok := splitResourceURI(bad); ok {
			t.Errorf("splitResourceURI(%q) accepted", bad)
		}
	}
}

func TestCheckLoopback(t *testing.T) {
	for _, ok := range []string{"127.0.0.1:8080", "[::1]:0", "localhost:1234", "127.1.2.3:9"} {
		if err := checkLoopback(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"0.0.0.0:80", ":8080", "192.168.1.2:80", "example.com:80", "nonsense"} {
		if err := checkLoopback(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestMainUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--http", "0.0.0.0:9"},
		{"--expose", "some"},
		{"extra"},
		{"--print-config", "notepad"},
		{"--no-such-flag"},
	} {
		var out, errb bytes.Buffer
		if code := Main(context.Background(), args, strings.NewReader(""), &out, &errb); code != exitUsage {
			t.Errorf("serve %v: exit %d, want %d (%s)", args, code, exitUsage, errb.String())
		}
	}
}

func TestPrintConfig(t *testing.T) {
	for _, h := range hostNames() {
		var out, errb bytes.Buffer
		if code := Main(context.Background(), []string{"--print-config", h, "--expose=search", "--ns", "a,b"}, nil, &out, &errb); code != 0 {
			t.Fatalf("--print-config %s: exit %d: %s", h, code, errb.String())
		}
		s := out.String()
		if !strings.Contains(s, "serve") || !strings.Contains(s, "--expose=search") || !strings.Contains(s, "a,b") || strings.Contains(s, "print-config") {
			t.Errorf("--print-config %s:\n%s", h, s)
		}
	}
}

func TestMCPToolKeepsTheDefinition(t *testing.T) {
	def := `{"name":"get","title":"Get","description":"Get a thing.","inputSchema":{"type":"object","anyOf":[{"required":["a"]},{"required":["b"]}],"properties":{"a":{"type":"string"},"b":{"type":"number"}}},"outputSchema":{"type":"object","properties":{"x":{"type":"string"}}},"annotations":{"readOnlyHint":true},"execution":{"taskSupport":"required"}}`
	tool, err := mcpTool(entry{served: "ns.get", ns: "ns", name: "get", def: []byte(def)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := tool.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{`"name":"ns.get"`, `"title":"Get"`, `"anyOf":[{"required":["a"]},{"required":["b"]}]`,
		`"outputSchema":{"type":"object","properties":{"x":{"type":"string"}}}`, `"readOnlyHint":true`} {
		if !strings.Contains(got, want) {
			t.Errorf("served tool lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "taskSupport") {
		t.Errorf("task support advertised: %s", got)
	}
	if _, err := mcpTool(entry{served: "ns.bad", def: []byte(`{"name":"bad","inputSchema":[]}`)}); err == nil {
		t.Error("a definition whose input schema is not an object was accepted")
	}
}

// A result's content items and structured content reach the host as the
// server wrote them; the aggregate puts resource URIs under mcpx://NS/.
func TestToolResultPassesContentThrough(t *testing.T) {
	result := `{"content":[{"type":"text","text":"a \u00e9 b","x-extra":{"kept":true}},` +
		`{"type":"resource","resource":{"uri":"demo://r/1","text":"one","mimeType":"text/plain"}},` +
		`{"type":"resource_link","uri":"demo://r/2","name":"two"}],` +
		`"structuredContent":{"n":12345678901234567890},"isError":true,"_meta":{"k":"v"}}`
	for _, prefix := range []string{"", "everything"} {
		r := toolResult(&api.CallResponse{Result: json.RawMessage(result)}, prefix)
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		got := string(b)
		for _, want := range []string{`{"type":"text","text":"a \u00e9 b","x-extra":{"kept":true}}`, `"structuredContent":{"n":12345678901234567890}`,
			`"isError":true`, `"_meta":{"k":"v"}`} {
			if !strings.Contains(got, want) {
				t.Errorf("prefix %q: %s lacks %s", prefix, got, want)
			}
		}
		uris := []string{`"uri":"demo://r/1"`, `"uri":"demo://r/2"`}
		if prefix != "" {
			uris = []string{`"uri":"mcpx://everything/demo://r/1"`, `"uri":"mcpx://everything/demo://r/2"`}
		}
		for _, want := range uris {
			if !strings.Contains(got, want) {
				t.Errorf("prefix %q: %s lacks %s", prefix, got, want)
			}
		}
	}
	if r := toolResult(&api.CallResponse{Result: json.RawMessage(`[1]`)}, ""); !r.IsError {
		t.Errorf("a result that is not an object: %+v", r)
	}
}

// jsonAsked reads -json as the flag package would, before it parses.
func TestJSONAsked(t *testing.T) {
	for args, want := range map[string]bool{
		"-json": true, "--json": true, "--json=true": true, "-json=1": true,
		"--json=false": false, "--jsonx": false, "json": false, "--ns x": false, "-- --json": false,
	} {
		if got := jsonAsked(strings.Fields(args)); got != want {
			t.Errorf("jsonAsked(%q) = %v, want %v", args, got, want)
		}
	}
}
