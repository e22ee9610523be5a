package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/search"
	"github.com/mcpx-dev/mcpx/upstream"
)

// Discovery (namespaces, tools, schema, search) answers only from the schema
// cache and never starts a server. refresh and calls fetch.

// usable reports whether snap lists the server's tools.
func usable(snap *cache.Snapshot) bool { return snap != nil && snap.Error == "" }

// namespace describes one server, with its schema state from snap and its
// tools from v (the view of snap's index, nil when snap is unusable).
func (d *daemon) namespace(st *state, name string, snap *cache.Snapshot, v *toolView) api.Namespace {
	s := st.cfg.Servers[name]
	h := st.hashes[name]
	ns := api.Namespace{
		Name:        name,
		Description: s.Options.Description,
		Transport:   s.Transport,
		Sharing:     s.Options.Sharing,
		Scope:       s.Options.Scope,
		ServerHash:  string(h),
		Source:      s.Source,
		Live:        d.pools.Live(h),
		State:       api.StateUnread,
	}
	health := d.pools.Health(h)
	ns.Replaced, ns.ExitsAfterAnswer = health.Replaced, health.ExitsAfterAnswer
	switch {
	case s.Untrusted != "":
		ns.State, ns.Error = api.StateUntrusted, s.Untrusted
	case s.Self:
		ns.State, ns.Error = api.StateSkipped, s.Problem
	case s.Problem != "":
		ns.State, ns.Error = api.StateInvalid, s.Problem
	case snap == nil:
	case snap.Error != "":
		// Redacted again: an older mcpx may have saved it unredacted.
		ns.State, ns.Error, ns.Stderr = api.StateError, d.redact(snap.Error), d.redact(snap.Stderr)
	default:
		ns.State = api.StateCached
		ns.FetchedAt = snap.FetchedAt
		if v != nil {
			ns.Tools = len(v.tools)
		}
	}
	return ns
}

// namespaces describes every server, sorted by name.
func (d *daemon) namespaces(st *state) []api.Namespace {
	out := make([]api.Namespace, 0, len(st.names))
	for _, name := range st.names {
		snap, v := d.toolsOf(st, st.cfg.Servers[name])
		out = append(out, d.namespace(st, name, snap, v))
	}
	return out
}

// tools returns what v lists (nil for a nil view).
func (v *toolView) list() []api.Tool {
	if v == nil {
		return nil
	}
	return v.tools
}

// annotationsAmbiguous reports whether a tool definition has more than one
// key that encoding/json would take for "annotations", or a case variant
// of it.
func annotationsAmbiguous(raw json.RawMessage) bool {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return false
	}
	n := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return true
		}
		if key, _ := tok.(string); strings.EqualFold(key, "annotations") {
			if key != "annotations" {
				return true
			}
			n++
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return true
		}
	}
	return n > 1
}

// serveNamespaces answers GET /v1/namespaces[?brief=1]. brief=1 answers
// rows (api.AppendNamespaceRows) without what `mcpx ls` does not show (a
// namespace's hash, transport, sharing, scope, fetch time, and its source
// unless untrusted): with hundreds of servers the listing is a fifth of
// the bytes to write and for the CLI to read.
func (d *daemon) serveNamespaces(w http.ResponseWriter, r *http.Request) error {
	st := d.state.Load()
	if r.URL.Query().Get("brief") != "1" {
		return writeJSON(w, api.NamespacesResponse{Namespaces: d.namespaces(st), Unavailable: st.unavailable})
	}
	rows := func(yield func(*api.NamespaceRow) bool) {
		for _, name := range st.names {
			snap, v := d.toolsOf(st, st.cfg.Servers[name])
			n := d.namespace(st, name, snap, v)
			row := api.NamespaceRow{Name: n.Name, Description: n.Description, Tools: n.Tools, Live: n.Live,
				Replaced: n.Replaced, ExitsAfterAnswer: n.ExitsAfterAnswer, State: n.State, Error: n.Error}
			if n.State == api.StateUntrusted {
				row.Source = n.Source
			}
			if !yield(&row) {
				return
			}
		}
	}
	w.Header().Set("Content-Type", api.ContentTypeNDJSON)
	return writeRaw(w, api.AppendNamespaceRows(make([]byte, 0, 48*len(st.names)+64), rows, st.unavailable))
}

