package serve

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/service"
)

// mcpxServer is one serve run: the daemon client of the directory
// (replaced when the config changes), the catalog last served and the MCP
// servers hosts reach (front.go): the aggregate and, over HTTP, one per
// namespace.
type mcpxServer struct {
	opts    Options
	paths   config.Paths
	schemas *cache.Schemas
	mgr     *service.Lazy

	mu        sync.Mutex
	c         *client.Client
	cat       *catalog
	aggregate *front            // nil on stdio with a single --ns
	single    string            // the namespace served alone on stdio (--ns NS)
	fronts    map[string]*front // each namespace's own (HTTP; the single one on stdio)
	refreshed map[string]bool   // serverHash whose refresh serve already asked for
	posts     sessionPosts      // HTTP sessions' requests in flight (subscribe.go)
	bg        sync.WaitGroup
}

func (s *mcpxServer) client() *client.Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c
}

func (s *mcpxServer) cfg() *config.Config { return s.client().Config() }

func (s *mcpxServer) catalog() *catalog {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cat
}

// reload resolves the directory's configuration again. A config that no
// longer parses keeps the last good one (and is reported once per change by
// the daemon's own answers).
func (s *mcpxServer) reload(ctx context.Context) error {
	c, err := client.New(client.Options{
		Dir:        s.opts.Dir,
		ConfigFile: s.opts.ConfigFile,
		Getenv:     s.opts.Getenv,
		Manager:    s.mgr,
		Paths:      &s.paths,
		KeepAlive:  true,
	})
	if err != nil {
		if s.client() == nil {
			return err
		}
		s.opts.Log.Printf("config: %v (still serving the last good one)", err)
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Keep the client (and its connections to the daemon) while the
	// config means the same servers.
	if s.c == nil || s.c.Key() != c.Key() || s.c.Config().SchemaHash() != c.Config().SchemaHash() {
		if s.c != nil {
			s.c.CloseIdle()
		}
		s.c = c
	}
	return nil
}

// watch re-reads the config every Poll until ctx ends, and rebuilds the
// catalog when a snapshot changed (at once, where the schema cache is
// watched) or the config now means other servers; where the cache cannot
// be watched, every Poll.
func (s *mcpxServer) watch(ctx context.Context) {
	_ = s.schemas.Watch() // where it cannot, Watching is false: every Poll
	t := time.NewTicker(s.opts.Poll)
	defer t.Stop()
	defer s.bg.Wait()
	for {
		changed := false
		select {
		case <-ctx.Done():
			return
		case <-s.schemas.Changed():
			changed = true
		case <-t.C:
		}
		before := s.client()
		if err := s.reload(ctx); err != nil {
			s.opts.Log.Printf("config: %v", err)
			continue
		}
		if changed || !s.schemas.Watching() || s.client() != before {
			s.sync(ctx, false)
		}
	}
}

// sync rebuilds the catalog and hands every front what changed (hosts get
// list_changed for every list that changed, and for all three when the
// servers behind a front were redefined); over HTTP a namespace that
// appeared gets its front and one that went away loses it. Namespaces
// never read are refreshed through the daemon in the background (that
// starts them once, like `mcpx refresh`); their lists arrive with the next
// sync.
func (s *mcpxServer) sync(ctx context.Context, first bool) {
	cfg := s.cfg()
	s.mu.Lock()
	prev := s.cat
	s.mu.Unlock()
	cat := build(cfg, s.schemas, s.opts.Namespaces, prev)

	s.mu.Lock()
	s.cat = cat
	if s.refreshed == nil {
		s.refreshed = map[string]bool{}
		s.fronts = map[string]*front{}
	}
	var refresh []string
	for _, ns := range cat.unread {
		h := string(cfg.Servers[ns].Hash())
		if !s.refreshed[h] {
			s.refreshed[h] = true
			refresh = append(refresh, ns)
		}
	}
	// The fronts to update: the aggregate, and one per served namespace
	// (HTTP), or the single one (stdio).
	type job struct {
		f     *front
		moved bool
	}
	var jobs []job
	if first && s.single == "" {
		s.aggregate = s.newFront("", cat)
	}
	if s.aggregate != nil {
		jobs = append(jobs, job{s.aggregate, prev != nil && prev.schemaHash != cat.schemaHash})
	}
	var names []string
	switch {
	case s.single != "":
		names = []string{s.single}
	case s.opts.HTTP != "":
		names = cat.served
	}
	keep := map[string]bool{}
	for _, ns := range names {
		keep[ns] = true
		f := s.fronts[ns]
		if f == nil {
			f = s.newFront(ns, cat)
			s.fronts[ns] = f
		}
		var h config.ServerHash
		if def := cfg.Servers[ns]; def != nil {
			h = def.Hash() // (the single namespace may have left the config)
		}
		jobs = append(jobs, job{f, f.hash != "" && f.hash != h})
		f.hash = h
	}
	for ns := range s.fronts {
		if !keep[ns] {
			delete(s.fronts, ns)
		}
	}
	s.mu.Unlock()

	for _, j := range jobs {
		j.f.update(cat, j.moved)
	}
	for _, ns := range refresh {
		c := s.client()
		s.bg.Add(1)
		go func() {
			defer s.bg.Done()
			rctx, cancel := context.WithTimeout(ctx, config.DefaultStartTimeout+config.DefaultCallTimeout)
			defer cancel()
			if _, err := c.Refresh(rctx, ns); err != nil {
				s.opts.Log.Printf("refresh %s: %v", ns, err)
			}
		}()
	}
}

// frontOf is the front that serves ns ("": the aggregate), or nil.
func (s *mcpxServer) frontOf(ns string) *front {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ns == "" {
		return s.aggregate
	}
	return s.fronts[ns]
}

// mcpTool turns a cached tool definition into the tool hosts see.
func mcpTool(e entry) (mcp.Tool, error) {
	var t mcp.Tool
	if err := json.Unmarshal(e.def, &t); err != nil {
		return mcp.Tool{}, fmt.Errorf("read definition: %w", err)
	}
	var raw struct {
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(e.def, &raw); err != nil {
		return mcp.Tool{}, fmt.Errorf("read definition: %w", err)
	}
	t.Name = e.served
	t.InputSchema = mcp.ToolInputSchema{}
	t.RawInputSchema = raw.InputSchema
	if len(t.RawInputSchema) == 0 || string(t.RawInputSchema) == "null" {
		t.RawInputSchema = json.RawMessage(`{"type":"object"}`)
	}
	t.OutputSchema = mcp.ToolOutputSchema{}
	t.RawOutputSchema = nil
	if len(raw.OutputSchema) > 0 && string(raw.OutputSchema) != "null" {
		t.RawOutputSchema = raw.OutputSchema
	}
	t.Execution = nil
	// mcp-go refuses (panics on) a tool whose x-mcp-header annotations
	// break SEP-2243; such a tool is left out rather than taking serve down.
	if err := mcp.ValidateParamHeaderAnnotations(&t); err != nil {
		return mcp.Tool{}, err
	}
	return t, nil
}

// sessionOf names the host session for servers with scope "session".
func sessionOf(ctx context.Context) string {
	if cs := server.ClientSessionFromContext(ctx); cs != nil {
		return "serve-" + cs.SessionID()
	}
	return ""
}

// call runs ns.tool through the daemon. What the daemon refuses or fails
// at comes back as an isError result naming the reason; a destructive tool
// is confirmed through elicitation when the host can be asked.
//
// Any other call is streamed from the daemon: the server's progress reaches
// a host that asked for it (a progressToken) as notifications/progress under
// the host's token, and its log messages while the call runs reach the host
// as notifications/message (at the level the host set). A tool that runs as
// a task (taskSupport "required") is followed here when the host asked for
// progress: each change of the task's status reaches the host as
// notifications/progress with the status message.
//
// A server's questions (elicitation) reach a host that can answer them
// (relay.go); mrt is the host's answer to the last one (2026-07-28).
func (f *front) call(ctx context.Context, e entry, raw json.RawMessage, token mcp.ProgressToken, mrt mcp.MultiRoundTripParams) (*mcp.CallToolResult, error) {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	s := f.s
	c := s.client()
	ns, tool := e.ns, e.name
	req := api.CallRequest{Namespace: ns, Tool: tool, Arguments: raw, Session: sessionOf(ctx), Cwd: s.opts.Dir, NoStatus: true,
		Detach: token != nil && taskSupport(e.def) == "required"}
	name := ns + "." + tool
	fw := f.newForwarder(ctx, ns, token)
	defer fw.flush()
	host := hostAnswers(ctx)
	modern, elicits, asks := host.modern, host.elicits, host.asks()
	var confirmAnswer *mcp.InputResponse // a 2026-07-28 host's answer to confirmRound
	if a, ok := mrt.InputResponses[confirmKey]; ok && modern && elicits {
		confirmAnswer = &a
	}
	var rs relaySettings
	var hooks client.StreamHooks
	if !req.Detach {
		rs, hooks = f.relayHooks(host, fw)
	}
	req.Elicit, req.Sample, req.Roots, req.Relay = rs.elicit, rs.sample, rs.roots, !req.Detach
	for {
		var resp *api.CallResponse
		var err error
		switch {
		case req.Detach:
			resp, err = c.Call(ctx, req)
		case modern && asks:
			var ask *mcp.MultiRoundTripResult
			r := req
			resp, ask, err = f.rounds(ctx, job{name, func(ctx context.Context, h client.StreamHooks) (*api.CallResponse, error) {
				return c.CallStreamWith(ctx, r, h)
			}}, fw, mrt)
			if errors.Is(err, ErrUnknownRequestState) || errors.Is(err, ErrBadInputResponse) {
				return nil, err
			}
			if ask != nil {
				return &mcp.CallToolResult{Result: mcp.Result{ResultType: mcp.ResultTypeInputRequired}, MultiRoundTripResult: *ask}, nil
			}
			mrt = mcp.MultiRoundTripParams{} // (a confirmation starts anew)
		default:
			resp, err = c.CallStreamWith(ctx, req, hooks)
		}
		var ae *client.APIError
		if errors.As(err, &ae) && ae.Code() == api.CodeConfirmation && !req.Confirmed {
			if res := f.confirmCall(ctx, name, ae.Error(), modern && elicits, confirmAnswer); res != nil {
				return res, nil // the host is asked, or said no
			}
			req.Confirmed = true
			continue
		}
		if err == nil && resp.Task != nil && !resp.Task.Done && isNull(resp.Result) {
			resp, err = f.followTask(ctx, c, *resp.Task, token)
		}
		if err != nil {
			// The server's own JSON-RPC error reaches the host as that
			// error; mcpx's failures are isError results.
			if re := relayed(ctx, err, nil); re != nil {
				return nil, re
			}
			return mcp.NewToolResultError(fmt.Sprintf("mcpx could not call %s: %v", name, err)), nil
		}
		prefix := ""
		if f.ns == "" {
			prefix = ns
		}
		return toolResult(resp, prefix), nil
	}
}

// newForwarder is the forwarder of a call's notifications to the host.
func (f *front) newForwarder(ctx context.Context, ns string, token mcp.ProgressToken) *forwarder {
	fw := &forwarder{srv: f.mcp, ctx: ctx, token: token}
	fw.write, _ = ctx.Value(directWriteKey{}).(func([]byte) error)
	if fw.write == nil {
		fw.write = directWriter(ctx)
	}
	if f.ns == "" {
		fw.logger = ns // the host sees one server where there are many
	}
	return fw
}

// relaySettings are what a relayed request tells the daemon the host
// answers (the Elicit, Sample and Roots of a call, a read or a prompt; all
// three are marked Relay): a 2026-07-28 server is told so.
type relaySettings struct {
	elicit        string
	sample, roots bool
}

// relayHooks returns what the host answers and the hooks that ask it (a
// 2025-11-25 host, on its session): the server asks the host through serve.
func (f *front) relayHooks(host hostCaps, fw *forwarder) (relaySettings, client.StreamHooks) {
	hooks := client.StreamHooks{Frame: fw.frame}
	var rs relaySettings
	if host.elicits {
		rs.elicit = api.ElicitAsk
		hooks.Elicit = f.askSession
	}
	rs.sample, rs.roots = host.samples, host.roots
	if rs.sample || rs.roots {
		hooks.Request = f.requestSession
	}
	return rs, hooks
}

// confirmCall asks the host whether to run the destructive tool name: a
// 2026-07-28 host that elicits (byRound) with an input_required round
// (answer: its answer to it, if it sent one), any other through its
// session. It returns nil when the call may run; else the result to give
// the host: the round's question, or why the call was not run.
func (f *front) confirmCall(ctx context.Context, name, reason string, byRound bool, answer *mcp.InputResponse) *mcp.CallToolResult {
	var ok bool
	var why string
	if byRound {
		var ask *mcp.CallToolResult
		if ok, why, ask = confirmRound(name, reason, answer); ask != nil {
			return ask
		}
	} else {
		ok, why = f.confirm(ctx, name, reason)
	}
	if !ok {
		return mcp.NewToolResultError(why)
	}
	return nil
}

// followTask reports a task's status changes to the host as progress until
// it ends, then collects its result. The host giving up cancels the task.
func (f *front) followTask(ctx context.Context, c *client.Client, t api.Task, token mcp.ProgressToken) (*api.CallResponse, error) {
	step, last := 0, ""
	report := func(t api.Task) {
		msg := t.Status
		if t.StatusMessage != "" {
			msg = t.StatusMessage
		}
		if msg == last {
			return
		}
		last = msg
		step++
		_ = f.mcp.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
			"progressToken": token, "progress": step, "message": msg,
		})
	}
	return c.FollowTask(ctx, t, 250*time.Millisecond, report)
}

