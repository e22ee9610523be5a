package daemon

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

// The daemon's own work in one POST /v1/call, piece by piece (run with
// -benchmem: the allocations are the point as much as the time). The tool is
// server-everything's echo as its tools/list answers it; the bodies are the
// two shapes clients send: a JSON object (curl, the throughput harness,
// `mcpx serve`) and key=value pairs (the CLI).

const everythingEcho = `{"name":"echo","title":"Echo Tool","description":"Echoes back the input string",
 "inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object",
  "properties":{"message":{"type":"string","description":"Message to echo"}},"required":["message"]},
 "annotations":{"readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":false}}`

const (
	callBodyObject = `{"namespace":"everything","tool":"echo","arguments":{"message":"x"}}`
	callBodyPairs  = `{"namespace":"everything","tool":"echo","pairs":[{"key":"message","value":"x"}],"cwd":"/home/u/work"}`
)

// echoSchema is the cached toolSchema of everythingEcho, as a call finds it.
func echoSchema(b *testing.B) *toolSchema {
	var x indexes
	snap := testSnapshot(everythingEcho)
	tool, ok := toolOf("everything", snap.Tools[0])
	if !ok {
		b.Fatal("echo does not decode")
	}
	ts := x.get("0123456789abcdef", "d1", snap).derived.schemaOf(tool)
	if ts.validator == nil {
		b.Fatalf("echo's schema does not compile: %v", ts.err)
	}
	return ts
}

func benchBuildArgs(b *testing.B, body string) {
	ts := echoSchema(b)
	req, err := api.DecodeCallRequest([]byte(body))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		args, err := buildArgs("everything", "echo", ts, *req)
		if err != nil || string(args) != `{"message":"x"}` {
			b.Fatalf("%s, %v", args, err)
		}
	}
}

func BenchmarkBuildArgsObject(b *testing.B) { benchBuildArgs(b, callBodyObject) }
func BenchmarkBuildArgsPairs(b *testing.B)  { benchBuildArgs(b, callBodyPairs) }

func BenchmarkDecodeCallBody(b *testing.B) {
	b.Run("small", func(b *testing.B) { benchDecodeBody(b, []byte(callBodyPairs)) })
	// 256 KiB of arguments (a file's content passed to a tool).
	large := `{"namespace":"everything","tool":"echo","arguments":{"message":"` + strings.Repeat("x", 256<<10) + `"}}`
	b.Run("256KiB", func(b *testing.B) { benchDecodeBody(b, []byte(large)) })
}

func benchDecodeBody(b *testing.B, body []byte) {
	r := httptest.NewRequest(http.MethodPost, api.PathCall, nil)
	r.ContentLength = int64(len(body))
	rd := bytes.NewReader(body)
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(body)
		r.Body = io.NopCloser(rd)
		var req api.CallRequest
		if err := decodeBody(r, &req); err != nil || req.Tool != "echo" {
			b.Fatal(err)
		}
	}
}

// discardWriter is a ResponseWriter that keeps nothing, so that only
// writeCall's own work is measured.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(int)             {}

func BenchmarkWriteCall(b *testing.B) {
	resp := &api.CallResponse{Result: json.RawMessage(`{"content":[{"type":"text","text":"Echo: x"}]}`)}
	w := &discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		if err := writeCall(w, resp); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallRoundTrip is one whole call through a running daemon to the
// Go fixture's echo over a kept-alive connection, as the throughput harness
// sends it. The client and the daemon share the process, so the time and
// allocations are both sides' (the fixture runs apart).
func BenchmarkCallRoundTrip(b *testing.B) {
	for _, shape := range []struct{ name, body string }{
		{"object", `{"namespace":"fx","tool":"echo","arguments":{"text":"x"}}`},
		{"pairs", `{"namespace":"fx","tool":"echo","pairs":[{"key":"text","value":"x"}],"cwd":"/"}`},
	} {
		b.Run(shape.name, func(b *testing.B) {
			w := newWorld(b, `{"mcpServers":{"fx":{"command":"@FIXTURE@"}}}`)
			d := w.start()
			cfg := w.config()
			env, err := config.ReadEnvFile(w.paths.EnvFile(d.key))
			if err != nil {
				b.Fatal(err)
			}
			send := func() {
				req, _ := http.NewRequest(http.MethodPost, "http://mcpx"+api.PathCall, strings.NewReader(shape.body))
				req.Header.Set(api.HeaderConfigStamp, cfg.Stamp)
				req.Header.Set(api.HeaderEnvDigest, config.EnvDigest(env))
				resp, err := d.http.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || !bytes.Contains(data, []byte(`"text":"x"`)) {
					b.Fatalf("%d %s", resp.StatusCode, data)
				}
			}
			send() // the server starts and its tools are listed
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				send()
			}
		})
	}
}
