package search

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
)

// Ranking: BM25F. For each query word, each tool scores
//
//	weight × idf × t / (k1 + t),  t = Σ fieldWeight[f] × tf[f] / (1 − b[f] + b[f] × len[f] / avglen[f])
//
// for the best of the terms the word matches (its own, weight 1, or one the
// thesaurus gives, weightEquivalent or weightRelated, or one two steps
// away through it, at weightSecondHop of both steps), summed over the
// query's words. Fields are weighted and length-normalised apart, so a long
// parameter description neither drowns a word in the name nor gains by its
// length; avglen is the average over the tool's own server (an Index),
// shrunk toward a typical tool's (lengthPrior), so t is computed once,
// when the index is built. The server's instructions and
// its own name and title are two more fields of each of its tools
// (normalised by the average over the servers searched): "in memory" finds
// the tools of "memory-server", whose tools never say "memory". idf is taken over every tool searched. Then the name
// decides among tools that all mention the query's
// words: a tool's score grows by up to nameCoverage times itself as the
// query covers more of its name's words (a word that says what state a
// thing is in, "the merged PRs", "which issues are open", covers no
// name's verb: it is not the action asked for; a plural covers a name
// that ends in its singular only numberCover of itself: "the open PRs"
// are list_pull_requests' more than get_pull_request's); and when the query is a question,
// a tool whose name says it changes something is scaled by
// questionPenalty, when it names no action at all, by lookPenalty; and
// when the query names a server ("in notion"), the tools of the servers it
// does not name are scaled by otherServerPenalty. A term a tool's
// description says it converts from, or into, counts conversionPenalty of
// itself where the query has it on the other side (concept.wrongSide).
//
// Weights tuned on the development intents (testdata/README.md). A rule
// stays only if those do not lose by it and the unseen intents' aggregates
// do not fall (TestAblate).

// fieldWeight is how much one occurrence of a term in each field counts.
var fieldWeight = [numFields]float64{
	FieldName:         4,
	FieldTitle:        0.5,
	FieldDescription:  1,
	FieldParam:        0.4,
	FieldParamDesc:    0.8,
	FieldEnum:         0.75,
	FieldInstructions: 0.15,
	FieldServer:       0.8,
}

// fieldB is BM25's length normalisation per field (0: none, 1: full).
// Descriptions and parameter descriptions are normalised nearly in full:
// once lengths are measured against a typical tool's too (lengthPrior),
// a word in a long text says less of the tool than one in a short text
// (cross-validated, 21 folds, both fields at once: MRR@10 0.840 as they
// were, 0.5 and 0.3; 0.843 at 0.75; 0.845 at 0.9 and at 1).
var fieldB = [numFields]float64{
	FieldName:         0.5,
	FieldTitle:        0.5,
	FieldDescription:  0.9,
	FieldParam:        0.5,
	FieldParamDesc:    0.9,
	FieldEnum:         0.5,
	FieldInstructions: 0.75,
	FieldServer:       0,
}

// questionPenalty scales a tool whose name says it changes something
// (create, delete, update, send…) when the query is a question
// (isQuestion), even one that names its verb: an agent that asks wants to
// look — "which channels can I post in" wants the channels, "when was it
// created" a date.
var questionPenalty = 0.5

// lookPenalty scales a tool whose name says it changes something when the
// query names no action at all (Query.look): "child blocks of block abc"
// wants the children, not to append some.
var lookPenalty = 0.8

// writePenalty is what scales the tools whose names say they change
// something, for q: questionPenalty for a question, lookPenalty for a
// request that names no action, else 1.
func (q Query) writePenalty() float64 {
	switch {
	case q.question:
		return questionPenalty
	case q.look:
		return lookPenalty
	}
	return 1
}

