package search

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The quality benchmark (testdata/README.md): real servers' tools, and
// intents phrased as an agent states a task, each with its acceptable
// answers. The ranker is measured on every intent set beside plain BM25
// over name + description + parameter names, computed here on the same
// tools:
//
//	go test ./search -run Quality -v
//	go test ./search -run Quality -v -args -misses dev   # the dev intents it gets wrong

var (
	missesOf = flag.String("misses", "", "print the misses of this intent set (the studied ones: dev, unseen, fresh, blind5, blind6, since the tenth round blind7 and blind8, since the eleventh blind9, since the twelfth blind10; blind4 and heldout are not looked at intent by intent: testdata/README.md)")
	onlySet  = flag.String("set", "", "measure only this intent set (dev while tuning: the held-out set is never looked at then)")
)

// intentSets are the benchmark's intent sets, in the order they are
// printed (testdata/README.md says how each was made).
var intentSets = []string{"dev", "heldout", "unseen", "fresh", "blind4", "blind5", "blind6", "blind7", "blind8", "blind9", "blind10", "blind11", "blind12", "blind13", "blind14"}

// studiedSets are the intent sets whose misses are studied, which the
// bridge learns from and TestTune and TestAblate judge by (blind7 and
// blind8 since the tenth round, blind9 since the eleventh, blind10 since
// the twelfth); the held-out set and blind4 are never studied
// (testdata/README.md).
var studiedSets = []string{"dev", "unseen", "fresh", "blind5", "blind6", "blind7", "blind8", "blind9", "blind10"}

// neverStudied are the sets judged on their aggregates only (blind11,
// written before the twelfth round, first measured after it; blind12,
// written and first measured before the thirteenth; blind13 before the
// fourteenth; blind14 written in the eighteenth and first measured with
// the rankers before and after its change).
var neverStudied = []string{"heldout", "blind4", "blind11", "blind12", "blind13", "blind14"}

// floors are, per intent set, the recall@5 and MRR@10 under which the
// benchmark fails (a regression): just under what the ranker reaches after
// the nineteenth round (dev 0.994 and 0.980, unseen 0.991 and 0.971, fresh
// 0.995 and 0.975, blind5 0.987 and 0.962, blind6 1.000 and 0.988, blind7
// 1.000 and 0.981, blind8 0.987 and 0.953, blind9 1.000 and 0.988, blind10
// 1.000 and 0.982: studied sets, which the bridge learns from); the
// held-out set's (1.000 and 0.970) and blind4's (0.994 and 0.928; 0.903
// and 0.786 when it was written), never studied, with a wider margin, as
// blind11's (0.960 and 0.880; 0.855 and 0.722 when first measured, after
// the twelfth round), blind12's (0.960 and 0.893; 0.891 and 0.760 when
// first measured, before the thirteenth), blind13's (0.957 and 0.884;
// 0.895 and 0.749 when first measured, before the fourteenth) and
// blind14's (0.954 and 0.882; 0.939 and 0.861 with the seventeenth
// round's ranker). And the ranker must stay above plain BM25 on every set.
var floors = map[string]struct{ recall5, mrr float64 }{
	"dev":     {0.985, 0.965},
	"heldout": {0.98, 0.945},
	"unseen":  {0.985, 0.945},
	"fresh":   {0.985, 0.965},
	"blind4":  {0.95, 0.89},
	"blind5":  {0.985, 0.955},
	"blind6":  {0.985, 0.975},
	"blind7":  {0.99, 0.965},
	"blind8":  {0.975, 0.94},
	"blind9":  {0.99, 0.97},
	"blind10": {0.99, 0.965},
	"blind11": {0.93, 0.855},
	"blind12": {0.945, 0.87},
	"blind13": {0.935, 0.85},
	"blind14": {0.93, 0.86},
}

// leastIntents is, per intent set, the fewest intents it may hold: the
// development and held-out sets together hold at least 80 (the issue's
// minimum), each later set about as many as when it was written.
var leastIntents = map[string]int{"unseen": 60, "fresh": 100, "blind4": 60, "blind5": 120, "blind6": 180, "blind7": 180, "blind8": 180, "blind9": 180, "blind10": 180, "blind11": 180, "blind12": 180, "blind13": 180, "blind14": 180}

// corpus is the recorded tools of every server.
type corpus struct {
	servers []recorded
}

type recorded struct {
	Namespace    string `json:"namespace"`
	Instructions string `json:"instructions"`
	ServerInfo   struct {
		Name  string `json:"name"`
		Title string `json:"title"`
	} `json:"serverInfo"`
	Tools  []json.RawMessage `json:"tools"`
	parsed []Tool
}

