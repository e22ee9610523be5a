package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/search"
	"github.com/mcpx-dev/mcpx/upstream"
)

// Resources and prompts: listing answers from the schema cache (read by
// refresh together with the tools) and never starts a server; reading a
// resource and getting a prompt go through the pool like a call.

// listTargets is the namespaces a listing covers: ?ns= or every one.
func (d *daemon) listTargets(r *http.Request) (*state, []string, error) {
	st := d.state.Load()
	if name := r.URL.Query().Get("ns"); name != "" {
		if _, err := st.server(name); err != nil {
			return nil, nil, err
		}
		return st, []string{name}, nil
	}
	return st, st.names, nil
}

// serveResources answers GET /v1/resources[?ns=].
func (d *daemon) serveResources(w http.ResponseWriter, r *http.Request) error {
	st, names, err := d.listTargets(r)
	if err != nil {
		return err
	}
	resp := api.ResourcesResponse{Namespaces: []api.Namespace{}, Resources: []api.Resource{}, Templates: []api.ResourceTemplate{}}
	for _, name := range names {
		snap, view := d.toolsOf(st, st.cfg.Servers[name])
		resp.Namespaces = append(resp.Namespaces, d.namespace(st, name, snap, view))
		if !usable(snap) {
			continue
		}
		for _, raw := range snap.Resources {
			var head struct {
				URI, Name, Title, Description, MimeType string
			}
			if json.Unmarshal(raw, &head) != nil || head.URI == "" {
				continue
			}
			resp.Resources = append(resp.Resources, api.Resource{Namespace: name, URI: head.URI, Name: head.Name,
				Title: head.Title, Description: head.Description, MimeType: head.MimeType, Definition: raw})
		}
		for _, raw := range snap.ResourceTemplates {
			var head struct {
				URITemplate                        string `json:"uriTemplate"`
				Name, Title, Description, MimeType string
			}
			if json.Unmarshal(raw, &head) != nil || head.URITemplate == "" {
				continue
			}
			resp.Templates = append(resp.Templates, api.ResourceTemplate{Namespace: name, URITemplate: head.URITemplate, Name: head.Name,
				Title: head.Title, Description: head.Description, MimeType: head.MimeType, Definition: raw})
		}
	}
	return writeJSON(w, resp)
}

// servePrompts answers GET /v1/prompts[?ns=].
func (d *daemon) servePrompts(w http.ResponseWriter, r *http.Request) error {
	st, names, err := d.listTargets(r)
	if err != nil {
		return err
	}
	resp := api.PromptsResponse{Namespaces: []api.Namespace{}, Prompts: []api.Prompt{}}
	for _, name := range names {
		snap, view := d.toolsOf(st, st.cfg.Servers[name])
		resp.Namespaces = append(resp.Namespaces, d.namespace(st, name, snap, view))
		if !usable(snap) {
			continue
		}
		for _, raw := range snap.Prompts {
			var head struct {
				Name, Title, Description string
				Arguments                []api.PromptArgument
			}
			if json.Unmarshal(raw, &head) != nil || head.Name == "" {
				continue
			}
			resp.Prompts = append(resp.Prompts, api.Prompt{Namespace: name, Name: head.Name, Title: head.Title,
				Description: head.Description, Arguments: head.Arguments, Definition: raw})
		}
	}
	return writeJSON(w, resp)
}

// serveRead answers POST /v1/read: resources/read through the pool, binary
// contents moved into the store.
func (d *daemon) serveRead(w http.ResponseWriter, r *http.Request) error {
	var req api.ReadRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Namespace == "" || req.URI == "" {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "a read needs a namespace and a URI")
	}
	if err := checkStreamed(req.Elicit, req.Streamed); err != nil {
		return err
	}
	read := func(stream *frameStream) (*api.ReadResponse, error) {
		raw, err := d.forward(r, req.Namespace, req.URI, upstream.Caller{Session: req.Session, Cwd: req.Cwd, Idempotent: true},
			d.forwardHooks(req.Namespace, req.Elicit, req.Streamed, stream), "resources/read", map[string]string{"uri": req.URI})
		if err != nil {
			return nil, err
		}
		resp, err := d.extractContents(raw)
		if err != nil {
			return nil, apiErr(http.StatusBadGateway, api.CodeTransport, "read %s on %s: %v", req.URI, req.Namespace, err)
		}
		return &resp, nil
	}
	if req.Stream {
		st := d.state.Load()
		if _, err := st.server(req.Namespace); err != nil {
			return err
		}
		return d.streamAnswer(w, st, req.Namespace, req.NoStatus, func(stream *frameStream) (*api.CallResponse, error) {
			resp, err := read(stream)
			if err != nil {
				return nil, err
			}
			return &api.CallResponse{Result: resp.Result, Blobs: resp.Blobs}, nil
		})
	}
	resp, err := read(nil)
	if err != nil {
		return err
	}
	return writeJSON(w, resp)
}