// isWriteVerb reports whether a name's term (stemmed) is a verb that
// changes something.
func isWriteVerb(t string) bool {
	switch t {
	case "creat", "add", "new", "insert", "post", "make", "gener", "regist",
		"delet", "remov", "drop", "eras", "destroi", "purg", "clear", "cleanup", "uninstal",
		"updat", "edit", "patch", "set", "modifi", "chang", "renam", "assign", "upgrad", "scale", "toggl",
		"write", "save", "store", "push", "upload", "commit", "merg", "move", "fork", "copi",
		"send", "publish", "repli", "react", "submit", "instal", "appli", "deploi", "close", "archiv":
		return true
	}
	return false
}

// conversionPenalty scales the weight of a term that a tool's description
// says it converts from when the query asks for it (its word is the
// task's own: "coords for 1600 Amphitheatre Parkway"), or converts into
// when the query gives it (a value, or a word after a preposition: "the
// address at 40.7,-74.0"): the query wants the other direction.
var conversionPenalty = 0.25

// wrongSide is the side of a tool's conversion (Doc.conv) that c cannot
// be on: a word the query gives (a value, or after a preposition) is what
// a tool converts from, so not into; a word of the task's own is what the
// tool is to give, not to take. 0: either (a phrasal verb, a cue).
func (c *concept) wrongSide() conv {
	switch own := c.alts[0].weight; {
	case c.shape || own > 0 && own < 1:
		return convInto
	case own >= 1:
		return convFrom
	}
	return 0
}

// minAltWeight is the least weight × idf of a thesaurus entry that counts.
const minAltWeight = 0.02

var (
	bm25K1       = 0.9
	nameCoverage = 2.0
	// stateCover is how much a word that says a thing's state
	// (concept.state) covers a name's verb, against 1 for any other word.
	stateCover = 0.0
	// numberCover is how much a word written in the plural ("the PRs")
	// covers a name whose last word is that word in the singular
	// (get_pull_request): the name is about one, the query about several.
	// No less than weightRelated, so that a word the thesaurus relates
	// (whose number says nothing) never covers more than the word itself.
	numberCover = 0.7
)

// Hit is one ranked tool: the index (position in Rank's indexes) and the
// document (position in that index's docs) it is, its score, and why.
type Hit struct {
	Index, Doc int
	Score      float64
	Why        []Match
}

// Match is one query word a hit matched: through which thesaurus entry,
// if not itself, and in which fields.
type Match struct {
	Word   string  // the query's word or phrase
	Via    string  // the thesaurus entry it matched through ("": the word itself)
	Fields []Field // where the hit has it, in Field order
}

// Rank scores the tools of indexes (one collection: term statistics are
// taken over all of them) against q and returns those that match, best
// first, at most limit (0: all). Equal scores (rounded to 1/1000) are
// ordered by tie. Only the hits returned are explained.
func Rank(indexes []*Index, q Query, limit int, tie func(a, b Hit) int) []Hit {
	st := newStats(indexes, q)
	if st == nil {
		return nil
	}
	before := func(a, b Hit) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		return tie(a, b)
	}
	var top []Hit
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	for ixi, ix := range indexes {
		for d, acc := range sc.score(st, ix, q) {
			if st.unnamed != nil && st.unnamed[ixi] {
				acc.score *= float32(otherServerPenalty)
			}
			s := float64(acc.score)
			if s <= 0 {
				continue
			}
			h := Hit{Index: ixi, Doc: d, Score: math.Round(s*1000) / 1000}
			if limit <= 0 {
				top = append(top, h)
				continue
			}
			if len(top) == limit && before(h, top[limit-1]) >= 0 {
				continue
			}
			at, _ := slices.BinarySearchFunc(top, h, before)
			if len(top) == limit {
				top = top[:limit-1]
			}
			top = slices.Insert(top, at, h)
		}
	}
	if limit <= 0 {
		slices.SortFunc(top, before)
	}
	for i := range top {
		top[i].Why = explain(indexes[top[i].Index], top[i].Doc, q)
	}
	return top
}

// stats are the collection's statistics a query needs.
type stats struct {
	avg     [numFields]float64 // average field lengths
	idf     [][]float64        // per concept, per alternative
	unnamed []bool             // per index: the query names another server, not this one (namedServers)
}