func isNull(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// progressToken is the host's progress token of a call (nil: none).
func progressToken(req mcp.CallToolRequest) mcp.ProgressToken {
	if req.Params.Meta == nil {
		return nil
	}
	return req.Params.Meta.ProgressToken
}

// taskSupport reads execution.taskSupport of a tool definition.
func taskSupport(def json.RawMessage) string {
	var d struct {
		Execution struct {
			TaskSupport string `json:"taskSupport"`
		} `json:"execution"`
	}
	_ = json.Unmarshal(def, &d)
	return d.Execution.TaskSupport
}

// confirm asks the host's user to confirm a destructive call. It reports
// false with the reason when the host cannot be asked or the user said no.
func (f *front) confirm(ctx context.Context, name, reason string) (bool, string) {
	cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo)
	if !ok || cs.GetClientCapabilities().Elicitation == nil {
		return false, fmt.Sprintf("%s was not run: %s. This host cannot ask you to confirm (it does not support MCP elicitation); call it with `mcpx call %s --yes` in a terminal, or set the server's policy.destructive to allow.", name, reason, name)
	}
	res, err := f.mcp.RequestElicitation(ctx, mcp.ElicitationRequest{Params: confirmParams(name, reason)})
	if err != nil {
		return false, fmt.Sprintf("%s was not run: %s, and asking for confirmation failed: %v", name, reason, err)
	}
	return confirmed(name, res)
}

