package daemon

import (
	"cmp"
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Search ranks cached tools (never starting a server) with BM25 over their
// words: the tool's name (split at _, -, . and camelCase), title,
// description and parameter names, each stemmed (Porter) with English stop
// words dropped. A word in the name counts more than one in the title, and
// that more than one in the description or a parameter name. The namespace
// is a filter (?ns= or an "NS:" prefix in the query), never a matched word.
// Ties sort by namespace.tool.

// Field weights: how many occurrences one word in the field is worth.
const (
	weightName  = 3
	weightTitle = 2
	weightDesc  = 1
	weightParam = 1
)

// BM25 parameters (the usual values).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// defaultSearchLimit is how many results a search returns unless asked.
const defaultSearchLimit = 10

// searchDoc is one tool's weighted term frequencies.
type searchDoc struct {
	terms  []termFreq
	length float64
}

type termFreq struct {
	term string
	tf   float64
}

// docsOf returns the search documents of a snapshot's tools by name, built
// once per snapshot digest (tokenizing and stemming are the costly part).
func (ix *snapIndex) docsOf(ns string, raws []json.RawMessage) map[string]*searchDoc {
	ix.docsOnce.Do(func() {
		ix.docs = make(map[string]*searchDoc, len(raws))
		for _, raw := range raws {
			if t, ok := toolOf(ns, raw); ok {
				ix.docs[t.Name] = newSearchDoc(t)
			}
		}
	})
	return ix.docs
}

func newSearchDoc(t api.Tool) *searchDoc {
	tf := map[string]float64{}
	var length float64
	add := func(text string, w float64) {
		for _, term := range terms(text) {
			tf[term] += w
			length += w
		}
	}
	var def struct {
		Title       string `json:"title"`
		Annotations struct {
			Title string `json:"title"`
		} `json:"annotations"`
		InputSchema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"inputSchema"`
	}
	_ = json.Unmarshal(t.Definition, &def)
	add(t.Name, weightName)
	title := def.Title
	if title == "" {
		title = def.Annotations.Title
	}
	add(title, weightTitle)
	add(t.Description, weightDesc)
	for p := range def.InputSchema.Properties {
		add(p, weightParam)
	}
	// A slice, not the map: a snapshot keeps 10,000 of these.
	d := &searchDoc{terms: make([]termFreq, 0, len(tf)), length: length}
	for term, f := range tf {
		d.terms = append(d.terms, termFreq{term, f})
	}
	return d
}

// searchIndex is the inverted index of a set of tools (one view's): the
// length of each tool's document and, per term, the tools whose document
// has it. A search then touches only the tools that share a word with it.
type searchIndex struct {
	tools    []*api.Tool
	lengths  []float64
	total    float64 // the sum of lengths
	postings map[string][]posting
}

type posting struct {
	doc int32 // index into tools
	tf  float64
}

// newSearchIndex indexes tools, whose documents are docs (same order).
func newSearchIndex(tools []*api.Tool, docs []*searchDoc) *searchIndex {
	ix := &searchIndex{tools: tools, lengths: make([]float64, len(docs)), postings: map[string][]posting{}}
	for i, d := range docs {
		ix.lengths[i] = d.length
		ix.total += d.length
		for _, t := range d.terms {
			ix.postings[t.term] = append(ix.postings[t.term], posting{int32(i), t.tf})
		}
	}
	return ix
}

// terms splits text into stemmed search terms: words at anything that is
// not a letter or digit and at camelCase humps, lower-cased, stop words
// dropped.
func terms(text string) []string {
	var out []string
	for _, w := range words(text) {
		w = strings.ToLower(w)
		if stopWords[w] {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// words splits at non-alphanumerics and camelCase ("readTextFile" →
// read, Text, File; "HTTPServer" → HTTP, Server).
func words(text string) []string {
	var out []string
	rs := []rune(text)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, string(rs[start:end]))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		switch {
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush(i)
			start = i
		case unicode.IsUpper(prev) && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			flush(i)
			start = i
		case unicode.IsDigit(r) != unicode.IsDigit(prev):
			flush(i)
			start = i
		}
	}
	flush(len(rs))
	return out
}

// stopWords are English words too common to say anything about a tool.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
		before being below between both but by can could did do does doing down during each few for from further
		had has have having he her here hers him his how i if in into is it its itself just me more most my
		no nor not of off on once only or other our ours out over own same she should so some such than that
		the their theirs them then there these they this those through to too under until up very was we were
		what when where which while who whom why will with would you your yours use used using uses via e g eg
		etc`) {
		m[w] = true
	}
	return m
}()

// rank scores the tools of indexes against the query terms with BM25 (the
// indexes are one collection) and returns the hits with a positive score,
// best first, ties by namespace.tool, at most limit (0: all). Only the hits
// returned are built: with a limit, the best are kept in a bounded sorted
// list as the scores are computed.
func rank(indexes []*searchIndex, query []string, limit int) []api.SearchHit {
	hits := []api.SearchHit{}
	var n, total float64
	for _, ix := range indexes {
		n += float64(len(ix.tools))
		total += ix.total
	}
	if len(query) == 0 || n == 0 {
		return hits
	}
	avg := total / n
	if avg == 0 {
		avg = 1
	}
	var uniq []string
	for _, q := range query {
		if !slices.Contains(uniq, q) {
			uniq = append(uniq, q)
		}
	}
	idf := make([]float64, len(uniq))
	for j, q := range uniq {
		var df float64
		for _, ix := range indexes {
			df += float64(len(ix.postings[q]))
		}
		idf[j] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	type scored struct {
		score float64
		tool  *api.Tool
	}
	// before orders two candidates: higher score first, then by
	// namespace.tool.
	before := func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return compareQualified(a.tool, b.tool)
	}
	var top []scored
	var scores []float64
	for _, ix := range indexes {
		scores = slices.Grow(scores[:0], len(ix.tools))[:len(ix.tools)]
		clear(scores)
		matched := false
		for j, q := range uniq {
			for _, p := range ix.postings[q] {
				norm := bm25K1 * (1 - bm25B + bm25B*ix.lengths[p.doc]/avg)
				scores[p.doc] += idf[j] * p.tf * (bm25K1 + 1) / (p.tf + norm)
				matched = true
			}
		}
		if !matched {
			continue
		}
		for i, s := range scores {
			if s <= 0 {
				continue
			}
			c := scored{math.Round(s*1000) / 1000, ix.tools[i]}
			if limit <= 0 {
				top = append(top, c)
				continue
			}
			if len(top) == limit && before(c, top[limit-1]) >= 0 {
				continue
			}
			at, _ := slices.BinarySearchFunc(top, c, before)
			if len(top) == limit {
				top = top[:limit-1]
			}
			top = slices.Insert(top, at, c)
		}
	}
	if limit <= 0 {
		slices.SortFunc(top, before)
	}
	for _, c := range top {
		t := *c.tool
		t.Definition = nil // results name tools; `mcpx schema` has the rest
		hits = append(hits, api.SearchHit{Tool: t, Score: c.score})
	}
	return hits
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

// serveSearch answers GET /v1/search?q=WORDS[&ns=NS][&limit=N]. A query
// word "NS:" (or a query starting "NS:WORD") filters by namespace.
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
		if name, rest, ok := strings.Cut(f, ":"); ok && name != "" && ns == "" {
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
	var indexes []*searchIndex
	var unread []string
	for _, name := range names {
		s := st.cfg.Servers[name]
		snap, view := d.toolsOf(st, s)
		if snap == nil {
			unread = append(unread, name)
		}
		if view == nil {
			continue
		}
		// Documents cover every tool of the snapshot; the server's tool
		// filters apply through the view, which indexes its tools once.
		indexes = append(indexes, view.searchIndex(func() map[string]*searchDoc {
			return view.idx.derived.docsOf(s.Name, snap.Tools)
		}))
	}
	return writeJSON(w, api.SearchResponse{Query: q, Results: rank(indexes, terms(strings.Join(text, " ")), limit), Unread: unread})
}

// searchIndex indexes the view's tools with their search documents (from
// docsOf, called once per view: the view and the documents both belong to
// one snapshot), in the view's order.
func (v *toolView) searchIndex(docsOf func() map[string]*searchDoc) *searchIndex {
	v.searchOnce.Do(func() {
		byName := docsOf()
		var tools []*api.Tool
		var docs []*searchDoc
		for i := range v.tools {
			if doc := byName[v.tools[i].Name]; doc != nil {
				tools = append(tools, &v.tools[i])
				docs = append(docs, doc)
			}
		}
		v.search = newSearchIndex(tools, docs)
	})
	return v.search
}