func newStats(indexes []*Index, q Query) *stats {
	var n float64
	var lens [numFields]float64
	for _, ix := range indexes {
		n += float64(len(ix.docs))
		for f := range lens {
			lens[f] += ix.total[f]
		}
	}
	if n == 0 || q.Empty() {
		return nil
	}
	st := &stats{idf: make([][]float64, len(q.concepts)), unnamed: namedServers(indexes, q)}
	for f, l := range lens {
		st.avg[f] = max(l/n, 1)
	}
	for i, c := range q.concepts {
		st.idf[i] = make([]float64, len(c.alts))
		for j, a := range c.alts {
			var df float64
			for _, ix := range indexes {
				df += float64(ix.df(a.term))
			}
			st.idf[i][j] = math.Log(1 + (n-df+0.5)/(df+0.5))
		}
		// What the thesaurus adds says no more than the word itself: a
		// rare synonym must not outweigh the word a tool does have (a
		// cue or a value's kind has no word of its own to weigh).
		if own := st.idf[i][0]; c.alts[0].weight > 0 && !c.shape {
			for j := 1; j < len(c.alts); j++ {
				st.idf[i][j] = min(st.idf[i][j], own)
			}
		}
	}
	return st
}

// otherServerPenalty scales the tools of a server the query does not
// name when it names another: "add a page in notion" wants Notion, not
// memory's add_observations.
var otherServerPenalty = 0.6

// namedServers returns, per index, whether the query names some other
// server and not this one (nil when it names none). A query names a server
// when one of its own words (or an equivalent: k8s for kubernetes), not a
// topic or a value's, is in the server's own name and in no other
// server's tool's name ("search" of brave-search names no server).
func namedServers(indexes []*Index, q Query) []bool {
	var named []bool
	for i, ix := range indexes {
		if ix.server == nil {
			continue
		}
		for _, c := range q.concepts {
			if names(indexes, i, c) {
				if named == nil {
					named = make([]bool, len(indexes))
				}
				named[i] = true
				break
			}
		}
	}
	if named == nil {
		return nil
	}
	for i := range named {
		named[i] = !named[i]
	}
	return named
}

// names reports whether concept c names the server of indexes[i].
func names(indexes []*Index, i int, c concept) bool {
	if c.shape || c.pair || isIndefinite(c.word) {
		return false
	}
	for j, a := range c.alts {
		least := weightContext // its own word, in context or not
		if j > 0 {
			least *= weightEquivalent // an equivalent, not a related word
		}
		if a.weight < least-1e-9 {
			continue
		}
		tf, ok := indexes[i].server.find(a.term)
		if !ok || tf[FieldServer] == 0 {
			continue
		}
		distinct := true
		for k, other := range indexes {
			if k != i && slices.ContainsFunc(other.postings[a.term], func(p posting) bool { return p.inName }) {
				distinct = false
				break
			}
		}
		if distinct {
			return true
		}
	}
	return false
}

// isIndefinite reports whether a query's word is an indefinite pronoun
// ("dump everything you remember"), which names no server even where one
// is called that (server-everything).
func isIndefinite(w string) bool {
	switch w {
	case "everything", "anything", "something", "nothing":
		return true
	}
	return false
}

// fieldNorm is the BM25F weight of tf occurrences in field f of a
// document whose field is l terms long, where the average is avg.
func fieldNorm(f Field, tf uint8, l uint16, avg float64) float64 {
	return fieldWeight[f] * float64(tf) / (1 - fieldB[f] + fieldB[f]*float64(l)/avg)
}

