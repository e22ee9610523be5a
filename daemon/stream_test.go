package daemon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// streamCall posts a streamed call and returns its frames.
func (d *testDaemon) streamCall(req api.CallRequest) (string, []api.StreamFrame) {
	d.t.Helper()
	req.Stream = true
	b, _ := json.Marshal(req)
	resp, err := d.http.Post("http://mcpx"+api.PathCall, "application/json", bytes.NewReader(b))
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		d.t.Fatalf("streamed call answered %s", resp.Status)
	}
	var frames []api.StreamFrame
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var f api.StreamFrame
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			d.t.Fatalf("frame %q: %v", sc.Text(), err)
		}
		frames = append(frames, f)
	}
	return resp.Header.Get("Content-Type"), frames
}

func TestStreamedCall(t *testing.T) {
	_, d, _ := startFixture(t)
	// Cold: a status frame says the server starts, the last is the result.
	ct, frames := d.streamCall(api.CallRequest{Namespace: "fx", Tool: "echo", Pairs: []api.ArgPair{{Key: "text", Value: "hi"}}})
	if ct != api.ContentTypeNDJSON || len(frames) < 2 {
		t.Fatalf("content type %q, frames %+v", ct, frames)
	}
	if s := frames[0].Status; s == nil || s.State != api.CallStarting || s.Namespace != "fx" {
		t.Errorf("first frame %+v, want status starting", frames[0])
	}
	last := frames[len(frames)-1]
	if last.Result == nil || text(t, last.Result) != "hi" {
		t.Fatalf("last frame %+v, want the result", last)
	}
	for _, f := range frames[1 : len(frames)-1] {
		if f.Result != nil || f.Error != nil {
			t.Errorf("a result or error before the last frame: %+v", frames)
		}
	}
	// Warm: calling. A refusal (invalid arguments) is the error frame.
	_, frames = d.streamCall(api.CallRequest{Namespace: "fx", Tool: "echo", Pairs: []api.ArgPair{{Key: "txt", Value: "hi"}}})
	if s := frames[0].Status; s == nil || s.State != api.CallCalling {
		t.Errorf("first frame %+v, want status calling", frames[0])
	}
	last = frames[len(frames)-1]
	if last.Error == nil || last.Error.Code != api.CodeInvalidArguments || last.Error.Suggestion != "text" {
		t.Fatalf("last frame %+v, want invalid_arguments suggesting text", last)
	}
}

// NoStatus (mcpx serve): no status frame, and a call during which the
// server sends nothing is answered in one piece, with its length, instead
// of a chunked stream.
func TestStreamedCallWithoutStatus(t *testing.T) {
	_, d, _ := startFixture(t)
	b, _ := json.Marshal(api.CallRequest{Namespace: "fx", Tool: "echo", Pairs: []api.ArgPair{{Key: "text", Value: "hi"}},
		Stream: true, NoStatus: true})
	resp, err := d.http.Post("http://mcpx"+api.PathCall, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != api.ContentTypeNDJSON || resp.ContentLength != int64(len(body)) ||
		len(resp.TransferEncoding) != 0 {
		t.Fatalf("answer %s, type %q, length %d of %d, transfer %v", resp.Status, resp.Header.Get("Content-Type"), resp.ContentLength,
			len(body), resp.TransferEncoding)
	}
	var f api.StreamFrame
	if err := json.Unmarshal(body, &f); err != nil || f.Result == nil || text(t, f.Result) != "hi" || bytes.Count(body, []byte("\n")) != 1 {
		t.Fatalf("body %q, want the result frame alone", body)
	}
	// Frames the server sends still stream, without a status frame.
	_, frames := d.streamCall(api.CallRequest{Namespace: "fx", Tool: "log", Pairs: []api.ArgPair{{Key: "text", Value: "a line"}}, NoStatus: true})
	for _, f := range frames {
		if f.Status != nil {
			t.Fatalf("a status frame with NoStatus: %+v", frames)
		}
	}
	if len(frames) < 2 || frames[len(frames)-1].Result == nil {
		t.Fatalf("frames %+v, want the log line and the result", frames)
	}
}
