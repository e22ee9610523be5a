package daemon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/upstream"
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
}

// A stream whose first frame is not the last streams (chunked, flushed as
// it goes); one whose first frame is the result is written in one piece.
func TestFrameStreamStartsWithItsFirstFrame(t *testing.T) {
	w := httptest.NewRecorder()
	fs := startStream(w)
	fs.observe(upstream.Notice{Kind: upstream.NoticeProgress, Progress: 1, Total: 2})
	fs.send(api.StreamFrame{Result: &api.CallResponse{Result: json.RawMessage(`{"content":[]}`)}}, true)
	fs.close()
	lines := strings.Split(strings.TrimSpace(w.Body.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"progress":`) || !strings.HasPrefix(lines[1], `{"result":`) ||
		w.Header().Get("Content-Length") != "" || !w.Flushed {
		t.Fatalf("streamed: %q, length %q, flushed %v", w.Body.String(), w.Header().Get("Content-Length"), w.Flushed)
	}

	w = httptest.NewRecorder()
	fs = startStream(w)
	fs.send(api.StreamFrame{Result: &api.CallResponse{Result: json.RawMessage(`{"content":[]}`)}}, true)
	fs.observe(upstream.Notice{Kind: upstream.NoticeProgress, Progress: 1}) // after the end: dropped
	fs.close()
	if body := w.Body.String(); !strings.HasPrefix(body, `{"result":`) || strings.Count(body, "\n") != 1 ||
		w.Header().Get("Content-Length") != strconv.Itoa(len(body)) || w.Flushed {
		t.Fatalf("one piece: %q, length %q, flushed %v", body, w.Header().Get("Content-Length"), w.Flushed)
	}
}
