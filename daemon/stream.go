package daemon

import (
	"bytes"
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
// result or the error) is always written. The answer starts with its first
// frame: when that is the last one (no status frame was asked for and the
// server sent nothing), it goes out in one piece with its length, the way
// a plain answer does, instead of as a chunked stream.
type frameStream struct {
	w     http.ResponseWriter
	queue chan api.StreamFrame
	done  chan struct{}

	// mu guards closed: a notice may arrive (on the transport's reader)
	// while the handler closes the stream.
	mu     sync.RWMutex
	closed bool
}

// frameQueue is how many frames may wait for a slow client.
const frameQueue = 64

func startStream(w http.ResponseWriter) *frameStream {
	w.Header().Set("Content-Type", api.ContentTypeNDJSON)
	w.Header().Set("Cache-Control", "no-store")
	fs := &frameStream{w: w, queue: make(chan api.StreamFrame, frameQueue), done: make(chan struct{})}
	go fs.run()
	return fs
}

func (fs *frameStream) run() {
	defer close(fs.done)
	var line bytes.Buffer
	enc := newEncoder(&line)
	flusher, _ := fs.w.(http.Flusher)
	started, broken := false, false
	for f := range fs.queue {
		if broken {
			continue // the client went away: drain
		}
		line.Reset()
		if err := enc.Encode(f); err != nil {
			broken = true
			continue
		}
		last := f.Result != nil || f.Error != nil
		if !started {
			started = true
			if last {
				fs.w.Header().Set("Content-Length", strconv.Itoa(line.Len()))
			}
			fs.w.WriteHeader(http.StatusOK)
		}
		if _, err := fs.w.Write(line.Bytes()); err != nil {
			broken = true
			continue
		}
		if flusher != nil && !last {
			flusher.Flush()
		}
	}
	if !started {
		fs.w.WriteHeader(http.StatusOK) // closed without a frame
	}
}

// send queues f; must says it may not be dropped (status and the final
// frame).
func (fs *frameStream) send(f api.StreamFrame, must bool) {
	fs.mu.RLock()
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
	close(fs.queue)
	fs.mu.Unlock()
	<-fs.done
}
