package daemon

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Tool annotations come from servers. Whatever they hold, the policy
// decision never panics, and a case variant of a hint key is never read as
// that hint.
func FuzzAnnotations(f *testing.F) {
	f.Add([]byte(`{"name":"t","annotations":{"destructiveHint":true,"ReadOnlyHint":true}}`))
	f.Add([]byte(`{"name":"t","annotations":{"readOnlyHint":true}}`))
	f.Add([]byte(`{"name":"t","Annotations":{"readOnlyHint":true},"annotations":{}}`))
	f.Add([]byte(`{"name":"t","annotations":[]}`))
	pol := effectivePolicy(config.Policy{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		tool, ok := toolOf("ns", json.RawMessage(raw))
		if !ok {
			return
		}
		h := hintOf(tool)
		err := pol.check("ns", tool.Name, h, false)
		if h == hintDestructive || h == hintMalformed {
			if err == nil {
				t.Fatalf("%s: hint %d ran without confirmation", raw, h)
			}
		}
	})
}

// Raw bytes on the daemon's socket: any request (well-formed or not, any
// route, any body) gets an answer or a closed connection, and the daemon
// keeps serving.
func FuzzHTTPRequest(f *testing.F) {
	f.Add([]byte("GET /v1/health HTTP/1.1\r\nHost: mcpx\r\n\r\n"))
	f.Add([]byte("POST /v1/call HTTP/1.1\r\nHost: mcpx\r\nContent-Length: 40\r\n\r\n{\"namespace\":\"a\",\"tool\":\"t\",\"args\":{}}"))
	f.Add([]byte("POST /v1/refresh HTTP/1.1\r\nHost: mcpx\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"na\"\r\n0\r\n\r\n"))
	f.Add([]byte("GET /v1/resolve?dir=%2F..%2F HTTP/1.1\r\nHost: mcpx\r\n\r\n"))
	f.Add([]byte("GET /v1/search?q=%ff%fe HTTP/1.0\r\n\r\n"))
	// One daemon for the whole run (per fuzz worker process).
	d := newWorld(f, `{"mcpServers": {"a": {"command": "/nonexistent/server"}}}`).start()
	f.Fuzz(func(t *testing.T, req []byte) {
		c, err := net.Dial("unix", d.sock)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		_, _ = c.Write(req)
		if uc, ok := c.(*net.UnixConn); ok {
			_ = uc.CloseWrite()
		}
		_, _ = io.Copy(io.Discard, c)
		c.Close()
		resp, err := d.http.Get("http://mcpx" + api.PathHealth)
		if err != nil {
			t.Fatalf("daemon stopped answering after %q: %v", req, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("health after %q: %s", req, resp.Status)
		}
	})
}

// key=value and key:=JSON pairs (NUL-separated in argv), typed and checked
// against an input schema from a server. Whatever both hold, the result is
// an error or a JSON object.
func FuzzArgs(f *testing.F) {
	f.Add("text=hi\x00n:=3\x00flag=true", `{"properties":{"n":{"type":"integer"},"flag":{"type":"boolean"}}}`)
	f.Add("a:=not json\x00b=", `{"properties":{"a":{"type":["number","null"]}}}`)
	f.Fuzz(func(t *testing.T, argv, schema string) {
		var req api.CallRequest
		for _, arg := range strings.Split(argv, "\x00") {
			key, value, ok := strings.Cut(arg, "=")
			if !ok || key == "" {
				continue
			}
			kv := api.ArgPair{Key: key, Value: value}
			if strings.HasSuffix(key, ":") {
				kv.Key, kv.JSON = strings.TrimSuffix(key, ":"), true
			}
			req.Pairs = append(req.Pairs, kv)
		}
		def, err := json.Marshal(map[string]json.RawMessage{"name": json.RawMessage(`"t"`), "inputSchema": json.RawMessage(schema)})
		if err != nil {
			def = []byte(`{"name":"t"}`) // not JSON: a tool without a schema
		}
		out, err := buildArgs("ns", "t", compileTool(api.Tool{Name: "t", Definition: def}), req)
		if err != nil {
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(out, &obj); err != nil {
			t.Fatalf("pairs %+v built %s, not a JSON object: %v", req.Pairs, out, err)
		}
	})
}

// decodeArgs makes of any arguments what jsonschema.UnmarshalJSON makes:
// the same value, or an error where it errs.
func FuzzDecodeArgs(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"message":"x"}`, ` { "a" : [ 1, -2.5e+3, true, false, null, {"b":[]} ] , "c":{} } `,
		`{"a":1,"a":"again"}`, `{"esc\"aped":"\u00e9\n\ud83d\ude00","x":"\ud800"}`, "{\"bad\":\"\xff\xfe\"}",
		`{"n":12345678901234567890123,"f":0.1E-7}`, `[1,[2,[3]]]`, `"top"`, `{"a":1}x`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, werr := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		got, gerr := decodeArgs(data)
		if (werr != nil) != (gerr != nil) || (werr != nil && werr.Error() != gerr.Error()) {
			t.Fatalf("%q: error %v, want %v", data, gerr, werr)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %#v, want %#v", data, got, want)
		}
	})
}

// encodeArgs writes what json.Marshal writes of the same arguments.
func FuzzEncodeArgs(f *testing.F) {
	f.Add("message", `"x"`, "b", `[1, 2]`)
	f.Add("<k>", `{"a" : "<&>"}`, "z", "\"\u2028\"")
	f.Add("é\x01", `"\u00e9"`, "", `  true `)
	f.Add("empty", ``, "n", `null`)
	f.Fuzz(func(t *testing.T, k1, v1, k2, v2 string) {
		obj := map[string]json.RawMessage{}
		for _, kv := range [][2]string{{k1, v1}, {k2, v2}} {
			if kv[1] != "" && !json.Valid([]byte(kv[1])) {
				return // (empty: a RawMessage that Marshal refuses)
			}
			obj[kv[0]] = json.RawMessage(kv[1])
		}
		want, werr := json.Marshal(obj)
		got, gerr := encodeArgs(obj)
		if !bytes.Equal(got, want) || (gerr == nil) != (werr == nil) {
			t.Fatalf("%q: %s, %v; want %s, %v", obj, got, gerr, want, werr)
		}
	})
}