// serveTools answers GET /v1/tools?ns=[&brief=1]. An unread namespace
// answers 200 with no tools and state "unread". brief=1 answers
// application/x-ndjson rows, each tool's name and the summary of its
// description (api.DecodeToolRows reads them).
func (d *daemon) serveTools(w http.ResponseWriter, r *http.Request) error {
	return d.serveToolList(w, r, "")
}

// serveSchema answers GET /v1/schema?ns=[&tool=]: the full definitions.
func (d *daemon) serveSchema(w http.ResponseWriter, r *http.Request) error {
	if s, err := d.state.Load().server(r.URL.Query().Get("ns")); err == nil {
		if err := runnable(s); err != nil {
			return err
		}
	}
	return d.serveToolList(w, r, r.URL.Query().Get("tool"))
}

func (d *daemon) serveToolList(w http.ResponseWriter, r *http.Request, tool string) error {
	st := d.state.Load()
	name := r.URL.Query().Get("ns")
	if name == "" {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "missing ?ns=NAMESPACE")
	}
	s, err := st.server(name)
	if err != nil {
		return err
	}
	snap, v := d.toolsOf(st, s)
	if snap == nil {
		// Named explicitly and never read: read it now, bounded by its
		// start timeout (like a call would), so it does not look empty.
		// Broad discovery (namespaces, search) never does this.
		ctx, cancel := context.WithTimeout(r.Context(), startBound(s))
		fresh, err := d.fetch(ctx, st, name)
		cancel()
		if err != nil {
			e := mapError(err)
			if e.body.Namespace == "" {
				e.body.Namespace = name
			}
			return e
		}
		snap, v = d.toolsOf(st, s)
		if snap == nil {
			snap, v = fresh, d.viewOf(st, s, fresh, "")
		}
	}
	resp := api.ToolsResponse{Namespace: d.namespace(st, name, snap, v), Tools: []api.Tool{}}
	if tool != "" && v != nil {
		t, ok := v.find(tool)
		if !ok {
			if e := hiddenTool(s, tool); e != nil {
				return e
			}
			_, err := findTool(name, tool, v.tools)
			return err
		}
		resp.Tools = []api.Tool{t}
	}
	if tool == "" {
		// The whole list was encoded once, with the view; ?brief=1
		// answers rows of names and descriptions (what `ls NS` shows),
		// also encoded once.
		head, err := json.Marshal(resp.Namespace)
		if err != nil {
			return err
		}
		if r.URL.Query().Get("brief") == "1" {
			var rows []byte
			if v != nil {
				rows = v.brief()
			}
			w.Header().Set("Content-Type", api.ContentTypeNDJSON)
			return writeRaw(w, []byte(`{"namespace":`), head, []byte("}\n"), rows)
		}
		if v != nil {
			if list := v.encodedList(); list != nil {
				return writeRawJSON(w, []byte(`{"namespace":`), head, []byte(`,"tools":`), list, []byte("}\n"))
			}
		}
	}
	return writeJSON(w, resp)
}

// hiddenTool is the answer about a tool s's filter hides (403 tool_hidden,
// naming the filter and its file), or nil when the filter allows tool. A
// hidden tool is not "unknown": the user hid it, and needs to know where.
func hiddenTool(s *config.Server, tool string) *httpError {
	h, hidden := s.HiddenBy(tool)
	if !hidden {
		return nil
	}
	var e *httpError
	switch {
	case h.Pattern == tool:
		e = apiErr(http.StatusForbidden, api.CodeToolHidden, "%s.%s is hidden by %q in %s; remove it from that list to use it", s.Name, tool, h.Key, h.Source)
	case h.Pattern != "":
		e = apiErr(http.StatusForbidden, api.CodeToolHidden, "%s.%s is hidden by %q in %s (it matches %q); change that list to use it", s.Name, tool, h.Key, h.Source, h.Pattern)
	default:
		e = apiErr(http.StatusForbidden, api.CodeToolHidden, "%s.%s is hidden: %q in %s does not list it; add it to use it", s.Name, tool, h.Key, h.Source)
	}
	e.body.Namespace, e.body.Tool = s.Name, tool
	return e
}

