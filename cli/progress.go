package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// progressView shows a streamed call's progress on stderr. On a terminal
// it keeps one line redrawn in place: a bar with the server's message, or
// "starting NS…" when a cold start takes over startingAfter; server log
// lines are printed above it. Otherwise (--progress without a terminal) it
// prints one line per update. Safe for concurrent use.
type progressView struct {
	w   io.Writer
	tty bool
	ns  string

	mu      sync.Mutex
	line    string // what the in-place line shows ("" = nothing drawn)
	timer   *time.Timer
	stopped bool
}

// startingAfter is how long a cold start may take before "starting NS…"
// appears.
const startingAfter = 300 * time.Millisecond

// barWidth is the number of cells of the progress bar.
const barWidth = 24

func newProgressView(w io.Writer, tty bool, ns string) *progressView {
	return &progressView{w: w, tty: tty, ns: ns}
}

// frame shows one frame of the stream.
func (p *progressView) frame(f api.StreamFrame) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	switch {
	case f.Status != nil:
		if f.Status.State == api.CallStarting && p.tty && p.timer == nil {
			p.timer = time.AfterFunc(startingAfter, p.showStarting)
		}
	case f.Progress != nil:
		p.cancelStarting()
		if p.tty {
			p.draw(bar(f.Progress))
		} else {
			fmt.Fprintf(p.w, "mcpx: %s progress %s\n", p.ns, progressText(f.Progress))
		}
	case f.Log != nil:
		p.cancelStarting()
		msg := fmt.Sprintf("mcpx: %s log %s", p.ns, logText(f.Log))
		if p.tty {
			keep := p.line
			p.draw("")
			fmt.Fprintln(p.w, msg)
			p.draw(keep)
		} else {
			fmt.Fprintln(p.w, msg)
		}
	}
}

func (p *progressView) showStarting() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stopped && p.timer != nil && p.line == "" {
		p.draw(fmt.Sprintf("starting %s…", p.ns))
	}
}

// cancelStarting stops the "starting" timer; the caller holds mu.
func (p *progressView) cancelStarting() {
	if p.timer != nil {
		p.timer.Stop()
	}
}

// draw replaces the in-place line with s (clearing it for ""); the caller
// holds mu.
func (p *progressView) draw(s string) {
	if !p.tty {
		return
	}
	if s == "" && p.line == "" {
		return
	}
	fmt.Fprint(p.w, "\r\x1b[K"+s)
	p.line = s
}

// clear takes the line and a pending "starting…" off the terminal, for a
// question: the next frame draws again.
func (p *progressView) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cancelStarting()
	p.timer = nil
	p.draw("")
}

// done clears the line: the result follows on stdout.
func (p *progressView) done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	p.cancelStarting()
	p.draw("")
}

// bar renders "[#######.........]  40% message" (or the count when the
// total is unknown).
func bar(pr *api.Progress) string {
	msg := api.OneLine(pr.Message)
	if pr.Total <= 0 {
		return strings.TrimSpace(fmt.Sprintf("[%s] %s %s", strings.Repeat("?", 3), num(pr.Progress), msg))
	}
	frac := min(max(pr.Progress/pr.Total, 0), 1)
	filled := int(frac*barWidth + 0.5)
	return strings.TrimSpace(fmt.Sprintf("[%s%s] %3.0f%% %s", strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled), frac*100, msg))
}

func progressText(pr *api.Progress) string {
	s := num(pr.Progress)
	if pr.Total > 0 {
		s += "/" + num(pr.Total)
	}
	if pr.Message != "" {
		s += " " + api.OneLine(pr.Message)
	}
	return s
}

func logText(l *api.LogMessage) string {
	var data string
	var str string
	if json.Unmarshal(l.Data, &str) == nil {
		data = str
	} else {
		data = string(l.Data)
	}
	out := l.Level
	if l.Logger != "" {
		out += " " + l.Logger
	}
	return strings.TrimSpace(out + ": " + api.OneLine(data))
}

func num(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%g", f)
}
