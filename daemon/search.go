package daemon

import (
	"cmp"
	"net/http"
	"slices"
	"strings"

	"github.com/mcpx-dev/mcpx/daemon/api"
)

// Search ranks cached tools (never starting a server): a tool matching every
// word ranks above any tool matching only some; within a tier a word found
// in the name (namespace.tool) scores over one found in the description;
// ties sort by namespace.tool. Matching is case-insensitive substring.
const (
	scoreAll  = 100 // every word matched
	scoreName = 2   // per word found in the name
	scoreDesc = 1   // per word found only in the description
)

// score rates t against lowercase words; 0 means no match.
func score(t api.Tool, words []string) float64 {
	name := strings.ToLower(t.Namespace + "." + t.Name)
	desc := strings.ToLower(t.Description)
	var s, matched int
	for _, w := range words {
		switch {
		case strings.Contains(name, w):
			s += scoreName
		case strings.Contains(desc, w):
			s += scoreDesc
		default:
			continue
		}
		matched++
	}
	if matched == 0 {
		return 0
	}
	if matched == len(words) {
		s += scoreAll
	}
	return float64(s)
}

func search(all []api.Tool, q string) []api.SearchHit {
	words := strings.Fields(strings.ToLower(q))
	hits := []api.SearchHit{}
	if len(words) == 0 {
		return hits
	}
	for _, t := range all {
		if s := score(t, words); s > 0 {
			hits = append(hits, api.SearchHit{Tool: t, Score: s})
		}
	}
	slices.SortFunc(hits, func(a, b api.SearchHit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return cmp.Compare(a.Namespace+"."+a.Name, b.Namespace+"."+b.Name)
	})
	return hits
}

func (d *daemon) serveSearch(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query().Get("q")
	if strings.TrimSpace(q) == "" {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "search needs words: ?q=WORDS")
	}
	st := d.state.Load()
	var all []api.Tool
	for _, name := range st.names {
		_, v := d.toolsOf(st, st.cfg.Servers[name])
		all = append(all, v.list()...)
	}
	return writeJSON(w, api.SearchResponse{Query: q, Results: search(all, q)})
}
