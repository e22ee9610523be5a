package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcpx-dev/mcpx/config"
)

// Notice is something a server said about a call while it runs: a
// notifications/progress for the call's progressToken, or a
// notifications/message (a log line) from the server while the call runs.
type Notice struct {
	// Progress (Kind "progress"): how far, out of Total (0: unknown),
	// with the server's message.
	Kind     string
	Progress float64
	Total    float64
	Message  string
	// Log (Kind "log"): level, logger and data as the server sent them.
	Level  string
	Logger string
	Data   json.RawMessage
}

// Notice kinds.
const (
	NoticeProgress = "progress"
	NoticeLog      = "log"
)

// observers routes notices to the calls watching them. The zero value is
// ready; safe for concurrent use.
type observers struct {
	mu      sync.Mutex
	next    atomic.Int64
	byToken map[string]func(Notice)
	byHash  map[config.ServerHash]map[string]func(Notice)
}

// add registers observe for a call on server h and returns its progress
// token and the function that unregisters it.
func (o *observers) add(h config.ServerHash, observe func(Notice)) (string, func()) {
	token := fmt.Sprintf("mcpx-%d", o.next.Add(1))
	o.mu.Lock()
	if o.byToken == nil {
		o.byToken = map[string]func(Notice){}
		o.byHash = map[config.ServerHash]map[string]func(Notice){}
	}
	o.byToken[token] = observe
	if o.byHash[h] == nil {
		o.byHash[h] = map[string]func(Notice){}
	}
	o.byHash[h][token] = observe
	o.mu.Unlock()
	return token, func() {
		o.mu.Lock()
		delete(o.byToken, token)
		delete(o.byHash[h], token)
		if len(o.byHash[h]) == 0 {
			delete(o.byHash, h)
		}
		o.mu.Unlock()
	}
}

// deliver hands a notification of server h to its observers: progress to
// the call whose token it names, log messages to every call on h in
// flight. Anything else is ignored. It reports whether n was one of
// these.
func (o *observers) deliver(h config.ServerHash, n mcp.JSONRPCNotification) bool {
	f := n.Params.AdditionalFields
	switch n.Method {
	case string(mcp.MethodNotificationProgress):
		token := fmt.Sprint(f["progressToken"])
		o.mu.Lock()
		observe := o.byToken[token]
		o.mu.Unlock()
		if observe != nil {
			nt := Notice{Kind: NoticeProgress}
			nt.Progress, _ = f["progress"].(float64)
			nt.Total, _ = f["total"].(float64)
			nt.Message, _ = f["message"].(string)
			observe(nt)
		}
		return true
	case string(mcp.MethodNotificationMessage):
		nt := Notice{Kind: NoticeLog}
		nt.Level, _ = f["level"].(string)
		nt.Logger, _ = f["logger"].(string)
		nt.Data, _ = json.Marshal(f["data"])
		o.mu.Lock()
		var watchers []func(Notice)
		for _, observe := range o.byHash[h] {
			watchers = append(watchers, observe)
		}
		o.mu.Unlock()
		for _, observe := range watchers {
			observe(nt)
		}
		return true
	}
	return false
}

// CallObserved is Call with a progressToken: observe receives the server's
// progress notifications for this call and its log messages while the call
// runs. observe is called from the transport's reader: it must not block.
func (p *Pools) CallObserved(ctx context.Context, spec Spec, caller Caller, tool string, args json.RawMessage, observe func(Notice)) (json.RawMessage, error) {
	if observe == nil {
		return p.Call(ctx, spec, caller, tool, args)
	}
	token, done := p.obs.add(spec.Hash, observe)
	defer done()
	return p.callTool(ctx, spec, caller, tool, args, map[string]any{"progressToken": token})
}