func loadCorpus(t testing.TB) *corpus {
	t.Helper()
	files, err := filepath.Glob("testdata/tools/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded tools in testdata/tools: %v", err)
	}
	c := &corpus{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var r recorded
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, raw := range r.Tools {
			tool, err := ParseTool(raw)
			if err != nil || tool.Name == "" {
				t.Fatalf("%s: a tool that does not parse: %v", f, err)
			}
			r.parsed = append(r.parsed, tool)
		}
		c.servers = append(c.servers, r)
	}
	return c
}

// names are the corpus's tools as NS.TOOL, by server and position.
func (c *corpus) name(server, tool int) string {
	return c.servers[server].Namespace + "." + c.servers[server].parsed[tool].Name
}

type intent struct {
	query string
	want  []string
}

func loadIntents(t testing.TB, set string) []intent {
	t.Helper()
	intents, err := readIntents(filepath.Join("testdata", "intents", set+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return intents
}

// readIntents reads an intent file: `QUERY => NS.TOOL...` a line, and
// comments.
func readIntents(path string) ([]intent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []intent
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		q, want, ok := strings.Cut(line, "=>")
		if !ok || strings.TrimSpace(q) == "" || len(strings.Fields(want)) == 0 {
			return nil, fmt.Errorf("%s:%d: want QUERY => NS.TOOL...", path, n)
		}
		out = append(out, intent{strings.TrimSpace(q), strings.Fields(want)})
	}
	return out, sc.Err()
}

// unknownAnswers names the answers of intents that no recorded tool is (a
// typo would make an intent impossible, or teach the bridge nothing).
func (c *corpus) unknownAnswers(intents []intent) []string {
	known := map[string]bool{}
	for si, s := range c.servers {
		for ti := range s.parsed {
			known[c.name(si, ti)] = true
		}
	}
	var out []string
	for _, in := range intents {
		for _, w := range in.want {
			if !known[w] {
				out = append(out, fmt.Sprintf("%q accepts %s, which no server lists", in.query, w))
			}
		}
	}
	return out
}

// ranker returns the NS.TOOL names for a query, best first, at most 10.
type ranker func(query string) []string

// indexes indexes the corpus as the daemon does: one index per server.
func (c *corpus) indexes() []*Index {
	var indexes []*Index
	for _, s := range c.servers {
		docs := make([]*Doc, len(s.parsed))
		for i, tool := range s.parsed {
			docs[i] = NewDoc(tool)
		}
		server := NewServerDoc(Server{Name: s.ServerInfo.Name, Title: s.ServerInfo.Title, Instructions: s.Instructions})
		indexes = append(indexes, NewIndex(docs, server))
	}
	return indexes
}

// tie orders equal scores by NS.TOOL, as the daemon does.
func (c *corpus) tie(a, b Hit) int {
	return strings.Compare(c.name(a.Index, a.Doc), c.name(b.Index, b.Doc))
}

// mcpxRanker ranks with this package.
func mcpxRanker(c *corpus) ranker {
	indexes := c.indexes()
	return func(query string) []string {
		hits := Rank(indexes, ParseQuery(query), 10, c.tie)
		var out []string
		for _, h := range hits {
			out = append(out, c.name(h.Index, h.Doc))
		}
		return out
	}
}

// plainBM25 is the baseline: one bag of words per tool — its name,
// description and parameter names, split into words and lower-cased, no
// stemming, no stop words, no thesaurus — ranked with BM25 (k1 1.2, b 0.75),
// the way hosts' tool search does it.
func plainBM25(c *corpus) ranker {
	type doc struct {
		name string
		tf   map[string]int
		len  int
	}
	var docs []doc
	df := map[string]int{}
	total := 0
	tokens := func(s string) []string {
		var out []string
		for _, w := range words(s) {
			out = append(out, strings.ToLower(w))
		}
		return out
	}
	for si, s := range c.servers {
		for ti, tool := range s.parsed {
			d := doc{name: c.name(si, ti), tf: map[string]int{}}
			text := tool.Name + " " + tool.Description
			for _, p := range tool.Params {
				text += " " + p.Name
			}
			for _, w := range tokens(text) {
				if d.tf[w] == 0 {
					df[w]++
				}
				d.tf[w]++
				d.len++
			}
			total += d.len
			docs = append(docs, d)
		}
	}
	n := float64(len(docs))
	avg := float64(total) / n
	return func(query string) []string {
		type scored struct {
			name  string
			score float64
		}
		var hits []scored
		q := tokens(query)
		slices.Sort(q)
		q = slices.Compact(q)
		for _, d := range docs {
			var s float64
			for _, w := range q {
				tf := float64(d.tf[w])
				if tf == 0 {
					continue
				}
				idf := math.Log(1 + (n-float64(df[w])+0.5)/(float64(df[w])+0.5))
				s += idf * tf * 2.2 / (tf + 1.2*(0.25+0.75*float64(d.len)/avg))
			}
			if s > 0 {
				hits = append(hits, scored{d.name, s})
			}
		}
		slices.SortStableFunc(hits, func(a, b scored) int {
			if c := cmp.Compare(b.score, a.score); c != 0 {
				return c
			}
			return strings.Compare(a.name, b.name)
		})
		var out []string
		for _, h := range hits[:min(10, len(hits))] {
			out = append(out, h.name)
		}
		return out
	}
}

// scores are recall@1, recall@5 and MRR@10 over a set of intents.
type scores struct {
	r1, r5, mrr float64
	misses      []string // intents without an acceptable answer first
}

func evaluate(r ranker, intents []intent) scores {
	var s scores
	for _, in := range intents {
		got := r(in.query)
		rank := slices.IndexFunc(got, func(name string) bool { return slices.Contains(in.want, name) }) + 1
		if rank == 1 {
			s.r1++
		}
		if rank >= 1 && rank <= 5 {
			s.r5++
		}
		if rank != 1 {
			s.misses = append(s.misses, fmt.Sprintf("rank %d %q: want %v, got %v", rank, in.query, in.want, got[:min(5, len(got))]))
		}
		if rank >= 1 {
			s.mrr += 1 / float64(rank)
		}
	}
	n := float64(len(intents))
	s.r1, s.r5, s.mrr = s.r1/n, s.r5/n, s.mrr/n
	return s
}

func TestQuality(t *testing.T) {
	c := loadCorpus(t)
	tools := 0
	for _, s := range c.servers {
		tools += len(s.parsed)
	}
	sets := map[string][]intent{}
	for _, set := range intentSets {
		sets[set] = loadIntents(t, set)
	}
	sizes := make([]string, 0, len(intentSets))
	small := len(c.servers) < 10 || tools < 150 || len(sets["dev"])+len(sets["heldout"]) < 80
	for _, set := range intentSets {
		sizes = append(sizes, fmt.Sprintf("%d %s", len(sets[set]), set))
		small = small || len(sets[set]) < leastIntents[set]
	}
	if small {
		t.Fatalf("the benchmark is too small: %d servers, %d tools; intents: %s", len(c.servers), tools, strings.Join(sizes, ", "))
	}
	for _, set := range slices.Concat(intentSets, trainSets) {
		for _, bad := range c.unknownAnswers(loadIntents(t, set)) {
			t.Errorf("%s: %s", set, bad)
		}
	}

	if slices.Contains(neverStudied, *missesOf) {
		t.Fatalf("-misses %s: a never-studied set is judged on its aggregates only (testdata/README.md)", *missesOf)
	}
	ours, base := mcpxRanker(c), plainBM25(c)
	t.Logf("%d tools of %d servers; intents: %s", tools, len(c.servers), strings.Join(sizes, ", "))
	t.Logf("| intents | ranker | recall@1 | recall@5 | MRR@10 |")
	t.Logf("| --- | --- | --- | --- | --- |")
	for _, set := range intentSets {
		if *onlySet != "" && *onlySet != set {
			continue
		}
		b, o := evaluate(base, sets[set]), evaluate(ours, sets[set])
		t.Logf("| %s (%d) | plain BM25 (name + description + parameter names) | %.3f | %.3f | %.3f |", set, len(sets[set]), b.r1, b.r5, b.mrr)
		t.Logf("| %s (%d) | mcpx search | %.3f | %.3f | %.3f |", set, len(sets[set]), o.r1, o.r5, o.mrr)
		if *missesOf == set {
			for _, m := range o.misses {
				t.Logf("miss: %s", m)
			}
		}
		if f := floors[set]; o.r5 < f.recall5 || o.mrr < f.mrr {
			t.Errorf("%s: recall@5 %.2f, MRR@10 %.2f: below the floor (%.2f, %.2f)", set, o.r5, o.mrr, f.recall5, f.mrr)
		}
		if o.r5 <= b.r5 || o.mrr <= b.mrr {
			t.Errorf("%s: recall@5 %.2f, MRR@10 %.2f: not above plain BM25 (%.2f, %.2f)", set, o.r5, o.mrr, b.r5, b.mrr)
		}
	}
}

// TestTypicalLen: typicalLen is what it says, the mean length of each
// field over the recorded tools (to the tenth it is written with), so a
// new recording that moves it shows here.
func TestTypicalLen(t *testing.T) {
	var sum [FieldInstructions]float64
	n := 0
	for _, s := range loadCorpus(t).servers {
		for _, tool := range s.parsed {
			d := NewDoc(tool)
			for f := range sum {
				sum[f] += float64(d.lens[f])
			}
			n++
		}
	}
	for f := range sum {
		if mean := sum[f] / float64(n); math.Abs(mean-typicalLen[f]) > 0.05 {
			t.Errorf("field %d: mean length %.2f over %d recorded tools, typicalLen says %.1f", f, mean, n, typicalLen[f])
		}
	}
}
