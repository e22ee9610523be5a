package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcpx-dev/mcpx/client"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/version"
)

// front is one MCP server serve offers hosts: the aggregate (/mcp on
// HTTP, stdio without a single --ns), where every namespace's tools are
// NS.TOOL, prompts NS.NAME and resources mcpx://NS/URI, or one namespace
// under its server's own names and URIs (/mcp/NS on HTTP, stdio with
// --ns NS). Both call through the same daemon client, so policy, trust
// and consent apply alike.
type front struct {
	s   *mcpxServer
	ns  string // "" for the aggregate
	mcp *server.MCPServer
	// http serves mcp over streamable HTTP (HTTP mode only).
	http *server.StreamableHTTPServer

	// served is what tool answers: each tool f lists, by the name hosts
	// call it (stdio.go answers their calls itself).
	served atomic.Pointer[map[string]entry]
	// parked are the calls of 2026-07-28 hosts waiting for an answer
	// (relay.go).
	parked parking
	// subs are the hosts' resource subscriptions (subscribe.go).
	subs hostSubs

	// Owned by mcpxServer.sync (one goroutine at a time).
	hash            config.ServerHash // ns's definition at the last sync
	digests         map[string]string // list kind → digest last served
	servedTemplates map[string]bool   // URI templates last served (see replaceTemplates)
}

// newFront makes the MCP server for ns ("" for the aggregate). A
// namespace's front introduces itself with its server's name, version and
// instructions when they are cached.
func (s *mcpxServer) newFront(ns string, cat *catalog) *front {
	name, ver, instr := "mcpx", version.String(), instructions(s.opts.Expose)
	if ns != "" {
		name, instr = ns, ""
		if snap := cat.snapshotOf(ns); snap != nil {
			var info struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			}
			if json.Unmarshal(snap.ServerInfo, &info) == nil && info.Name != "" {
				name, ver = info.Name, info.Version
			}
			instr = snap.Instructions
		}
	}
	f := &front{s: s, ns: ns}
	subscribe := canSubscribe(cat, ns)
	opts := []server.ServerOption{
		server.WithToolCapabilities(true),
		server.WithResourceCapabilities(subscribe, true),
		server.WithPromptCapabilities(true),
		server.WithLogging(),
		server.WithRecovery(),
		server.WithCompletions(),
	}
	if instr != "" {
		opts = append(opts, server.WithInstructions(instr))
	}
	if subscribe {
		opts = append(opts, server.WithHooks(f.subscribeHooks()))
	}
	opts = append(opts, server.WithPromptCompletionProvider(completer{f}), server.WithResourceCompletionProvider(completer{f}))
	f.mcp = server.NewMCPServer(name, ver, opts...)
	if s.opts.HTTP != "" {
		f.http = server.NewStreamableHTTPServer(f.mcp)
	}
	return f
}

// view is what f serves of cat, each entry's served field the name (or
// URI) hosts see: everything for the aggregate, ns's entries under its
// server's own names for a namespace's front.
func (f *front) view(cat *catalog) (tools, prompts, resources, templates []entry) {
	if f.ns == "" {
		return cat.tools, cat.prompts, cat.resources, cat.templates
	}
	own := func(list []entry) []entry {
		var out []entry
		for _, e := range list {
			if e.ns == f.ns {
				e.served = e.name
				out = append(out, e)
			}
		}
		return out
	}
	return own(cat.tools), own(cat.prompts), own(cat.resources), own(cat.templates)
}

// update hands mcp-go what changed in f's lists since the last update;
// hosts get list_changed for every list that changed, and for all three
// when moved (the servers behind f were redefined).
func (f *front) update(cat *catalog, moved bool) {
	tools, prompts, resources, templates := f.view(cat)
	first := f.digests == nil
	if first {
		f.digests = map[string]string{}
	}
	changed := func(kind string, d string) bool {
		if f.digests[kind] == d && !first {
			return false
		}
		f.digests[kind] = d
		return true
	}
	toolsChanged := changed("tools", digest(tools))
	promptsChanged := changed("prompts", digest(prompts))
	resourcesChanged := changed("resources", digest(resources)+digest(templates))

	if f.ns == "" && f.s.opts.Expose == "search" {
		if first {
			f.mcp.SetTools(f.searchTools()...)
		} else if toolsChanged || moved {
			f.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationToolsListChanged), nil)
		}
	} else if toolsChanged {
		f.mcp.SetTools(f.tools(tools)...) // notifies hosts itself
	} else if moved {
		f.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationToolsListChanged), nil)
	}
	if promptsChanged {
		f.replacePrompts(f.prompts(prompts))
	}
	if resourcesChanged {
		f.replaceResources(f.resources(resources))
		f.replaceTemplates(f.templates(templates))
	}
	if !first && (promptsChanged || moved) {
		f.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationPromptsListChanged), nil)
	}
	if !first && (resourcesChanged || moved) {
		f.mcp.SendNotificationToAllClients(string(mcp.MethodNotificationResourcesListChanged), nil)
	}
}