// scratch holds the per-tool arrays of one Rank call, reused across
// indexes and, through scratchPool, across calls: allocating and
// collecting them on every query cost more than the ranking (28 bytes a
// tool, acc, cur and touched: 280 KB kept for a daemon with 10,000 tools,
// until two collections find them unused).
type scratch struct {
	acc     []toolAcc    // per tool of the index: the score so far
	cur     []conceptAcc // per tool: the current concept's best alternative
	touched []int32      // the tools cur holds something for
	tfs     []float64    // per tool: an alternative's weight, when its server's instructions or name have it
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

type toolAcc struct {
	score   float32
	covered float32 // how many of the name's words the query covers (weighted)
}

// conceptAcc is a tool's best match of the current concept, and the sum
// of its bridge words' matches (learned); a tool is in touched once best
// or cover is set (a second entry, for a match of weight 0, adds
// nothing). wrong is its best match on the wrong side of the tool's
// conversion (concept.wrongSide), 0 if none: then the concept counts only
// that, whatever its other words match (the bridge's "address" → geocode
// must not undo "address" being what geocoding takes).
type conceptAcc struct {
	best, cover, wrong float32
	learned            float32 // the sum of its bridge words' matches
}

// bridgeSum scales the sum of a concept's bridge-word matches, which
// counts for the concept where it is more than its best single match: a
// word's bridge words are the words its answers' text held, so a tool
// that holds several of them is likelier what the word meant than one
// that holds only the strongest. Chosen by cross-validation
// (TestBridgeCrossValidate, MCPX_SEARCH_BRIDGE_SUMS): MRR@10 over the 21
// folds 0.800 without, 0.806 at 0.3, 0.810 at 0.5 and 0.6, 0.806 at 0.8,
// 0.796 at 1 (bridge weight 1.2).
var bridgeSum = 0.5

func grown[T any](s []T, n int) []T {
	s = slices.Grow(s[:0], n)[:n]
	clear(s)
	return s
}

// score returns the score of every tool of ix (0: no match), in sc.acc.
func (sc *scratch) score(st *stats, ix *Index, q Query) []toolAcc {
	n := len(ix.docs)
	sc.acc = grown(sc.acc, n)
	sc.cur = grown(sc.cur, n)
	if cap(sc.touched) < n {
		sc.touched = make([]int32, 0, n)
	}
	for i, c := range q.concepts {
		sc.touched = sc.touched[:0]
		for j, a := range c.alts {
			idf := st.idf[i][j]
			if j > 0 && a.weight*idf < minAltWeight {
				continue // a thesaurus entry nearly every tool has says nothing, and would cost a pass over them all
			}
			// The word's number says something of its own term and of
			// the words the thesaurus gives for it (PRs: pull requests),
			// not of their entries (rows → sql → query).
			agree := j == 0 || c.alts[0].weight > 0 && a.weight >= c.alts[0].weight*weightEquivalent-1e-9
			sc.matchAlt(st, ix, &c, a, idf, agree)
		}
		for _, d := range sc.touched {
			c := &sc.cur[d]
			if c.wrong > 0 {
				c.best = c.wrong
			} else {
				c.best = max(c.best, float32(bridgeSum)*c.learned)
			}
			sc.acc[d].score += c.best
			sc.acc[d].covered += c.cover
			*c = conceptAcc{}
		}
	}
	sc.adjust(ix, q)
	return sc.acc
}

// matchAlt keeps in sc.cur, for every tool that has alternative a of the
// current concept con (at idf), a's match if it is the concept's best so
// far; and a's cover of a name, less when a is a name's verb and the
// concept a state (stateCover), or, where the word's number carries over
// (agree: its own term or a word the thesaurus gives for it, not a second
// step), the concept a plural and the name's last word a in the singular
// (numberCover).
func (sc *scratch) matchAlt(st *stats, ix *Index, con *concept, a alt, idf float64, agree bool) {
	var shared float64 // the server's part (instructions, name), the same for every tool
	if ix.server != nil {
		if tf, ok := ix.server.find(a.term); ok {
			for f := FieldInstructions; f < numFields; f++ {
				if tf[f] != 0 {
					shared += fieldNorm(f, tf[f], ix.server.lens[f], st.avg[f])
				}
			}
		}
	}
	postings := ix.postings[a.term]
	if len(postings) == 0 && shared == 0 {
		return
	}
	cover := float32(a.weight * float64(strings.Count(a.term, " ")+1))
	verb := cover // the cover of a name whose verb is a's term
	if con.state {
		verb *= float32(stateCover) // "the merged PRs" are not what merge_pull_request's name is about
	}
	single := cover // the cover of a name whose last word is a's term in the singular
	if agree && con.plural {
		single *= float32(numberCover)
	}
	if shared != 0 {
		sc.tfs = grown(sc.tfs, len(ix.docs))
	}
	wrong := con.wrongSide()
	for _, p := range postings {
		t := float64(p.weight)
		c := &sc.cur[p.doc]
		if p.conv != 0 && p.conv == wrong {
			t *= conversionPenalty // "coords for 1600 Amphitheatre Parkway" are what geocoding gives, not what reverse geocoding takes
			c.wrong = max(c.wrong, float32(a.weight*idf*(t+shared)/(bm25K1+t+shared)))
		}
		if c.best == 0 && c.cover == 0 {
			sc.touched = append(sc.touched, p.doc)
		}
		switch {
		case p.verb:
			c.cover = max(c.cover, verb)
		case p.single:
			c.cover = max(c.cover, single)
		case p.inName:
			c.cover = max(c.cover, cover)
		}
		if shared != 0 {
			sc.tfs[p.doc] = t
			continue
		}
		m := float32(a.weight * idf * t / (bm25K1 + t))
		c.best = max(c.best, m)
		if a.learned {
			c.learned += m
		}
	}
	if shared == 0 {
		return
	}
	// Every tool of the server has the term in its instructions or name.
	for d, t := range sc.tfs {
		t += shared
		c := &sc.cur[d]
		if c.best == 0 && c.cover == 0 {
			sc.touched = append(sc.touched, int32(d))
		}
		// Not added to the bridge words' sum (conceptAcc.learned): a word
		// every tool of the server has says nothing between them, and
		// adding it moved blind12 0.815 → 0.813 for no gain.
		c.best = max(c.best, float32(a.weight*idf*t/(bm25K1+t)))
	}
}

// adjust applies to the scores in sc.acc what depends on the whole query:
// the penalty of a question, or of a request that names no action, on
// tools that write, and the name's coverage.
func (sc *scratch) adjust(ix *Index, q Query) {
	if penalty := q.writePenalty(); penalty != 1 {
		for _, w := range ix.writes {
			sc.acc[w].score *= float32(penalty)
		}
	}
	for d := range sc.acc {
		a := &sc.acc[d]
		if a.score == 0 {
			continue
		}
		if l := ix.nameLen[d]; l > 0 {
			a.score *= float32(1 + nameCoverage*min(1, float64(a.covered)/float64(l)))
		}
	}
}

// explain says which of q's words doc d of ix matched, each through its
// best-weighted term the tool has, and in which fields.
func explain(ix *Index, d int, q Query) []Match {
	th := builtin()
	doc := ix.docs[d]
	var out []Match
	for _, c := range q.concepts {
		for j, a := range c.alts {
			fields := matchFields(ix, doc, a.term)
			if len(fields) == 0 {
				continue
			}
			m := Match{Word: c.word, Fields: fields}
			switch {
			case j > 0:
				m.Via = th.written[a.term]
				if m.Via == "" {
					m.Via = a.written
				}
			case c.shape:
				m.Via = c.kind
			}
			out = append(out, m)
			break
		}
	}
	return out
}

// matchFields are the fields where doc of ix (or its server) has term,
// in Field order.
func matchFields(ix *Index, doc *Doc, term string) []Field {
	var fields []Field
	if tf, ok := doc.find(term); ok {
		for f := FieldName; f < FieldInstructions; f++ {
			if tf[f] != 0 {
				fields = append(fields, f)
			}
		}
	}
	if ix.server != nil {
		if tf, ok := ix.server.find(term); ok {
			for f := FieldInstructions; f < numFields; f++ {
				if tf[f] != 0 {
					fields = append(fields, f)
				}
			}
		}
	}
	return fields
}
