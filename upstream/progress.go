package upstream

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
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
//
// Progress names its call (the progressToken). A log line names none, so it
// goes to every watching call in flight on the connection it came on: never
// to a call on another instance of the same server, which may run for
// another session or directory (scope).
type observers struct {
	mu      sync.Mutex
	next    atomic.Int64
	byToken map[string]func(Notice)
	byConn  map[*conn]map[string]func(Notice)
}

// add registers observe under a new progress token and returns the token
// and the function that unregisters it.
func (o *observers) add(observe func(Notice)) (string, func()) {
	token := fmt.Sprintf("mcpx-%d", o.next.Add(1))
	o.mu.Lock()
	if o.byToken == nil {
		o.byToken = map[string]func(Notice){}
	}
	o.byToken[token] = observe
	o.mu.Unlock()
	return token, func() {
		o.mu.Lock()
		delete(o.byToken, token)
		o.mu.Unlock()
	}
}

// listen lets the observer of token hear cn's log lines until the
// returned function is called.
func (o *observers) listen(cn *conn, token string) func() {
	o.mu.Lock()
	defer o.mu.Unlock()
	observe := o.byToken[token]
	if observe == nil {
		return func() {}
	}
	if o.byConn == nil {
		o.byConn = map[*conn]map[string]func(Notice){}
	}
	if o.byConn[cn] == nil {
		o.byConn[cn] = map[string]func(Notice){}
	}
	o.byConn[cn][token] = observe
	return func() {
		o.mu.Lock()
		delete(o.byConn[cn], token)
		if len(o.byConn[cn]) == 0 {
			delete(o.byConn, cn)
		}
		o.mu.Unlock()
	}
}

// deliver hands a notification that arrived on cn to its observers:
// progress to the call whose token it names, a log line to every call
// listening on cn. Anything else is ignored. It reports whether n was one
// of these.
func (o *observers) deliver(cn *conn, n mcp.JSONRPCNotification) bool {
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
		for _, observe := range o.byConn[cn] {
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
// progress notifications for this call and the log messages its
// connection carries while the call runs. observe is called from the
// transport's reader: it must not block.
func (p *Pools) CallObserved(ctx context.Context, spec Spec, caller Caller, tool string, args json.RawMessage, observe func(Notice)) (json.RawMessage, error) {
	return p.CallWith(ctx, spec, caller, tool, args, Hooks{Observe: observe})
}
