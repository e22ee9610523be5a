package serve

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
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

// mcpxServer is one serve run: the MCP server, the daemon client of the
// directory (replaced when the config changes) and the catalog last served.
type mcpxServer struct {
	opts    Options
	paths   config.Paths
	schemas *cache.Schemas
	mgr     *service.Lazy
	mcp     *server.MCPServer

	mu              sync.Mutex
	c               *client.Client
	cat             *catalog
	digests         map[string]string // list kind → digest last served
	refreshed       map[string]bool   // serverHash whose refresh serve already asked for
	bg              sync.WaitGroup
	servedTemplates map[string]bool // URI templates last served (sync's own; see replaceTemplates)
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

// watch re-reads the config and the catalog every Poll until ctx ends.
func (s *mcpxServer) watch(ctx context.Context) {
	t := time.NewTicker(s.opts.Poll)
	defer t.Stop()
	defer s.bg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := s.reload(ctx); err != nil {
			s.opts.Log.Printf("config: %v", err)
			continue
		}
		s.sync(ctx, false)
	}
}

// sync rebuilds the catalog and hands mcp-go what changed; hosts get
// list_changed for every list that changed, and for all three when the set
// of servers changed. Namespaces never read are refreshed through the
// daemon in the background (that starts them once, like `mcpx refresh`);
// their lists arrive with the next sync.
func (s *mcpxServer) sync(ctx context.Context, first bool) {
	cfg := s.cfg()
	s.mu.Lock()
	prev := s.cat
	s.mu.Unlock()
	cat := build(cfg, s.schemas, s.opts.Namespaces, prev)
	s.mu.Lock()
	old := s.cat
	s.cat = cat
	if s.digests == nil {
		s.digests = map[string]string{}
		s.refreshed = map[string]bool{}
	}
	changed := func(kind string, d string) bool {
		if s.digests[kind] == d && !first {
			return false
		}
		s.digests[kind] = d
		return true
	}
	configMoved := old != nil && old.schemaHash != cat.schemaHash
	toolsChanged := changed("tools", digest(cat.tools))
	promptsChanged := changed("prompts", digest(cat.prompts))
	resourcesChanged := changed("resources", digest(cat.resources)+digest(cat.templates))
	var refresh []string
	for _, ns := range cat.unread {
		h := string(cfg.Servers[ns].Hash())
		if !s.refreshed[h] {
			s.refreshed[h] = true
			refresh = append(refresh, ns)
		}
	}
	s.mu.Unlock()

	if s.opts.Expose == "search" {
		if first {
			s.mcp.SetTools(s.searchTools()...)
		} else if toolsChanged || configMoved {
			s.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationToolsListChanged), nil)
		}
	} else if toolsChanged {
		s.mcp.SetTools(s.tools(cat)...) // notifies hosts itself
	} else if configMoved {
		s.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationToolsListChanged), nil)
	}
	if promptsChanged {
		s.replacePrompts(s.prompts(cat))
	}
	if resourcesChanged {
		s.replaceResources(s.resources(cat))
		s.replaceTemplates(s.templates(cat))
	}
	if !first && (promptsChanged || configMoved) {
		s.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationPromptsListChanged), nil)
	}
	if !first && (resourcesChanged || configMoved) {
		s.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationResourcesListChanged), nil)
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