// findTool picks tool from list or answers 404 with the nearest name.
func findTool(ns, tool string, list []api.Tool) (api.Tool, error) {
	names := make([]string, 0, len(list))
	for _, t := range list {
		if t.Name == tool {
			return t, nil
		}
		names = append(names, t.Name)
	}
	e := apiErr(http.StatusNotFound, api.CodeUnknownTool, "namespace %s has no tool %q", ns, tool)
	e.body.Namespace, e.body.Tool = ns, tool
	e.body.Suggestion = search.Suggest(tool, names)
	return api.Tool{}, e
}

// serveRefresh refetches one namespace or all (concurrently) and saves the
// snapshots; failures are recorded in the snapshot and reported as state
// "error" in the answer, not as an HTTP error.
func (d *daemon) serveRefresh(w http.ResponseWriter, r *http.Request) error {
	var req api.RefreshRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	st := d.state.Load()
	names := st.names
	if req.Namespace != "" {
		s, err := st.server(req.Namespace)
		if err != nil {
			return err
		}
		if err := runnable(s); err != nil {
			return err
		}
		names = []string{req.Namespace}
	}
	var wg sync.WaitGroup
	for _, name := range names {
		if runnable(st.cfg.Servers[name]) != nil {
			continue // listed with its state; never started
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := d.fetch(r.Context(), st, name); err != nil {
				d.log.Printf("refresh %s: %v", name, err)
			}
		}()
	}
	wg.Wait()
	out := make([]api.Namespace, 0, len(names))
	for _, name := range names {
		snap, v := d.toolsOf(st, st.cfg.Servers[name])
		out = append(out, d.namespace(st, name, snap, v))
	}
	return writeJSON(w, api.RefreshResponse{Namespaces: out})
}

// flight is one fetch in progress; concurrent fetches of a hash share it.
type flight struct {
	done chan struct{}
	snap *cache.Snapshot
	err  error
}