// servePrompt answers POST /v1/prompt: prompts/get through the pool.
func (d *daemon) servePrompt(w http.ResponseWriter, r *http.Request) error {
	var req api.PromptRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Namespace == "" || req.Name == "" {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "a prompt needs a namespace and a name")
	}
	if err := checkStreamed(req.Elicit, req.Streamed); err != nil {
		return err
	}
	st := d.state.Load()
	if _, err := st.server(req.Namespace); err != nil {
		return err
	}
	if snap := d.snapshot(st, req.Namespace); usable(snap) {
		if err := findPrompt(req.Namespace, req.Name, snap.Prompts); err != nil {
			return err
		}
	}
	params := map[string]any{"name": req.Name}
	if len(req.Arguments) > 0 {
		params["arguments"] = req.Arguments
	}
	get := func(stream *frameStream) (json.RawMessage, error) {
		return d.forward(r, req.Namespace, req.Name, upstream.Caller{Session: req.Session, Cwd: req.Cwd, Idempotent: true},
			d.forwardHooks(req.Namespace, req.Elicit, req.Streamed, stream), "prompts/get", params)
	}
	if req.Stream {
		return d.streamAnswer(w, st, req.Namespace, req.NoStatus, func(stream *frameStream) (*api.CallResponse, error) {
			raw, err := get(stream)
			if err != nil {
				return nil, err
			}
			return &api.CallResponse{Result: raw}, nil
		})
	}
	raw, err := get(nil)
	if err != nil {
		return err
	}
	return writeJSON(w, api.PromptResponse{Result: raw})
}

// checkStreamed checks a read's or prompt's elicit mode and what it asks
// of a stream: sampling and roots go out on one, as for a call.
func checkStreamed(elicit string, s api.Streamed) error {
	if err := checkElicit(elicit, s.Stream); err != nil {
		return err
	}
	if (s.Sample || s.Roots) && !s.Stream {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "sample and roots need a streamed answer (the requests go out on it)")
	}
	return nil
}

// forwardHooks are what a read or a prompt of ns hears and answers: as
// for a call, the server's questions go to the caller on the stream (nil:
// not streamed) as s and elicit say; a relay's host's capabilities are
// what a 2026-07-28 server is told.
func (d *daemon) forwardHooks(ns, elicit string, s api.Streamed, stream *frameStream) upstream.Hooks {
	h := upstream.Hooks{Answer: d.answerer(ns, elicit, upstream.Offer{Sampling: s.Sample, Roots: s.Roots}, stream)}
	if s.Relay {
		h.Offer = &upstream.Offer{Elicitation: elicit == api.ElicitAsk, Sampling: s.Sample, Roots: s.Roots}
	}
	return h
}

// findPrompt answers 404 with the nearest name when list lacks name.
func findPrompt(ns, name string, list []json.RawMessage) error {
	names := make([]string, 0, len(list))
	for _, raw := range list {
		var head struct{ Name string }
		if json.Unmarshal(raw, &head) == nil {
			if head.Name == name {
				return nil
			}
			names = append(names, head.Name)
		}
	}
	e := apiErr(http.StatusNotFound, api.CodeUnknownPrompt, "namespace %s has no prompt %q", ns, name)
	e.body.Namespace = ns
	e.body.Suggestion = search.Suggest(name, names)
	return e
}

// forward sends method to namespace ns through its pool; what names the
// object in errors (a URI, a prompt), hooks answer the server's questions
// (forwardHooks). A server without a snapshot gets one read in the
// background, as after a call.
func (d *daemon) forward(r *http.Request, ns, what string, caller upstream.Caller, hooks upstream.Hooks, method string, params any) (json.RawMessage, error) {
	st := d.state.Load()
	s, err := st.server(ns)
	if err != nil {
		return nil, err
	}
	snap := d.snapshot(st, ns)
	spec, err := d.spec(r.Context(), st, s, snap)
	if err != nil {
		return nil, err
	}
	raw, err := d.pools.RequestWith(r.Context(), spec, caller, method+" "+what, method, params, hooks)
	d.pokeStatus()
	if err != nil {
		e := mapError(err)
		if e.body.Namespace == "" {
			e.body.Namespace = ns
		}
		return nil, e
	}
	if !usable(snap) {
		d.fetchLater(st, ns)
	}
	return raw, nil
}

// extractContents moves the base64 "blob" of each item of a
// ReadResourceResult's contents into the store, leased like call results.
func (d *daemon) extractContents(raw json.RawMessage) (api.ReadResponse, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return api.ReadResponse{}, fmt.Errorf("decode result: %w", err)
	}
	resp := api.ReadResponse{Result: raw}
	var contents []map[string]json.RawMessage
	if c, ok := top["contents"]; !ok || json.Unmarshal(c, &contents) != nil {
		return resp, nil
	}
	changed := false
	for i, item := range contents {
		if item == nil {
			continue
		}
		if _, spoofed := item["_mcpx"]; spoofed {
			delete(item, "_mcpx")
			changed = true
		}
		var b64, uri, mimeType string
		if json.Unmarshal(item["blob"], &b64) != nil || b64 == "" {
			continue
		}
		data, err := decodeBase64(b64)
		if err != nil {
			d.log.Printf("read: content %d: %v; left inline", i, err)
			continue
		}
		dg, size, _, err := d.store.PutLease(bytes.NewReader(data), blobLease)
		if err != nil {
			d.log.Printf("read: content %d: %v; left inline", i, err)
			continue
		}
		_ = json.Unmarshal(item["uri"], &uri)
		_ = json.Unmarshal(item["mimeType"], &mimeType)
		resp.Blobs = append(resp.Blobs, api.Blob{Index: i, Path: d.store.Path(dg), Digest: string(dg), MimeType: mimeType,
			Size: size, Name: blobName("resource", i, uri, mimeType)})
		delete(item, "blob")
		item["_mcpx"] = json.RawMessage(fmt.Sprintf(`{"blob":%d}`, i))
		changed = true
	}
	if !changed {
		return resp, nil
	}
	c, err := json.Marshal(contents)
	if err != nil {
		return api.ReadResponse{}, err
	}
	top["contents"] = c
	if resp.Result, err = json.Marshal(top); err != nil {
		return api.ReadResponse{}, err
	}
	return resp, nil
}