// confirmParams is the question that confirms a destructive call.
func confirmParams(name, reason string) mcp.ElicitationParams {
	return mcp.ElicitationParams{
		Message: fmt.Sprintf("%s is destructive. Run it?", name),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"confirm": map[string]any{"type": "boolean", "title": "Run " + name, "description": reason},
			},
			"required": []string{"confirm"},
		},
	}
}

// confirmed reads the user's answer to confirmParams: only an accept with
// confirm: true runs the call.
func confirmed(name string, res *mcp.ElicitationResult) (bool, string) {
	if res.Action != mcp.ElicitationResponseActionAccept {
		return false, fmt.Sprintf("%s was not run: the user answered %s.", name, res.Action)
	}
	if m, ok := res.Content.(map[string]any); !ok || m["confirm"] != true {
		return false, fmt.Sprintf("%s was not run: the user did not confirm it.", name)
	}
	return true, ""
}

// confirmKey names the confirmation of a destructive call among a
// 2026-07-28 host's inputRequests.
const confirmKey = "mcpx-confirm"

// confirmRound confirms a destructive call for a 2026-07-28 host: without
// its answer (answer nil) the result asks for it (input_required, no
// requestState: the host sends the call again with the answer, and mcpx
// asks the daemon anew); with it, as confirm.
func confirmRound(name, reason string, answer *mcp.InputResponse) (bool, string, *mcp.CallToolResult) {
	if answer == nil {
		return false, "", &mcp.CallToolResult{
			Result: mcp.Result{ResultType: mcp.ResultTypeInputRequired},
			MultiRoundTripResult: mcp.MultiRoundTripResult{InputRequests: mcp.InputRequests{
				confirmKey: mcp.NewElicitationInputRequest(confirmParams(name, reason))}},
		}
	}
	if err := answer.DecodeFor(mcp.MethodElicitationCreate); err != nil || answer.Elicitation == nil {
		return false, fmt.Sprintf("%s was not run: the answer to its confirmation is no elicitation result.", name), nil
	}
	ok, why := confirmed(name, answer.Elicitation)
	return ok, why, nil
}