// tools is every cached tool as mcp-go serves it: named NS.TOOL, input and
// output schemas passed on byte for byte, annotations kept. Task support is
// not advertised: mcpx runs such tools to completion for the host.
func (s *mcpxServer) tools(cat *catalog) []server.ServerTool {
	out := make([]server.ServerTool, 0, len(cat.tools))
	for _, e := range cat.tools {
		t, err := mcpTool(e)
		if err != nil {
			s.opts.Log.Printf("%s.%s: %v; not served", e.ns, e.name, err)
			continue
		}
		out = append(out, server.ServerTool{Tool: t, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return s.call(ctx, e, req.Params.Arguments, progressToken(req))
		}})
	}
	return out
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
func (s *mcpxServer) call(ctx context.Context, e entry, args any, token mcp.ProgressToken) (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(args)
	if err != nil || string(raw) == "null" {
		raw = []byte("{}")
	}
	c := s.client()
	ns, tool := e.ns, e.name
	req := api.CallRequest{Namespace: ns, Tool: tool, Arguments: raw, Session: sessionOf(ctx), Cwd: s.opts.Dir, NoStatus: true,
		Detach: token != nil && taskSupport(e.def) == "required"}
	name := ns + "." + tool
	fw := &forwarder{srv: s.mcp, ctx: ctx, ns: ns, token: token}
	defer fw.flush()
	for {
		var resp *api.CallResponse
		var err error
		if req.Detach {
			resp, err = c.Call(ctx, req)
		} else {
			resp, err = c.CallStream(ctx, req, fw.frame)
		}
		var ae *client.APIError
		if errors.As(err, &ae) && ae.Code() == api.CodeConfirmation && !req.Confirmed {
			ok, why := s.confirm(ctx, name, ae.Error())
			if !ok {
				return mcp.NewToolResultError(why), nil
			}
			req.Confirmed = true
			continue
		}
		if err == nil && resp.Task != nil && !resp.Task.Done && isNull(resp.Result) {
			resp, err = s.followTask(ctx, c, *resp.Task, token)
		}
		if err != nil {
			return mcp.NewToolResultError(fmt.Sprintf("mcpx could not call %s: %v", name, err)), nil
		}
		return toolResult(resp)
	}
}

// followTask reports a task's status changes to the host as progress until
// it ends, then collects its result. The host giving up cancels the task.
func (s *mcpxServer) followTask(ctx context.Context, c *client.Client, t api.Task, token mcp.ProgressToken) (*api.CallResponse, error) {
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
		_ = s.mcp.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
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
func (s *mcpxServer) confirm(ctx context.Context, name, reason string) (bool, string) {
	cs, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo)
	if !ok || cs.GetClientCapabilities().Elicitation == nil {
		return false, fmt.Sprintf("%s was not run: %s. This host cannot ask you to confirm (it does not support MCP elicitation); call it with `mcpx call %s --yes` in a terminal, or set the server's policy.destructive to allow.", name, reason, name)
	}
	res, err := s.mcp.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
		Message: fmt.Sprintf("%s is destructive. Run it?", name),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"confirm": map[string]any{"type": "boolean", "title": "Run " + name, "description": reason},
			},
			"required": []string{"confirm"},
		},
	}})
	if err != nil {
		return false, fmt.Sprintf("%s was not run: %s, and asking for confirmation failed: %v", name, reason, err)
	}
	if res.Action != mcp.ElicitationResponseActionAccept {
		return false, fmt.Sprintf("%s was not run: the user answered %s.", name, res.Action)
	}
	if m, ok := res.Content.(map[string]any); !ok || m["confirm"] != true {
		return false, fmt.Sprintf("%s was not run: the user did not confirm it.", name)
	}
	return true, ""
}

// toolResult puts binary content the daemon moved into the store back
// inline, as base64, and decodes the result for mcp-go.
func toolResult(resp *api.CallResponse) (*mcp.CallToolResult, error) {
	raw := resp.Result
	if len(resp.Blobs) > 0 {
		var err error
		if raw, err = inlineBlobs(raw, "content", resp.Blobs); err != nil {
			return mcp.NewToolResultError(fmt.Sprintf("mcpx could not read a binary result: %v", err)), nil
		}
	}
	r, err := mcp.ParseCallToolResult(&raw)
	if err != nil {
		return mcp.NewToolResultError(fmt.Sprintf("mcpx could not read the result: %v", err)), nil
	}
	return r, nil
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

// prompts serves every cached prompt as NS.NAME.
func (s *mcpxServer) prompts(cat *catalog) []server.ServerPrompt {
	out := make([]server.ServerPrompt, 0, len(cat.prompts))
	for _, e := range cat.prompts {
		var p mcp.Prompt
		if err := json.Unmarshal(e.def, &p); err != nil {
			s.opts.Log.Printf("prompt %s: %v; not served", e.served, err)
			continue
		}
		p.Name = e.served
		ns, name := e.ns, e.name
		out = append(out, server.ServerPrompt{Prompt: p, Handler: func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			r, err := s.client().Prompt(ctx, api.PromptRequest{Namespace: ns, Name: name, Arguments: req.Params.Arguments,
				Session: sessionOf(ctx), Cwd: s.opts.Dir})
			if err != nil {
				return nil, fmt.Errorf("get prompt %s.%s: %w", ns, name, err)
			}
			return mcp.ParseGetPromptResult(&r.Result)
		}})
	}
	return out
}

