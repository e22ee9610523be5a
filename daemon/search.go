package daemon

import (
	"cmp"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/search"
)

// Search ranks cached tools (never starting a server) with the search
// package: each snapshot's tools are indexed once per store digest (their
// documents) and once per view (the inverted index of the tools the
// server's filter allows, with the server's instructions). The namespace is
// a filter (?ns= or an "NS:" prefix in the query), never a matched word.
// Ties sort by namespace.tool.

// defaultSearchLimit is how many results a search returns unless asked.
const defaultSearchLimit = 10

// docsOf returns the search documents of a snapshot's tools by name, built
// once per snapshot digest (parsing definitions and stemming are the
// costly part).
func (ix *snapIndex) docsOf(raws []json.RawMessage) map[string]*search.Doc {
	ix.docsOnce.Do(func() {
		ix.docs = make(map[string]*search.Doc, len(raws))
		for _, raw := range raws {
			if t, err := search.ParseTool(raw); err == nil && t.Name != "" {
				ix.docs[t.Name] = search.NewDoc(t)
			}
		}
	})
	return ix.docs
}

// searchIndex indexes the view's tools with their search documents (from
// docsOf, called once per view: the view and the documents both belong to
// one snapshot), in the view's order, with what the snapshot's server says
// of itself (its name, title and instructions).
func (v *toolView) searchIndex(docsOf func() map[string]*search.Doc, snap *cache.Snapshot) *search.Index {
	v.searchOnce.Do(func() {
		byName := docsOf()
		var docs []*search.Doc
		for i := range v.tools {
			if doc := byName[v.tools[i].Name]; doc != nil {
				v.searchTools = append(v.searchTools, &v.tools[i])
				docs = append(docs, doc)
			}
		}
		server := search.Server{Instructions: snap.Instructions}
		var info struct{ Name, Title string }
		if json.Unmarshal(snap.ServerInfo, &info) == nil {
			server.Name, server.Title = info.Name, info.Title
		}
		v.search = search.NewIndex(docs, search.NewServerDoc(server))
	})
	return v.search
}

// serveSearch answers GET /v1/search?q=WORDS[&ns=NS][&limit=N]. A query
// word "NS:" (or "NS:WORD") filters by namespace; an address in the query
// (https://…, localhost:3000) is a word, not a namespace.
func (d *daemon) serveSearch(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query().Get("q")
	ns := r.URL.Query().Get("ns")
	limit := defaultSearchLimit
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			return apiErr(http.StatusBadRequest, api.CodeBadRequest, "limit must be a whole number, not %q", l)
		}
		limit = n
	}
	var text []string
	for _, f := range strings.Fields(q) {
		if name, rest, ok := strings.Cut(f, ":"); ok && name != "" && ns == "" && !strings.HasPrefix(rest, "//") && !isPort(rest) {
			ns = name
			if rest != "" {
				text = append(text, rest)
			}
			continue
		}
		text = append(text, f)
	}
	if len(text) == 0 {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "search needs words: ?q=WORDS")
	}
	st := d.state.Load()
	names := st.names
	if ns != "" {
		if _, err := st.server(ns); err != nil {
			return err
		}
		names = []string{ns}
	}
	var indexes []*search.Index
	var views []*toolView
	var unread []string
	untrusted := 0
	for _, name := range names {
		s := st.cfg.Servers[name]
		if s.Untrusted != "" {
			// Not read, and `mcpx refresh` would not read it either.
			untrusted++
			continue
		}
		if s.Self || s.Problem != "" {
			continue // never read: `mcpx ls` says why
		}
		snap, view := d.toolsOf(st, s)
		if snap == nil {
			unread = append(unread, name)
		}
		if view == nil {
			continue
		}
		// Documents cover every tool of the snapshot; the server's tool
		// filters apply through the view, which indexes its tools once.
		indexes = append(indexes, view.searchIndex(func() map[string]*search.Doc {
			return view.idx.derived.docsOf(snap.Tools)
		}, snap))
		views = append(views, view)
	}
	tool := func(h search.Hit) *api.Tool { return views[h.Index].searchTools[h.Doc] }
	hits := search.Rank(indexes, search.ParseQuery(strings.Join(text, " ")), limit, func(a, b search.Hit) int {
		return compareQualified(tool(a), tool(b))
	})
	results := make([]api.SearchHit, 0, len(hits))
	for _, h := range hits {
		t := *tool(h)
		t.Definition = nil // results name tools; `mcpx schema` has the rest
		results = append(results, api.SearchHit{Tool: t, Score: h.Score, Why: whyOf(h.Why)})
	}
	resp := api.SearchResponse{Query: q, Results: results, Unread: unread, Untrusted: untrusted}
	if r.URL.Query().Get("brief") == "1" && len(unread) > api.UnreadNamed {
		// What `mcpx search` prints names a few; with hundreds of
		// servers never read, the rest were most of the answer.
		resp.Unread, resp.UnreadMore = unread[:api.UnreadNamed], len(unread)-api.UnreadNamed
	}
	return writeJSON(w, resp)
}

// isPort: "localhost:3000" is an address in the query, not a namespace.
func isPort(s string) bool {
	_, err := strconv.ParseUint(strings.TrimSuffix(s, "/"), 10, 16)
	return err == nil
}

// whyOf is a hit's matches as the API gives them.
func whyOf(ms []search.Match) []api.SearchMatch {
	out := make([]api.SearchMatch, 0, len(ms))
	for _, m := range ms {
		fields := make([]string, len(m.Fields))
		for i, f := range m.Fields {
			fields[i] = f.String()
		}
		out = append(out, api.SearchMatch{Word: m.Word, Via: m.Via, Fields: fields})
	}
	return out
}

// compareQualified compares a.Namespace+"."+a.Name with b's, without
// building the strings.
func compareQualified(a, b *api.Tool) int {
	if a.Namespace == b.Namespace {
		return strings.Compare(a.Name, b.Name)
	}
	la, lb := len(a.Namespace)+1+len(a.Name), len(b.Namespace)+1+len(b.Name)
	for i := 0; i < la && i < lb; i++ {
		if x, y := qualifiedAt(a, i), qualifiedAt(b, i); x != y {
			return cmp.Compare(x, y)
		}
	}
	return cmp.Compare(la, lb)
}

// qualifiedAt is byte i of t.Namespace+"."+t.Name.
func qualifiedAt(t *api.Tool, i int) byte {
	switch n := len(t.Namespace); {
	case i < n:
		return t.Namespace[i]
	case i == n:
		return '.'
	default:
		return t.Name[i-n-1]
	}
}