// fetch lists the server through its pool and saves the snapshot (or, on
// failure, a snapshot recording the error and no timestamp). Concurrent
// fetches of one server share one listing.
func (d *daemon) fetch(ctx context.Context, st *state, name string) (*cache.Snapshot, error) {
	if err := runnable(st.cfg.Servers[name]); err != nil {
		return nil, err // no failed snapshot: the server was never asked
	}
	h := st.hashes[name]
	d.flightMu.Lock()
	if f, ok := d.flights[h]; ok {
		d.flightMu.Unlock()
		select {
		case <-f.done:
			return f.snap, f.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	f := &flight{done: make(chan struct{})}
	d.flights[h] = f
	d.flightMu.Unlock()

	// The listing outlives a caller that gives up (others may share it),
	// but not the daemon: its shutdown must stay bounded.
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(d.bgCtx, cancel)
	f.snap, f.err = d.list(lctx, st, name)
	stop()
	cancel()
	d.flightMu.Lock()
	delete(d.flights, h)
	d.flightMu.Unlock()
	close(f.done)
	return f.snap, f.err
}

func (d *daemon) list(ctx context.Context, st *state, name string) (*cache.Snapshot, error) {
	s := st.cfg.Servers[name]
	h := st.hashes[name]
	spec, err := d.spec(ctx, st, s, d.snapshot(st, name))
	if err == nil {
		var l *upstream.Listing
		start := time.Now()
		if l, err = d.pools.List(ctx, spec, upstream.Caller{}); err == nil {
			now := time.Now().UTC()
			snap := &cache.Snapshot{
				ServerHash:        h,
				FetchedAt:         &now,
				ProtocolVersion:   l.ProtocolVersion,
				ServerInfo:        l.ServerInfo,
				Capabilities:      l.Capabilities,
				Instructions:      l.Instructions,
				Tools:             l.Tools,
				Prompts:           l.Prompts,
				Resources:         l.Resources,
				ResourceTemplates: l.ResourceTemplates,
				TTLMs:             l.TTLMs,
				CacheScope:        l.CacheScope,
			}
			if snap.Tools == nil {
				snap.Tools = []json.RawMessage{}
			}
			if err := d.schemas.Save(snap); err != nil {
				d.log.Printf("save schemas of %s: %v", name, err)
			}
			d.log.Printf("fetched %s: %d tools in %s", name, len(snap.Tools), since(start))
			return snap, nil
		}
	}
	// The error is saved in the cache and shown by ls: never with an
	// expanded value in it.
	// The stderr tail is kept apart, as a failed call's error keeps it.
	he := mapError(err)
	failed := &cache.Snapshot{ServerHash: h, Error: d.redact(he.body.Error), Stderr: d.redact(he.body.Stderr), Tools: []json.RawMessage{}}
	if serr := d.schemas.Save(failed); serr != nil {
		d.log.Printf("save schemas of %s: %v", name, serr)
	}
	return nil, err
}

// fetchLater refetches name in the background (after a call on a server
// with no snapshot, or after list_changed) so the next `ls` is warm.
func (d *daemon) fetchLater(st *state, name string) {
	d.bgMu.Lock()
	defer d.bgMu.Unlock()
	if d.bgClosed {
		return
	}
	d.bg.Add(1)
	go func() {
		defer d.bg.Done()
		ctx, cancel := context.WithTimeout(d.bgCtx, config.DefaultStartTimeout+config.DefaultCallTimeout)
		defer cancel()
		if _, err := d.fetch(ctx, st, name); err != nil {
			d.log.Printf("fetch %s in background: %v", name, err)
		}
	}()
}

// listChanged is upstream's notification that h's lists changed: the
// snapshot is invalidated at once (discovery shows "unread", never stale
// tools) and refetched in the background from the live server.
func (d *daemon) listChanged(h config.ServerHash, kind string) {
	if err := d.schemas.Invalidate(h); err != nil {
		d.log.Printf("invalidate schemas %s: %v", h, err)
	}
	st := d.state.Load()
	s, ok := st.byHash(h)
	if !ok {
		return
	}
	d.log.Printf("%s: %s list changed; refetching", s.Name, kind)
	d.fetchLater(st, s.Name)
}

// protocolChanged is upstream's notice that h's server now speaks another
// protocol generation than its snapshot remembers: the snapshot is read
// again, so the next start asks for the right one at once.
func (d *daemon) protocolChanged(h config.ServerHash, version string) {
	st := d.state.Load()
	s, ok := st.byHash(h)
	if !ok {
		return
	}
	d.log.Printf("%s: now speaks protocol %s; refetching its schemas", s.Name, version)
	d.fetchLater(st, s.Name)
}

// revalidateFloor is the least time between two readings of a snapshot
// whose caching hint ran out: a server whose lists say ttlMs 0 (read
// again at every use, the default of the SDKs) is read again after a
// call at most this often, not on every call.
var revalidateFloor = 30 * time.Second

// stale reports whether snap's caching hint (a 2026-07-28 server's ttlMs)
// has run out, so the next call reads the lists again in the background.
func stale(snap *cache.Snapshot, now time.Time) bool {
	return usable(snap) && snap.Stale(now) && now.Sub(*snap.FetchedAt) >= revalidateFloor
}

// startBound is how long an explicit discovery request waits for a
// never-read server: its start timeout, plus a little for the listing.
func startBound(s *config.Server) time.Duration {
	t := time.Duration(s.Options.StartTimeout)
	if t <= 0 {
		t = config.DefaultStartTimeout
	}
	return t + 5*time.Second
}