// tools serves the cached tools: named as view made them, input and output
// schemas passed on byte for byte, annotations kept. Task support is not
// advertised: mcpx runs such tools to completion for the host.
func (f *front) tools(list []entry) []server.ServerTool {
	out := make([]server.ServerTool, 0, len(list))
	byName := make(map[string]entry, len(list))
	for _, e := range list {
		t, err := mcpTool(e)
		if err != nil {
			f.s.opts.Log.Printf("%s.%s: %v; not served", e.ns, e.name, err)
			continue
		}
		byName[t.Name] = e
		out = append(out, server.ServerTool{Tool: t, Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return f.call(ctx, e, arguments(req), progressToken(req), req.Params.MultiRoundTripParams)
		}})
	}
	f.served.Store(&byName)
	return out
}

// tool is the tool f lists under name (not the three of --expose=search).
func (f *front) tool(name string) (entry, bool) {
	m := f.served.Load()
	if m == nil {
		return entry{}, false
	}
	e, ok := (*m)[name]
	return e, ok
}

// arguments are a call's arguments as the host sent them.
func arguments(req mcp.CallToolRequest) json.RawMessage {
	if len(req.Params.RawArguments) > 0 {
		return req.Params.RawArguments
	}
	b, _ := json.Marshal(req.Params.Arguments)
	return b
}

// prompts serves the cached prompts.
func (f *front) prompts(list []entry) []server.ServerPrompt {
	out := make([]server.ServerPrompt, 0, len(list))
	for _, e := range list {
		var p mcp.Prompt
		if err := json.Unmarshal(e.def, &p); err != nil {
			f.s.opts.Log.Printf("prompt %s: %v; not served", e.served, err)
			continue
		}
		p.Name = e.served
		out = append(out, server.ServerPrompt{Prompt: p, Handler: func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return f.getPrompt(ctx, e, req.Params.Arguments, req.Params.MultiRoundTripParams)
		}})
	}
	return out
}

// getPrompt gets e's prompt through the daemon, streamed like a call, so
// that what the server asks meanwhile reaches the host (relay.go); mrt is
// a 2026-07-28 host's answer to the last question.
func (f *front) getPrompt(ctx context.Context, e entry, args map[string]string, mrt mcp.MultiRoundTripParams) (*mcp.GetPromptResult, error) {
	c := f.s.client()
	req := api.PromptRequest{Namespace: e.ns, Name: e.name, Arguments: args, Session: sessionOf(ctx), Cwd: f.s.opts.Dir}
	name := "prompt " + e.ns + "." + e.name
	raw, ask, err := f.streamed(ctx, e.ns, name, &req.Elicit, &req.Streamed, mrt, func(ctx context.Context, h client.StreamHooks) (*api.CallResponse, error) {
		r, err := c.PromptStream(ctx, req, h)
		if err != nil {
			return nil, err
		}
		return &api.CallResponse{Result: r.Result}, nil
	})
	if ask != nil {
		return &mcp.GetPromptResult{Result: mcp.Result{ResultType: mcp.ResultTypeInputRequired}, MultiRoundTripResult: *ask}, nil
	}
	if err != nil {
		return nil, relayed(ctx, err, fmt.Errorf("get prompt %s.%s: %w", e.ns, e.name, err))
	}
	r := raw.Result
	res, err := mcp.ParseGetPromptResult(&r)
	if err != nil {
		return nil, fmt.Errorf("get prompt %s.%s: %w", e.ns, e.name, err)
	}
	if f.ns == "" {
		for i, m := range res.Messages {
			res.Messages[i].Content = namespaceContent(e.ns, m.Content)
		}
	}
	return res, nil
}

// resources serves the cached resources.
func (f *front) resources(list []entry) []server.ServerResource {
	out := make([]server.ServerResource, 0, len(list))
	for _, e := range list {
		var r mcp.Resource
		if err := json.Unmarshal(e.def, &r); err != nil {
			f.s.opts.Log.Printf("resource %s: %v; not served", e.served, err)
			continue
		}
		r.URI = e.served
		out = append(out, server.ServerResource{Resource: r, Handler: f.readResource})
	}
	return out
}