// resources serves every cached resource under its namespaced URI.
func (s *mcpxServer) resources(cat *catalog) []server.ServerResource {
	out := make([]server.ServerResource, 0, len(cat.resources))
	for _, e := range cat.resources {
		var r mcp.Resource
		if err := json.Unmarshal(e.def, &r); err != nil {
			s.opts.Log.Printf("resource %s: %v; not served", e.served, err)
			continue
		}
		r.URI = e.served
		out = append(out, server.ServerResource{Resource: r, Handler: s.readResource})
	}
	return out
}

// templates serves every cached resource template, namespaced.
func (s *mcpxServer) templates(cat *catalog) []server.ServerResourceTemplate {
	out := make([]server.ServerResourceTemplate, 0, len(cat.templates))
	for _, e := range cat.templates {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(e.def, &m); err != nil {
			continue
		}
		m["uriTemplate"], _ = json.Marshal(e.served)
		b, _ := json.Marshal(m)
		var t mcp.ResourceTemplate
		if err := json.Unmarshal(b, &t); err != nil || t.URITemplate == nil {
			s.opts.Log.Printf("resource template %s: %v; not served", e.served, err)
			continue
		}
		out = append(out, server.ServerResourceTemplate{Template: t, Handler: s.readResource})
	}
	return out
}

// readResource reads a namespaced URI through the daemon.
func (s *mcpxServer) readResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	ns, uri, ok := splitResourceURI(req.Params.URI)
	if !ok {
		return nil, fmt.Errorf("%q is not a resource mcpx serves (they look like mcpx://NS/URI)", req.Params.URI)
	}
	r, err := s.client().Read(ctx, api.ReadRequest{Namespace: ns, URI: uri, Session: sessionOf(ctx), Cwd: s.opts.Dir})
	if err != nil {
		return nil, fmt.Errorf("read %s on %s: %w", uri, ns, err)
	}
	raw := r.Result
	if len(r.Blobs) > 0 {
		if raw, err = inlineBlobs(raw, "contents", r.Blobs); err != nil {
			return nil, fmt.Errorf("read %s on %s: %w", uri, ns, err)
		}
	}
	res, err := mcp.ParseReadResourceResult(&raw)
	if err != nil {
		return nil, fmt.Errorf("read %s on %s: %w", uri, ns, err)
	}
	for i, c := range res.Contents {
		switch v := c.(type) {
		case mcp.TextResourceContents:
			v.URI = resourceURI(ns, v.URI)
			res.Contents[i] = v
		case mcp.BlobResourceContents:
			v.URI = resourceURI(ns, v.URI)
			res.Contents[i] = v
		}
	}
	return res.Contents, nil
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

// The lists below are replaced entry by entry, new and changed ones first,
// then the stale ones deleted: mcp-go's SetPrompts, SetResources and
// SetResourceTemplates empty a list before refilling it, and a host's
// prompts/get or resources/read in between would find nothing.

func (s *mcpxServer) replacePrompts(list []server.ServerPrompt) {
	replaceEntries(s.mcp.ListPrompts(), list, func(p server.ServerPrompt) string { return p.Prompt.Name },
		s.mcp.AddPrompts, s.mcp.DeletePrompts)
}

func (s *mcpxServer) replaceResources(list []server.ServerResource) {
	replaceEntries(s.mcp.ListResources(), list, func(r server.ServerResource) string { return r.Resource.URI },
		s.mcp.AddResources, s.mcp.DeleteResources)
}

// replaceEntries adds or updates list, then deletes what was served (by
// key) and is not in list any more.
func replaceEntries[T, V any](served map[string]V, list []T, key func(T) string, add func(...T), del func(...string)) {
	for _, e := range list {
		delete(served, key(e))
	}
	add(list...)
	if len(served) > 0 {
		del(slices.Collect(maps.Keys(served))...)
	}
}

// replaceTemplates adds or updates templates in place; mcp-go cannot delete
// one, so only when a template went away is the list replaced whole
// (rare: a server's templates change with its version).
func (s *mcpxServer) replaceTemplates(list []server.ServerResourceTemplate) {
	now := make(map[string]bool, len(list))
	for _, t := range list {
		now[t.Template.URITemplate.Raw()] = true
	}
	gone := false
	for k := range s.servedTemplates {
		gone = gone || !now[k]
	}
	if gone {
		s.mcp.SetResourceTemplates(list...)
	} else {
		s.mcp.AddResourceTemplates(list...)
	}
	s.servedTemplates = now
}
