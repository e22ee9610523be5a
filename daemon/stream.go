package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/upstream"
)

// frameStream writes a streamed call answer: one api.StreamFrame per line
// (application/x-ndjson), flushed as it goes. Frames are queued so the
// server's notifications, which arrive on its transport's reader, never
// wait for a slow client: when the queue is full, progress and log frames
// are dropped (the next one says where the call is); the last frame (the
// result or the error) is always written.
//
// The answer starts with its first frame, and the goroutine that writes
// queued frames with the first frame that is not the last: when the last
// frame comes first (no status frame was asked for and the server sent
// nothing), the handler writes it itself, in one piece with its length,
// the way a plain answer goes, instead of a chunked stream.
type frameStream struct {
	w     http.ResponseWriter
	queue chan api.StreamFrame
	done  chan struct{}

	// mu guards closed and running: a notice may arrive (on the
	// transport's reader) while the handler sends the last frame or
	// closes the stream.
	mu      sync.RWMutex
	closed  bool
	running bool // run was started
}

// streamAnswer answers a request that asked for a streamed answer (a
// call, a read, a prompt of server ns): the answer starts now, saying
// whether the server has to start (unless noStatus), run does the work
// with the stream receiving what the server sends meanwhile, and its
// result or error is the last frame.
func (d *daemon) streamAnswer(w http.ResponseWriter, st *state, ns string, noStatus bool, run func(*frameStream) (*api.CallResponse, error)) error {
	state := api.CallCalling
	if d.pools.Live(st.hashes[ns]) == 0 {
		state = api.CallStarting
	}
	stream := startStream(w)
	defer stream.close()
	if !noStatus {
		stream.send(api.StreamFrame{Status: &api.CallStatus{State: state, Namespace: ns}}, true)
	}
	resp, err := run(stream)
	if err != nil {
		var he *httpError
		if !errors.As(err, &he) {
			he = mapError(err)
		}
		if he.status >= 500 {
			d.log.Printf("%s: %s", he.body.Code, he.body.Error)
		}
		stream.send(api.StreamFrame{Error: &he.body}, true)
		return nil
	}
	stream.send(api.StreamFrame{Result: resp}, true)
	return nil
}

// frameQueue is how many frames may wait for a slow client.
const frameQueue = 64

func startStream(w http.ResponseWriter) *frameStream {
	w.Header().Set("Content-Type", api.ContentTypeNDJSON)
	w.Header().Set("Cache-Control", "no-store")
	return &frameStream{w: w, queue: make(chan api.StreamFrame, frameQueue), done: make(chan struct{})}
}

// run writes the queued frames until the queue is closed.
func (fs *frameStream) run() {
	defer close(fs.done)
	var line bytes.Buffer
	enc := newEncoder(&line)
	flusher, _ := fs.w.(http.Flusher)
	broken := false
	fs.w.WriteHeader(http.StatusOK)
	for f := range fs.queue {
		if broken {
			continue // the client went away: drain
		}
		line.Reset()
		if err := encodeFrame(&line, enc, f); err != nil {
			broken = true
			continue
		}
		if _, err := fs.w.Write(line.Bytes()); err != nil {
			broken = true
			continue
		}
		if flusher != nil && f.Result == nil && f.Error == nil {
			flusher.Flush() // the last frame goes with the end of the answer
		}
	}
}

// send queues f; must says it may not be dropped (status and the final
// frame).
func (fs *frameStream) send(f api.StreamFrame, must bool) {
	if f.Result != nil || f.Error != nil {
		fs.finish(f)
		return
	}
	fs.mu.RLock()
	if !fs.running && !fs.closed {
		fs.mu.RUnlock()
		fs.mu.Lock()
		if !fs.running && !fs.closed {
			fs.running = true
			go fs.run()
		}
		fs.mu.Unlock()
		fs.mu.RLock()
	}
	defer fs.mu.RUnlock()
	if fs.closed {
		return
	}
	if must {
		fs.queue <- f
		return
	}
	select {
	case fs.queue <- f:
	default:
	}
}

// finish sends the last frame and closes the stream: queued behind the
// frames before it, or, when there were none, written here at once with
// the answer's length.
func (fs *frameStream) finish(f api.StreamFrame) {
	fs.mu.Lock()
	if fs.closed {
		fs.mu.Unlock()
		return
	}
	if fs.running {
		fs.mu.Unlock()
		fs.mu.RLock()
		fs.queue <- f
		fs.mu.RUnlock()
		fs.close()
		return
	}
	fs.closed = true
	fs.mu.Unlock()
	var line bytes.Buffer
	if err := encodeFrame(&line, nil, f); err != nil {
		fs.w.WriteHeader(http.StatusOK)
		return
	}
	fs.w.Header().Set("Content-Length", strconv.Itoa(line.Len()))
	fs.w.WriteHeader(http.StatusOK)
	_, _ = fs.w.Write(line.Bytes())
}

// observe turns a server's notice into a frame.
func (fs *frameStream) observe(n upstream.Notice) {
	switch n.Kind {
	case upstream.NoticeProgress:
		fs.send(api.StreamFrame{Progress: &api.Progress{Progress: n.Progress, Total: n.Total, Message: n.Message}}, false)
	case upstream.NoticeLog:
		fs.send(api.StreamFrame{Log: &api.LogMessage{Level: n.Level, Logger: n.Logger, Data: n.Data}}, false)
	}
}

// close ends the stream once every queued frame is written. Notices that
// arrive after it (a server still sending for a finished call) are dropped.
func (fs *frameStream) close() {
	fs.mu.Lock()
	if fs.closed {
		fs.mu.Unlock()
		return
	}
	fs.closed = true
	running := fs.running
	if running {
		close(fs.queue)
	}
	fs.mu.Unlock()
	if running {
		<-fs.done
	} else {
		fs.w.WriteHeader(http.StatusOK) // closed without a frame
	}
}

// encodeFrame writes f as one line into line. A result frame whose result
// is held as the server's bytes (no blobs, no task) is written around
// them, as writeCall writes a plain answer: encoding/json would decode it
// once to check it and again to compact it. The line must stay one line
// (NDJSON), so a result that spans lines (a network server's pretty
// printing) is compacted. enc, when not nil, is an encoder into line.
func encodeFrame(line *bytes.Buffer, enc *json.Encoder, f api.StreamFrame) error {
	if r := f.Result; r != nil && len(r.Blobs) == 0 && r.Task == nil && len(r.Result) > 0 {
		line.WriteString(`{"result":{"result":`)
		if bytes.ContainsAny(r.Result, "\r\n") {
			if err := json.Compact(line, r.Result); err != nil {
				return err
			}
		} else {
			line.Write(r.Result)
		}
		line.WriteString(`,"isError":` + strconv.FormatBool(r.IsError) + "}}\n")
		return nil
	}
	if enc == nil {
		enc = newEncoder(line)
	}
	return enc.Encode(f)
}