// templates serves the cached resource templates.
func (f *front) templates(list []entry) []server.ServerResourceTemplate {
	out := make([]server.ServerResourceTemplate, 0, len(list))
	for _, e := range list {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(e.def, &m); err != nil {
			continue
		}
		m["uriTemplate"], _ = json.Marshal(e.served)
		b, _ := json.Marshal(m)
		var t mcp.ResourceTemplate
		if err := json.Unmarshal(b, &t); err != nil || t.URITemplate == nil {
			f.s.opts.Log.Printf("resource template %s: %v; not served", e.served, err)
			continue
		}
		out = append(out, server.ServerResourceTemplate{Template: t, Handler: f.readResource})
	}
	return out
}

// readResource reads a resource through the daemon: on the aggregate the
// URI is mcpx://NS/URI and the contents come back under such URIs; on a
// namespace's front the URI is the server's own, and so are the contents'.
func (f *front) readResource(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	ns, uri := f.ns, req.Params.URI
	if ns == "" {
		var ok bool
		if ns, uri, ok = splitResourceURI(req.Params.URI); !ok {
			return nil, fmt.Errorf("%q is not a resource mcpx serves (they look like mcpx://NS/URI)", req.Params.URI)
		}
	}
	c := f.s.client()
	rreq := api.ReadRequest{Namespace: ns, URI: uri, Session: sessionOf(ctx), Cwd: f.s.opts.Dir}
	r, ask, err := f.streamed(ctx, ns, "read "+req.Params.URI, &rreq.Elicit, &rreq.Streamed, req.Params.MultiRoundTripParams,
		func(ctx context.Context, h client.StreamHooks) (*api.CallResponse, error) {
			r, err := c.ReadStream(ctx, rreq, h)
			if err != nil {
				return nil, err
			}
			return &api.CallResponse{Result: r.Result, Blobs: r.Blobs}, nil
		})
	if ask != nil {
		// (A resource handler returns contents only: answers.go puts the
		// question in mcp-go's answer.)
		res := &mcp.ReadResourceResult{MultiRoundTripResult: *ask, Contents: []mcp.ResourceContents{}}
		res.ResultType = mcp.ResultTypeInputRequired
		return nil, answerWith(ctx, res)
	}
	if err != nil {
		return nil, readFailed(ctx, req.Params.URI, err, fmt.Errorf("read %s on %s: %w", uri, ns, err))
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
	if f.ns == "" {
		for i, c := range res.Contents {
			res.Contents[i] = namespaceContents(ns, c)
		}
	}
	return res.Contents, nil
}

// namespaceContent puts the resource URIs in one content item of ns's
// (an embedded resource, a resource link) under mcpx://NS/, where the
// aggregate's resources/read finds them.
func namespaceContent(ns string, c mcp.Content) mcp.Content {
	switch v := c.(type) {
	case mcp.EmbeddedResource:
		v.Resource = namespaceContents(ns, v.Resource)
		return v
	case *mcp.EmbeddedResource:
		return namespaceContent(ns, *v)
	case mcp.ResourceLink:
		v.URI = resourceURI(ns, v.URI)
		return v
	case *mcp.ResourceLink:
		return namespaceContent(ns, *v)
	}
	return c
}

// namespaceContents puts a resource's contents under mcpx://NS/.
func namespaceContents(ns string, c mcp.ResourceContents) mcp.ResourceContents {
	switch v := c.(type) {
	case mcp.TextResourceContents:
		v.URI = resourceURI(ns, v.URI)
		return v
	case *mcp.TextResourceContents:
		return namespaceContents(ns, *v)
	case mcp.BlobResourceContents:
		v.URI = resourceURI(ns, v.URI)
		return v
	case *mcp.BlobResourceContents:
		return namespaceContents(ns, *v)
	}
	return c
}

// The lists below are replaced entry by entry, new and changed ones first,
// then the stale ones deleted: mcp-go's SetPrompts, SetResources and
// SetResourceTemplates empty a list before refilling it, and a host's
// prompts/get or resources/read in between would find nothing.

func (f *front) replacePrompts(list []server.ServerPrompt) {
	replaceEntries(f.mcp.ListPrompts(), list, func(p server.ServerPrompt) string { return p.Prompt.Name },
		f.mcp.AddPrompts, f.mcp.DeletePrompts)
}

func (f *front) replaceResources(list []server.ServerResource) {
	replaceEntries(f.mcp.ListResources(), list, func(r server.ServerResource) string { return r.Resource.URI },
		f.mcp.AddResources, f.mcp.DeleteResources)
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
func (f *front) replaceTemplates(list []server.ServerResourceTemplate) {
	now := make(map[string]bool, len(list))
	for _, t := range list {
		now[t.Template.URITemplate.Raw()] = true
	}
	gone := false
	for k := range f.servedTemplates {
		gone = gone || !now[k]
	}
	if gone {
		f.mcp.SetResourceTemplates(list...)
	} else {
		f.mcp.AddResourceTemplates(list...)
	}
	f.servedTemplates = now
}