// inlineBlobs replaces each item of the list field that carries
// "_mcpx": {"blob": i} by the stored bytes in base64 ("data" for image and
// audio content, "blob" for embedded resources and resource contents).
func inlineBlobs(raw json.RawMessage, field string, blobs []api.Blob) (json.RawMessage, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, err
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal(top[field], &items); err != nil {
		return nil, err
	}
	for _, b := range blobs {
		if b.Index < 0 || b.Index >= len(items) || items[b.Index] == nil {
			continue
		}
		data, err := os.ReadFile(b.Path)
		if err != nil {
			return nil, err
		}
		enc, _ := json.Marshal(base64.StdEncoding.EncodeToString(data))
		item := items[b.Index]
		delete(item, "_mcpx")
		var kind string
		_ = json.Unmarshal(item["type"], &kind)
		switch kind {
		case "image", "audio":
			item["data"] = enc
		case "resource":
			var res map[string]json.RawMessage
			if json.Unmarshal(item["resource"], &res) == nil && res != nil {
				res["blob"] = enc
				item["resource"], _ = json.Marshal(res)
			}
		default: // a resources/read content item
			item["blob"] = enc
		}
	}
	b, err := json.Marshal(items)
	if err != nil {
		return nil, err
	}
	top[field] = b
	return json.Marshal(top)
}

// lookup finds a tool by the name hosts see, or by NS.TOOL as the server
// names it.
func (cat *catalog) lookup(name string) (entry, error) {
	if e, ok := find(cat.tools, name); ok {
		return e, nil
	}
	ns, tool, ok := strings.Cut(name, ".")
	if !ok || ns == "" || tool == "" {
		return entry{}, fmt.Errorf("tool name %q has no namespace: use NS.TOOL (search_tools lists them)", name)
	}
	for _, e := range cat.tools {
		if e.ns == ns && e.name == tool {
			return e, nil
		}
	}
	return entry{}, fmt.Errorf("no tool %q is served (search_tools lists them)", name)
}

// allFronts is the aggregate front (if any) and every namespace's front.
func (s *mcpxServer) allFronts() []*front {
	s.mu.Lock()
	defer s.mu.Unlock()
	fronts := make([]*front, 0, len(s.fronts)+1)
	if s.aggregate != nil {
		fronts = append(fronts, s.aggregate)
	}
	for _, f := range s.fronts {
		fronts = append(fronts, f)
	}
	return fronts
}
