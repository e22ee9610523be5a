package upstream

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/config"
)

// Servers that stop answering, and servers that exit after each answer.
//
// A hung instance is replaced. When a call is cut short (callTimeout, or
// the caller gave up) the server is sent notifications/cancelled, and then
// a ping. A server that reads the cancellation and answers the ping within
// Pools.hangGrace keeps its instance; one that does not (a single-threaded
// server stuck in the tool: most Node and Python servers run one request
// at a time) would never answer another call, so the instance takes no new
// calls while the ping is out, and is then stopped (its process group) and
// counted (Health.Replaced). A call arriving meanwhile waits for the
// verdict a little (an answering server's comes within its ping), then
// takes another instance, or a fresh one. Instances of the same server for
// other scopes are not touched.
//
// A request whose connection ended under it (the server exited) is sent
// again to a fresh instance when
//
//   - provably not a byte of it reached the server: it was never written
//     (the transport was already closed, or the write failed with EPIPE
//     because nobody read the pipe any more), or it is still whole in the
//     stdin pipe and nobody can read that pipe any more (every process
//     holding its read end has exited; countingWriter.unreadSince); or
//   - the server may have read it, but repeating it is harmless: the
//     caller says so (Caller.Idempotent: the tool is annotated
//     readOnlyHint or idempotentHint; lists and reads).
//
// Otherwise the call fails with an *ExitError whose NotResent says why.
//
// A stdio server whose instance exited by itself within exitWindow of its
// last output, having read nothing written to it after that output, has
// exited after answering (a one-shot server). From then on the pool gives
// it one instance per call, as scope "call" would (Health.ExitsAfterAnswer),
// so concurrent calls never share an instance that is about to go. A
// restart of the server forgets it.

// exitWindow is how soon after its last output an instance must exit to
// count as exiting after its answer (a server with an idle exit of its
// own waits much longer).
const exitWindow = 3 * time.Second

// maxResends bounds how often one request is sent again.
const maxResends = 2

// verdictWait is how long a call waits for the verdict on an instance whose
// last call was cut short before it starts another.
const verdictWait = 250 * time.Millisecond

// probePatience is one acquire's wait for probe verdicts: pl.changed until
// verdictWait has passed, then nothing (a fresh instance is started).
type probePatience struct {
	timer *time.Timer
	over  bool
}

func (w *probePatience) wait(pl *pool) <-chan struct{} {
	if w.over {
		return nil
	}
	if w.timer == nil {
		w.timer = time.NewTimer(verdictWait)
	}
	return pl.changed
}

// expired is ready once the wait is over (nil before any wait).
func (w *probePatience) expired() <-chan time.Time {
	if w.timer == nil || w.over {
		return nil
	}
	return w.timer.C
}

// instanceLife is what an instance's end is judged by. Guarded by Pools.mu.
type instanceLife struct {
	// probing: a ping is out after a cancelled call; no new calls meanwhile.
	probing bool
	// selfExited: the process had exited when the pool removed the
	// instance (it was not mcpx that stopped it).
	selfExited bool
	judged     bool
}

// poolHealth is what a pool learned about its server. Guarded by Pools.mu.
type poolHealth struct {
	replaced int  // hung instances stopped
	oneShot  bool // seen exiting after its answer
}

// Health is what the pool of one server has learned about it.
type Health struct {
	// Replaced is how many instances were stopped for not answering after
	// a call was cut short.
	Replaced int
	// ExitsAfterAnswer: an instance exited right after answering, so each
	// call gets its own instance (as scope "call").
	ExitsAfterAnswer bool
}

// Health reports what the pool for h has learned (zero for no pool).
func (p *Pools) Health(h config.ServerHash) Health {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pl := p.pools[h]; pl != nil {
		return Health{Replaced: pl.health.replaced, ExitsAfterAnswer: pl.health.oneShot}
	}
	return Health{}
}

// Replaced is how many hung instances were stopped, over every pool.
func (p *Pools) Replaced() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, pl := range p.pools {
		n += pl.health.replaced
	}
	return n
}

// effective is l with the scope a server's behaviour imposes: one
// instance per call for a server seen exiting after its answers.
func (p *Pools) effective(h config.ServerHash, l limits) limits {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pl := p.pools[h]; pl != nil && pl.health.oneShot {
		l.scope = config.ScopeCall
	}
	return l
}

// probeAfterCancel returns in, whose call was cut short, to its pool once
// the server has shown it still answers; an instance that does not answer
// a ping within the grace is stopped and counted (a 2026-07-28 server
// answers the removed ping with an error, which is an answer too). in stays
// busy, and takes no new call, until then. Only a process can hang that
// way: over HTTP every request is answered on its own, and a cut-short one
// keeps no later call waiting, so a network instance goes back at once.
func (p *Pools) probeAfterCancel(in *instance, l limits) {
	if l.scope == config.ScopeCall || in.conn.proc == nil { // stopped after every call anyway; or a network transport
		p.release(in, l, false)
		return
	}
	p.mu.Lock()
	in.life.probing = true
	p.stops.Add(1) // Close waits for the verdict
	p.mu.Unlock()
	go func() {
		defer p.stops.Done()
		ok := in.conn.answersWithin(p.hangGrace)
		p.mu.Lock()
		in.life.probing = false
		hung := !ok && !in.gone
		if pl := p.owner(in); hung && pl != nil {
			pl.health.replaced++
			p.logf("upstream: %s did not answer within %s after a call was cut short; stopping it (the next call starts a fresh instance)", pl.name, p.hangGrace)
		}
		p.mu.Unlock()
		p.release(in, l, hung)
	}()
}

// afterBroken returns in, whose connection ended under a request, to its
// pool (dropped), learns whether the server exits after each answer, and
// says whether the request may be sent again to a fresh instance — and if
// not, why (empty when no rule applies: a network transport).
func (p *Pools) afterBroken(h config.ServerHash, in *instance, l limits, te *errTransport, caller Caller, tool string) (resend bool, why string) {
	cn := in.conn
	// stdout ended: the process is on its way out; let it finish so the
	// pool can tell its own exit from a stop.
	cn.awaitExit(time.Second)
	p.release(in, l, true)
	p.mu.Lock()
	p.judgeExit(p.pools[h], in)
	p.mu.Unlock()
	var tl *MessageTooLargeError
	switch {
	case errors.As(te.err, &tl):
		return false, ""
	case te.notSent:
		return true, ""
	case cn.proc == nil:
		return false, ""
	case caller.Idempotent:
		return true, ""
	}
	return false, fmt.Sprintf("the request was not sent again: %s may have read it before its process ended, and %s is annotated neither readOnlyHint nor idempotentHint, so running it twice could repeat what it does", cn.server, tool)
}

// judgeExit marks pl as a one-shot server when in, just removed, exited by
// itself right after its last output having read nothing since. Called
// with p.mu held.
func (p *Pools) judgeExit(pl *pool, in *instance) {
	if pl == nil || in.conn == nil || !in.life.selfExited || in.life.judged {
		return
	}
	in.life.judged = true
	if pl.health.oneShot || !in.conn.exitedAfterOutput(exitWindow) {
		return
	}
	pl.health.oneShot = true
	p.logf("upstream: %s exits after each answer; it gets one instance per call from now on", pl.name)
}

// noteRemoved records, as the pool drops in, whether its process had
// already exited. Called with p.mu held.
func (in *instance) noteRemoved() {
	if in.conn != nil && in.conn.exited() {
		in.life.selfExited = true
	}
}

// answersWithin reports whether the server answers a ping within d (a
// JSON-RPC error is an answer).
func (cn *conn) answersWithin(d time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_, err := cn.request(ctx, string(mcp.MethodPing), nil)
	var re *RPCError
	return err == nil || errors.As(err, &re)
}

// exited reports whether a stdio server's process has exited and been
// reaped (false for network transports).
func (cn *conn) exited() bool {
	if cn.proc == nil || cn.proc.waited == nil {
		return false
	}
	select {
	case <-cn.proc.waited:
		return true
	default:
		return false
	}
}

// awaitExit waits, at most d, for a stdio server's process to exit.
func (cn *conn) awaitExit(d time.Duration) {
	if cn.proc == nil || cn.proc.waited == nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-cn.proc.waited:
	case <-t.C:
	}
}

// exitedAfterOutput reports whether a stdio server, now gone, last wrote
// within d and never read what was written to it after that.
func (cn *conn) exitedAfterOutput(d time.Duration) bool {
	if cn.pipes == nil {
		return false
	}
	at := cn.pipes.out.lastOut.Load()
	if at == 0 || time.Since(time.Unix(0, at)) > d {
		return false
	}
	return cn.pipes.in.unreadSince(cn.pipes.out.lastIn.Load())
}

// neverRead reports whether the bytes written to a stdio server's stdin
// since the count was before provably never reached it (unreadSince). A
// request fails this way when the server's stdout ended, usually because
// it is exiting: while its bytes are still in the pipe but a reader is
// left, it waits (briefly) for the reader to go before deciding.
func (cn *conn) neverRead(before int64) bool {
	if cn.pipes == nil {
		return false
	}
	in := cn.pipes.in
	deadline := time.Now().Add(time.Second)
	for {
		if in.unreadSince(before) {
			return true
		}
		if !in.stillInPipe(before) || time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}
