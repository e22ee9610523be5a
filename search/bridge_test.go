package search

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// trainSets are intent sets written only for the bridge to learn from
// (testdata/README.md): never studied intent by intent, never measured
// as a benchmark.
var trainSets = []string{"train1", "train2", "train3", "train4", "train5", "train6", "train7", "train8", "train9", "train10", "train11", "train12"}

// bridgeSets are the intent sets the bridge learns from: the studied ones
// and the training ones. The never-studied sets (neverStudied) are never
// learned from.
var bridgeSets = slices.Concat(studiedSets, trainSets)

// bridgeParams are the generator's settings, chosen by cross-validation
// across the sets it learns from (TestBridgeCrossValidate).
type bridgeParams struct {
	minIntents   int     // a query term and a word of tools' text are learned together from at least this many intents
	minTools     int     // whose answers hold the tool word in at least this many distinct tools
	minStrength  float64 // and goes with the query word at least this much above chance
	prior        float64 // pseudo-intents of the background, smoothing a rare query word's figures
	maxWords     int     // bridge words kept per query term, strongest first
	serverShare  float64 // a word more than this share of a server's tools have names the server, not a tool's action or object
	allFields    bool    // bridge words from parameters' names and descriptions too, not only the tool's name, title, description and enum values
	otherName    float64 // a word of some tools' names that none of the query word's answers has in its name keeps this share of its strength (MCPX_SEARCH_BRIDGE_OTHERNAME lists shares to cross-validate)
	minPair      int     // two query words at most pairSpan apart are learned as one key from at least this many intents (0: never; MCPX_SEARCH_BRIDGE_PAIRS)
	maxPairWords int     // bridge words kept per two-word key (0: maxWords; MCPX_SEARCH_PAIR_WORDS)
	refine       int     // passes of refineBridge over the intents learned from (0: none; MCPX_SEARCH_REFINE_PASSES)
	refineStep   float64 // what one correction moves a strength (MCPX_SEARCH_REFINE_STEPS)
	refineMargin float64 // a right first tool is corrected against the second too where the second scores within this share of it (MCPX_SEARCH_REFINE_MARGINS)
	refineReach  float64 // how far corrections may move a strength from what the counts gave it (MCPX_SEARCH_REFINE_REACHES)
}

var defaultBridgeParams = bridgeParams{minIntents: 1, minTools: 1, minStrength: 0.1, prior: 2, maxWords: 12, serverShare: 0.5, allFields: true, otherName: 0, minPair: 1, maxPairWords: 3, refine: 1, refineStep: 0.05, refineMargin: 0.4, refineReach: 0.25}

// toolTerms are, per tool (NS.TOOL), the terms of its own text (name,
// title, description, parameters, enum values) and how tools write each
// term (its commonest written form).
type toolTerms struct {
	corpus  *corpus // the recorded tools they are of, which refineBridge ranks
	terms   map[string]map[string]bool
	names   map[string]map[string]bool // per tool, the terms of its name
	named   map[string]bool            // terms some tool's name holds
	written map[string]string
}

func newToolTerms(c *corpus, p bridgeParams) toolTerms {
	tt := toolTerms{corpus: c, terms: map[string]map[string]bool{}, names: map[string]map[string]bool{}, named: map[string]bool{}}
	for si, s := range c.servers {
		// A word more than serverShare (half) of a server's tools have
		// says which server, not what a tool does: it is no bridge word.
		share := map[string]int{}
		docs := make([]*Doc, len(s.parsed))
		for ti, tool := range s.parsed {
			docs[ti] = NewDoc(tool)
			for _, t := range docs[ti].terms {
				share[t.term]++
			}
		}
		for ti := range s.parsed {
			set, name := map[string]bool{}, map[string]bool{}
			for _, t := range docs[ti].terms {
				if t.tf[FieldName] != 0 && !strings.Contains(t.term, " ") {
					name[t.term] = true
					tt.named[t.term] = true
				}
				own := p.allFields || t.tf[FieldName] != 0 || t.tf[FieldTitle] != 0 || t.tf[FieldDescription] != 0 || t.tf[FieldEnum] != 0
				if !strings.Contains(t.term, " ") && own && (len(s.parsed) < 4 || float64(share[t.term]) <= p.serverShare*float64(len(s.parsed))) {
					set[t.term] = true
				}
			}
			tt.terms[c.name(si, ti)] = set
			tt.names[c.name(si, ti)] = name
		}
	}
	tt.written = commonestForms(c)
	return tt
}

// commonestForms is, per term of the recorded tools' text, how the tools
// write it most often (the first in byte order of those as common).
func commonestForms(c *corpus) map[string]string {
	forms := map[string]map[string]int{}
	for _, s := range c.servers {
		for _, tool := range s.parsed {
			text := []string{tool.Name, tool.Title, tool.Description}
			for _, p := range tool.Params {
				text = append(text, p.Name, p.Description)
				text = append(text, p.Enum...)
			}
			for _, tok := range tokenize(strings.Join(text, " "), nil) {
				if forms[tok.term] == nil {
					forms[tok.term] = map[string]int{}
				}
				forms[tok.term][tok.written]++
			}
		}
	}
	written := map[string]string{}
	for t, ws := range forms {
		best := ""
		for w, n := range ws {
			if best == "" || n > ws[best] || n == ws[best] && w < best {
				best = w
			}
		}
		written[t] = best
	}
	return written
}

// queryTerms are the terms of a query's own words that a bridge may
// start from (not a value's, a number's or quoted text's words), and
// every term the query already reaches (its words and their thesaurus
// entries), which the bridge need not explain.
func queryTerms(q Query) (own []string, reached map[string]bool) {
	reached = map[string]bool{}
	for _, c := range q.concepts {
		for _, a := range c.alts {
			for _, t := range strings.Fields(a.term) {
				reached[t] = true
			}
		}
	}
	for _, c := range ownConcepts(q.concepts) {
		own = append(own, c.alts[0].term)
	}
	return own, reached
}

// ownConcepts are the concepts of a query's own words, in order, that the
// learner keys alone: not a value's, a number's or quoted text's
// (minOwnWeight), nor a phrase's.
func ownConcepts(concepts []concept) []concept {
	var own []concept
	for _, c := range concepts {
		if !c.shape && c.alts[0].weight >= minOwnWeight && !strings.Contains(c.alts[0].term, " ") {
			own = append(own, c)
		}
	}
	return own
}

// learnBridge learns the bridge from intents: for each query term, the
// words of its answers' text that its intents hold more often than
// intents at large, among the words the rest of the query does not
// already reach; then, for p.refine passes, corrects their strengths
// where they rank a wrong tool first (refineBridge).
func learnBridge(tt toolTerms, intents []intent, p bridgeParams) bridgeTable {
	b := countBridge(tt, intents, p)
	refineBridge(tt.corpus, b, intents, p)
	return b
}

// countBridge is learnBridge's first step, from counts alone. With the
// bridge off while it counts, so that what it learns never depends on an
// earlier bridge.
func countBridge(tt toolTerms, intents []intent, p bridgeParams) bridgeTable {
	defer setBridge(bridgeTable{})()
	bc := bridgeCounts{tt: tt, p: p, nq: map[string]int{}, co: map[keyWord]int{}, tools: map[keyWord]map[string]bool{}, bg: map[string]int{}, inName: map[keyWord]bool{}}
	for _, in := range intents {
		bc.add(in)
	}
	b := bridgeTable{}
	for k := range bc.co {
		s := bc.strength(k)
		if first, second, two := strings.Cut(k.q, " "); two {
			// Two words in a row keep only what they say beyond either
			// alone: "child blocks" → get, where "child" and "block" say
			// nothing of reading.
			if bc.nq[k.q] < p.minPair {
				continue
			}
			s -= max(bc.strength(keyWord{first, k.t}), bc.strength(keyWord{second, k.t}))
		}
		if s < p.minStrength {
			continue
		}
		b[k.q] = append(b[k.q], bridgeWord{k.t, tt.written[k.t], roundStrength(min(s, 1))})
	}
	for q, ws := range b {
		sortBridgeWords(ws)
		keep := p.maxWords
		if strings.Contains(q, " ") && p.maxPairWords > 0 {
			keep = p.maxPairWords
		}
		b[q] = ws[:min(len(ws), keep)]
	}
	return b
}

// roundStrength rounds a strength as bridge.txt writes it.
func roundStrength(s float64) float64 { return math.Round(s*1000) / 1000 }

// sortBridgeWords orders a term's bridge words as bridge.txt lists them:
// strongest first, then by term.
func sortBridgeWords(ws []bridgeWord) {
	slices.SortFunc(ws, func(a, b bridgeWord) int {
		if c := cmp.Compare(b.strength, a.strength); c != 0 {
			return c
		}
		return strings.Compare(a.term, b.term)
	})
}

// keyWord is a query term (a bridge key) and a word of tools' text.
type keyWord struct{ q, t string }

// bridgeCounts are what countBridge counts over the intents.
type bridgeCounts struct {
	tt     toolTerms
	p      bridgeParams
	n      int                         // intents
	nq     map[string]int              // intents with the query term
	co     map[keyWord]int             // intents with the query term whose answers hold the word, unreached
	tools  map[keyWord]map[string]bool // the distinct answers that hold it
	bg     map[string]int              // intents whose answers hold the word
	inName map[keyWord]bool            // some answer of an intent with the query term has the word in its name
}

// add counts one intent: each of its own words is a key, and so is each
// two of its words, phrases, cues and values' kinds at most pairSpan apart
// (pairConcepts, queryBuilder.addPairs).
func (bc *bridgeCounts) add(in intent) {
	bc.n++
	q := ParseQuery(in.query)
	own, reached := queryTerms(q)
	answer := map[string]bool{}
	for _, w := range in.want {
		for t := range bc.tt.terms[w] {
			answer[t] = true
		}
	}
	for t := range answer {
		bc.bg[t]++
	}
	keys := slices.Clone(own)
	if bc.p.minPair > 0 {
		pairs := pairConcepts(q.concepts)
		for i, j := range nearPairs(len(pairs)) {
			keys = append(keys, pairTerm(pairs[i])+" "+pairTerm(pairs[j]))
		}
	}
	slices.Sort(keys)
	for _, q := range slices.Compact(keys) {
		bc.nq[q]++
		for t := range answer {
			if !reached[t] {
				bc.addKeyWord(keyWord{q, t}, in.want)
			}
		}
	}
}

// addKeyWord counts k in an intent whose answers are want.
func (bc *bridgeCounts) addKeyWord(k keyWord, want []string) {
	bc.co[k]++
	if bc.tools[k] == nil {
		bc.tools[k] = map[string]bool{}
	}
	for _, w := range want {
		if bc.tt.terms[w][k.t] {
			bc.tools[k][w] = true
		}
		if bc.tt.names[w][k.t] {
			bc.inName[k] = true
		}
	}
}

// strength is how much more than chance k's word goes with its key (0
// under the least counts).
func (bc *bridgeCounts) strength(k keyWord) float64 {
	c, p := bc.co[k], bc.p
	if c < p.minIntents || len(bc.tools[k]) < p.minTools {
		return 0
	}
	chance := float64(bc.bg[k.t]) / float64(bc.n)
	given := (float64(c) + p.prior*chance) / (float64(bc.nq[k.q]) + p.prior)
	s := (given - chance) / (1 - chance)
	if bc.tt.named[k.t] && !bc.inName[k] {
		// The word names other tools, never these answers: it would
		// lift those tools over the ones the word is learned from.
		s *= p.otherName
	}
	return s
}

// format writes b in bridge.txt's format, its terms sorted.
func (b bridgeTable) format() string {
	var sb strings.Builder
	sb.WriteString("# Generated by TestBridgeFile (MCPX_SEARCH_BRIDGE=write go test ./search -run BridgeFile): see bridge.go.\n")
	sb.WriteString("# query term\tbridge word (term, as tools write it, strength 0-1)…\n")
	keys := make([]string, 0, len(b))
	for q := range b {
		keys = append(keys, q)
	}
	slices.Sort(keys)
	for _, q := range keys {
		sb.WriteString(q)
		for _, w := range b[q] {
			sb.WriteString("\t" + w.term + " " + w.written + " " + strconv.FormatFloat(w.strength, 'f', -1, 64))
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// setBridge puts b in place of the embedded bridge, and returns what
// restores it.
func setBridge(b bridgeSource) func() {
	keep := bridge
	bridge = b
	return func() { bridge = keep }
}

// parseBridge reads a whole file in the bridge format, one query term a
// line ("#" starts a comment line), sorted by term as bridgeFile's search
// needs: the term, then its words (parseBridgeWords).
func parseBridge(text string) (bridgeTable, error) {
	b := bridgeTable{}
	last := ""
	for n, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		term, rest, _ := strings.Cut(line, "\t")
		if term == "" {
			return nil, fmt.Errorf("%w: line %d: want a term and at least one bridge word", ErrBridge, n+1)
		}
		words, err := parseBridgeWords(rest)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		if term <= last {
			return nil, fmt.Errorf("%w: line %d: %q is not after %q (a term given twice, or out of order)", ErrBridge, n+1, term, last)
		}
		last = term
		b[term] = words
	}
	return b, nil
}

// bridgeIntents are, per set, the intents the bridge learns from, less
// those that repeat a never-studied intent's words for the same tool
// (overlapping): learning from them would carry that set's answers into the
// ranker. The older sets hold a few such intents (the held-out set was
// written first, and the sets after it were rephrased against it at other
// thresholds); the training sets hold none
// (TestTrainingSetsRepeatNoMeasuredIntent).
func bridgeIntents(t testing.TB, sets []string) map[string][]intent {
	var measured []intent
	for _, set := range neverStudied {
		measured = append(measured, loadIntents(t, set)...)
	}
	learnable := map[string][]intent{}
	for _, set := range sets {
		intents := loadIntents(t, set)
		skip := map[int]bool{}
		for _, o := range overlapping(intents, measured) {
			skip[o.index] = true
		}
		for i, in := range intents {
			if !skip[i] {
				learnable[set] = append(learnable[set], in)
			}
		}
	}
	return learnable
}

// TestBridgeFile checks that bridge.txt is what the generator learns from
// the studied sets and the recorded tools (MCPX_SEARCH_BRIDGE=write
// rewrites it).
func TestBridgeFile(t *testing.T) {
	c := loadCorpus(t)
	learnable := bridgeIntents(t, bridgeSets)
	var all []intent
	for _, set := range bridgeSets {
		all = append(all, learnable[set]...)
	}
	want := learnBridge(newToolTerms(c, defaultBridgeParams), all, defaultBridgeParams).format()
	if os.Getenv("MCPX_SEARCH_BRIDGE") == "write" {
		if err := os.WriteFile("bridge.txt", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if bridgeText != want {
		t.Errorf("bridge.txt is not what the generator learns (MCPX_SEARCH_BRIDGE=write go test ./search -run BridgeFile rewrites it, then rebuild)")
	}
	b, err := parseBridge(want)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) == 0 {
		t.Fatal("the bridge learned nothing")
	}
}

func TestParseBridge(t *testing.T) {
	b, err := parseBridge("# a comment\nbloat\tsize size 0.5\tdirectori directory 0.25\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := b["bloat"]; len(got) != 2 || got[0] != (bridgeWord{"size", "size", 0.5}) || got[1].term != "directori" {
		t.Errorf("parsed %v", b)
	}
	for _, bad := range []string{"bloat\n", "bloat\tsize 0.5\n", "bloat\tsize size 2\n", "bloat\tsize size x\n", "a\tb b 0.5\na\tc c 0.5\n", "b\tb b 0.5\na\tc c 0.5\n", "\tb b 0.5\n"} {
		if _, err := parseBridge(bad); !errors.Is(err, ErrBridge) {
			t.Errorf("%q: got %v, want ErrBridge", bad, err)
		}
	}
}

// bridgeVariants are the learner's settings TestBridgeCrossValidate
// tries: the default, or those its environment lists.
func bridgeVariants(t *testing.T) []bridgeParams {
	variants := []bridgeParams{defaultBridgeParams}
	if os.Getenv("MCPX_SEARCH_BRIDGE_OTHERNAME") != "" {
		variants = nil
		for _, x := range envFloats(t, "MCPX_SEARCH_BRIDGE_OTHERNAME", nil) {
			p := defaultBridgeParams
			p.otherName = x
			variants = append(variants, p)
		}
	}
	if os.Getenv("MCPX_SEARCH_BRIDGE_PAIRS") != "" {
		variants = nil
		for _, x := range envFloats(t, "MCPX_SEARCH_BRIDGE_PAIRS", nil) {
			p := defaultBridgeParams
			p.minPair = int(x)
			for _, mw := range envFloats(t, "MCPX_SEARCH_PAIR_WORDS", []float64{0}) {
				p.maxPairWords = int(mw)
				variants = append(variants, p)
			}
		}
	}
	if refine := refineVariants(t); refine != nil {
		variants = refine
	}
	if os.Getenv("MCPX_SEARCH_BRIDGE_GRID") != "" {
		variants = nil
		for _, share := range []float64{0.3, 1} {
			for _, all := range []bool{false, true} {
				for _, mi := range []int{1, 2} {
					for _, mt := range []int{1, 2} {
						for _, ms := range []float64{0.2, 0.4} {
							p := defaultBridgeParams
							p.minIntents, p.minTools, p.minStrength, p.prior, p.maxWords, p.serverShare, p.allFields = mi, mt, ms, 2, 6, share, all
							variants = append(variants, p)
						}
					}
				}
			}
		}
	}
	return variants
}

// refineVariants are the settings of refineBridge to cross-validate:
// every combination of the passes, steps, margins and reaches listed in
// MCPX_SEARCH_REFINE_PASSES, _STEPS, _MARGINS and _REACHES (the default
// for one not given); nil when none is.
func refineVariants(t *testing.T) []bridgeParams {
	d := defaultBridgeParams
	passes := envFloats(t, "MCPX_SEARCH_REFINE_PASSES", nil)
	steps := envFloats(t, "MCPX_SEARCH_REFINE_STEPS", nil)
	margins := envFloats(t, "MCPX_SEARCH_REFINE_MARGINS", nil)
	reaches := envFloats(t, "MCPX_SEARCH_REFINE_REACHES", nil)
	if passes == nil && steps == nil && margins == nil && reaches == nil {
		return nil
	}
	or := func(xs []float64, def float64) []float64 {
		if xs == nil {
			return []float64{def}
		}
		return xs
	}
	var variants []bridgeParams
	for _, n := range or(passes, float64(d.refine)) {
		for _, step := range or(steps, d.refineStep) {
			for _, margin := range or(margins, d.refineMargin) {
				for _, reach := range or(reaches, d.refineReach) {
					p := d
					p.refine, p.refineStep, p.refineMargin, p.refineReach = int(n), step, margin, reach
					variants = append(variants, p)
				}
			}
		}
	}
	return variants
}

// TestBridgeCrossValidate learns the bridge on all but one of the studied
// sets and measures that one, with it and without, for each of a few
// weights and settings (MCPX_SEARCH_BRIDGE=cv). The held-out set and blind4
// are never measured here.
func TestBridgeCrossValidate(t *testing.T) {
	if os.Getenv("MCPX_SEARCH_BRIDGE") != "cv" {
		t.Skip("MCPX_SEARCH_BRIDGE=cv runs it")
	}
	c := loadCorpus(t)
	folds, learnable := map[string][]intent{}, bridgeIntents(t, bridgeSets)
	for _, set := range bridgeSets {
		folds[set] = loadIntents(t, set)
	}
	keep := weightBridge
	defer func() { weightBridge = keep }()
	variants := bridgeVariants(t)
	weights := envFloats(t, "MCPX_SEARCH_BRIDGE_WEIGHTS", []float64{0, 0.2, 0.4, 0.6, 0.8, 1, 1.1, 1.2, 1.3, 1.5})
	if os.Getenv("MCPX_SEARCH_BRIDGE_GRID") != "" {
		weights = []float64{0.3, 0.5}
	}
	sums := envFloats(t, "MCPX_SEARCH_BRIDGE_SUMS", []float64{bridgeSum})
	pairWeights := envFloats(t, "MCPX_SEARCH_PAIR_WEIGHTS", []float64{pairWeight})
	lengthPriors := envFloats(t, "MCPX_SEARCH_LENGTH_PRIORS", []float64{lengthPrior})
	spans := envFloats(t, "MCPX_SEARCH_PAIR_SPANS", []float64{float64(pairSpan)}) // the learner and the queries read pairSpan: each span is learned anew
	keepSum, keepPair, keepPrior, keepSpan := bridgeSum, pairWeight, lengthPrior, pairSpan
	defer func() { bridgeSum, pairWeight, lengthPrior, pairSpan = keepSum, keepPair, keepPrior, keepSpan }()
	type setting struct{ sum, pair, prior float64 }
	var settings []setting
	for _, sum := range sums {
		for _, pair := range pairWeights {
			for _, prior := range lengthPriors {
				settings = append(settings, setting{sum, pair, prior})
			}
		}
	}
	training := map[string][]intent{} // the same for every variant
	for _, held := range bridgeSets {
		training[held] = foldTraining(learnable, held, folds[held])
	}
	for _, span := range spans {
		pairSpan = int(span)
		for _, p := range variants {
			// Each fold's bridge is learned once, then measured at each
			// sum and weight.
			tt := newToolTerms(c, p)
			learned := map[string]bridgeTable{}
			for _, held := range bridgeSets {
				learned[held] = learnBridge(tt, training[held], p)
			}
			for _, st := range settings {
				bridgeSum, pairWeight, lengthPrior = st.sum, st.pair, st.prior
				for _, w := range weights {
					weightBridge = w
					all, line := measureFolds(c, learned, folds)
					t.Logf("%+v span=%d sum=%.2f pair=%.2f prior=%g w=%.2f all %s |%s", p, pairSpan, st.sum, st.pair, st.prior, w, all, line)
				}
			}
		}
	}
}

// measureFolds ranks each fold's intents with the bridge learned without
// them, at the ranker's current settings: the folds pooled, and each
// fold's figures as a line.
func measureFolds(c *corpus, learned map[string]bridgeTable, folds map[string][]intent) (all pooled, line string) {
	ranker := mcpxRanker(c) // the bridge is read per query, so one index serves every fold
	for _, held := range bridgeSets {
		restore := setBridge(learned[held])
		s := evaluate(ranker, folds[held])
		restore()
		all.add(s, len(folds[held]))
		line += fmt.Sprintf(" %s %.3f/%.3f/%.3f", held, s.r1, s.r5, s.mrr)
	}
	return all, line
}

// TestBridgePairs: two words in a row that the bridge knows together add
// what they went with ("child blocks" → get), which decides where the
// words alone do not; a pair's verb gives way to the request's own verb
// of the other kind, and a pair names no action and no server.
func TestBridgePairs(t *testing.T) {
	defer setBridge(bridgeTable{"child block": {{"get", "get", 0.5}, {"notion", "notion", 0.5}}})()
	tools := []tool{{"x", "append_block_children", "Append block children", ""}, {"x", "get_block_children", "Get block children", ""}}
	for q, want := range map[string]string{
		"child blocks of block abc":        "x.get_block_children", // the pair's get
		"child blocks, block abc":          "x.get_block_children",
		"insert child blocks in block abc": "x.append_block_children", // insert is the request's own verb
		"show child blocks of block abc":   "x.get_block_children",
	} {
		if got, _ := rankTools(tools, q, 0); len(got) != 2 || got[0] != want {
			t.Errorf("%q: %v, want %s first", q, got, want)
		}
	}
	q := ParseQuery("child blocks of block abc")
	if !slices.ContainsFunc(q.concepts, func(c concept) bool { return c.pair && c.word == "child blocks" && c.alts[0].term == "child block" }) {
		t.Errorf("no pair concept in %+v", q.concepts)
	}
	if !q.look {
		t.Error("a pair's get named an action")
	}
	notion := []*Index{NewIndex([]*Doc{NewDoc(Tool{Name: "get_block_children"})}, nil), NewIndex([]*Doc{NewDoc(Tool{Name: "search"})}, NewServerDoc(Server{Name: "notion"}))}
	if named := namedServers(notion, q); named != nil {
		t.Errorf("a pair's notion named a server: %v", named)
	}
	if q := parseQuery("child blocks of block abc", false); slices.ContainsFunc(q.concepts, func(c concept) bool { return c.pair }) {
		t.Error("a pair without the bridge")
	}
	// Two words with others between them are the pair up to pairSpan
	// apart, and no further.
	between := []string{"amber", "cobalt", "violet", "indigo", "scarlet", "olive", "ochre", "teal"}
	for n := 1; n <= min(pairSpan, len(between)); n++ {
		query := "child " + strings.Join(between[:n], " ") + " blocks"
		pair := slices.ContainsFunc(ParseQuery(query).concepts, func(c concept) bool { return c.pair && c.alts[0].term == "child block" })
		if want := n < pairSpan; pair != want {
			t.Errorf("%q: pair %v, want %v", query, pair, want)
		}
	}
	// Without the pair, the words alone leave the two tools level.
	defer setBridge(bridgeTable{})()
	if _, hits := rankTools(tools, "child blocks of block abc", 0); len(hits) != 2 || hits[0].Score != hits[1].Score {
		t.Errorf("without the pair: %+v", hits)
	}
}

// TestPairConcepts: a pair is made of the request's words, phrases,
// phrasal verbs and cues in the order it wrote them, a value standing as
// its kind; not of a value's, a number's or quoted text's words.
func TestPairConcepts(t *testing.T) {
	for q, want := range map[string][]string{
		"where do we set up .env.example for the pull request": {"where", "set_up", "@file", "pull_request"},
		"create .env.example with DATABASE_URL":                {"creat", "@file", "@environment"},
		"tear down the browser when finished":                  {"tear_down", "browser", "when", "finish"},
		"type \"hello world\" into field 42":                   {"type", "field"},
		"git log of https://github.com/acme/api":               {"git_log", "@url"},
	} {
		var got []string
		for _, c := range pairConcepts(ParseQuery(q).concepts) {
			got = append(got, pairTerm(c))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%q: pair concepts %q, want %q", q, got, want)
		}
	}
	// A value's kind makes a pair with a word before it.
	defer setBridge(bridgeTable{"creat @file": {{"write", "write", 0.5}}})()
	q := ParseQuery("create .env.example with DATABASE_URL")
	if !slices.ContainsFunc(q.concepts, func(c concept) bool { return c.pair && c.alts[0].term == "creat @file" }) {
		t.Errorf("no pair of create and a file in %+v", q.concepts)
	}
}

// TestNearPairs: every two of the words at most pairSpan apart, once,
// the nearest first for each later word.
func TestNearPairs(t *testing.T) {
	defer func(keep int) { pairSpan = keep }(pairSpan)
	pairSpan = 2
	var got [][2]int
	for i, j := range nearPairs(4) {
		got = append(got, [2]int{i, j})
	}
	if want := [][2]int{{0, 1}, {1, 2}, {0, 2}, {2, 3}, {1, 3}}; !slices.Equal(got, want) {
		t.Errorf("nearPairs(4) at span 2 = %v, want %v", got, want)
	}
	for range nearPairs(1) {
		t.Error("a pair of one word")
	}
}

// TestLearnPairs: the learner keeps for two words in a row only what they
// went with beyond either word alone, and only from minPair intents.
func TestLearnPairs(t *testing.T) {
	c := loadCorpus(t)
	p := defaultBridgeParams
	p.minPair = 2
	// From six intents the words of get_block_children's parameters
	// (cursor, page size…) go with the pair as strongly as get does; the
	// tools' own text alone keeps the test on what pairs learn.
	p.allFields = false
	p.refine = 0 // the counts alone: refineBridge is TestRefineBridge's
	intents := []intent{
		{query: "child blocks of page abc", want: []string{"notion.API-get-block-children"}},
		{query: "child blocks under the roadmap page", want: []string{"notion.API-get-block-children"}},
		{query: "child page under roadmap", want: []string{"notion.API-post-page"}},
		{query: "block 42 of the page", want: []string{"notion.API-retrieve-a-block"}},
		{query: "erase block 7", want: []string{"notion.API-delete-a-block"}},
		{query: "children of roadmap", want: []string{"notion.API-get-block-children"}},
	}
	b := learnBridge(newToolTerms(c, p), intents, p)
	pair := b["child block"]
	if !slices.ContainsFunc(pair, func(w bridgeWord) bool { return w.term == "get" }) {
		t.Errorf(`"child block" learned %v, want get among them`, pair)
	}
	if len(pair) > p.maxPairWords {
		t.Errorf(`"child block" kept %d words, more than %d`, len(pair), p.maxPairWords)
	}
	// "child" alone already goes with get (two of its three intents are
	// the pair's), so the pair keeps less of get than "child" says.
	strength := func(ws []bridgeWord, term string) float64 {
		if i := slices.IndexFunc(ws, func(w bridgeWord) bool { return w.term == term }); i >= 0 {
			return ws[i].strength
		}
		return 0
	}
	if s, alone := strength(pair, "get"), strength(b["child"], "get"); s >= alone {
		t.Errorf(`"child block" → get %v, not less than "child" → get %v`, s, alone)
	}
	if _, ok := b["roadmap page"]; ok {
		t.Errorf(`"roadmap page" learned from one intent in a row: %v`, b["roadmap page"])
	}
	// It counts two words with others between them as the pair, up to
	// pairSpan apart, as queries read them (addPairs).
	apart := slices.Clone(intents[:5])
	apart[0].query = "child amber blocks of page abc"
	apart[1].query = "child cobalt blocks of the roadmap page"
	if b := learnBridge(newToolTerms(c, p), apart, p); !slices.ContainsFunc(b["child block"], func(w bridgeWord) bool { return w.term == "get" }) {
		t.Errorf(`"child … block" learned %v, want get among them`, b["child block"])
	}
	p.minPair = 0
	if b := learnBridge(newToolTerms(c, p), intents, p); b["child block"] != nil {
		t.Errorf("pairs learned with minPair 0: %v", b["child block"])
	}
}

// TestBridgeSum: a tool holding several of a query word's bridge words
// outranks one holding only the strongest (bridgeSum); without the sum,
// the strongest alone decides.
func TestBridgeSum(t *testing.T) {
	defer setBridge(bridgeTable{"bloat": {{"size", "size", 0.6}, {"disk", "disk", 0.5}, {"usag", "usage", 0.5}, {"space", "space", 0.5}}})()
	docs := []*Doc{
		NewDoc(Tool{Name: "alpha", Description: "Reports the size."}),
		NewDoc(Tool{Name: "beta", Description: "Reports disk usage and free space."}),
	}
	ix := NewIndex(docs, nil)
	first := func() int {
		hits := Rank([]*Index{ix}, ParseQuery("bloat"), 10, func(a, b Hit) int { return a.Doc - b.Doc })
		if len(hits) != 2 {
			t.Fatalf("got %+v, want both tools", hits)
		}
		return hits[0].Doc
	}
	if got := first(); got != 1 {
		t.Errorf("first %d, want beta (three bridge words) over alpha (the strongest one)", got)
	}
	keep := bridgeSum
	bridgeSum = 0
	defer func() { bridgeSum = keep }()
	if got := first(); got != 0 {
		t.Errorf("without the sum: first %d, want alpha (the strongest bridge word decides)", got)
	}
}

// BenchmarkBridgeWords is what a query pays to read its terms' bridge
// words where the file lies: a request's dozen words and pairs.
func BenchmarkBridgeWords(b *testing.B) {
	terms := []string{"child", "child block", "block", "bloat", "git", "pod", "namespac", "zzz", "notion", "page", "scroll back", "aaa"}
	b.ReportAllocs()
	for b.Loop() {
		for _, t := range terms {
			bridge.words(t)
		}
	}
}

// TestBridgeFileWords: searching the file where it lies reads what parsing
// all of it does, for every term and for terms it lacks.
func TestBridgeFileWords(t *testing.T) {
	all, err := parseBridge(bridgeText)
	if err != nil {
		t.Fatal(err)
	}
	f := bridgeFile(bridgeText)
	for term, want := range all {
		if got := f.words(term); !slices.Equal(got, want) {
			t.Fatalf("%q: %v, want %v", term, got, want)
		}
	}
	for _, term := range []string{"", "a", "zzzz", "child blocks", "child", "~"} {
		if got, want := f.words(term), all[term]; !slices.Equal(got, want) {
			t.Errorf("%q: %v, want %v", term, got, want)
		}
	}
	small := bridgeFile("# comment\n# another\nb\tx x 0.5\nb c\ty y 0.25\nc\tbad\n")
	if got := small.words("b c"); len(got) != 1 || got[0] != (bridgeWord{"y", "y", 0.25}) {
		t.Errorf("b c: %v", got)
	}
	if got := small.words("c"); got != nil {
		t.Errorf("a malformed line gave %v", got)
	}
	if got := small.words("#"); got != nil {
		t.Errorf("a comment gave %v", got)
	}
}

// TestBridgeMatch: a query word the tools lack finds them through its
// bridge words, below a word of their own, and why says through what.
func TestBridgeMatch(t *testing.T) {
	defer setBridge(bridgeTable{"bloat": {{"size", "size", 1}}})()
	docs := []*Doc{
		NewDoc(Tool{Name: "get_file_info", Description: "Get the size and times of a file."}),
		NewDoc(Tool{Name: "read_file", Description: "Read a file."}),
	}
	ix := NewIndex(docs, nil)
	hits := Rank([]*Index{ix}, ParseQuery("what is bloating the file"), 10, func(a, b Hit) int { return a.Doc - b.Doc })
	if len(hits) != 2 || hits[0].Doc != 0 {
		t.Fatalf("got %+v, want get_file_info first", hits)
	}
	if !slices.ContainsFunc(hits[0].Why, func(m Match) bool { return m.Word == "bloating" && m.Via == "size" }) {
		t.Errorf("why %+v: want bloating via size", hits[0].Why)
	}
	keep := weightBridge
	weightBridge = 0
	defer func() { weightBridge = keep }()
	if hits := Rank([]*Index{ix}, ParseQuery("what is bloating the file"), 10, func(a, b Hit) int { return a.Doc - b.Doc }); len(hits) == 0 || hits[0].Doc != 1 {
		t.Errorf("without the bridge: %+v, want read_file first (the bridge decided)", hits)
	}
}

// TestBridgeFoldMisses prints the misses of each bridge set named in
// MCPX_SEARCH_FOLD_MISSES (e.g. "train9" or "train7 train8"), ranked with
// the bridge learned from every other bridge set: with the full bridge a
// set's own phrasings are learned, so these are the misses to study. With
// MCPX_SEARCH_FOLD_QUIET=1 it prints each fold's figures only. Only bridge
// sets can be named; the never-studied sets are never learned from nor
// printed (testdata/README.md).
func TestBridgeFoldMisses(t *testing.T) {
	v := os.Getenv("MCPX_SEARCH_FOLD_MISSES")
	if v == "" {
		t.Skip("MCPX_SEARCH_FOLD_MISSES=SET runs it")
	}
	c := loadCorpus(t)
	learnable := bridgeIntents(t, bridgeSets)
	tt := newToolTerms(c, defaultBridgeParams)
	var all pooled
	for _, held := range strings.Fields(v) {
		if !slices.Contains(bridgeSets, held) {
			t.Fatalf("MCPX_SEARCH_FOLD_MISSES: %s is not a set the bridge learns from", held)
		}
		intents := loadIntents(t, held)
		restore := setBridge(learnBridge(tt, foldTraining(learnable, held, intents), defaultBridgeParams))
		s := evaluate(mcpxRanker(c), intents)
		restore()
		all.add(s, len(intents))
		t.Logf("%s (%d), bridge learned without it: %.3f / %.3f / %.3f", held, len(intents), s.r1, s.r5, s.mrr)
		if os.Getenv("MCPX_SEARCH_FOLD_QUIET") == "" {
			for _, m := range s.misses {
				t.Logf("miss %s: %s", held, m)
			}
		}
	}
	t.Logf("all (%d): %s", int(all.n), all)
}

// foldTraining is what the bridge of held's fold learns from: every other
// bridge set (learnable: bridgeIntents), less the intents that repeat the
// words of one of held's (measured: the intents its fold ranks) for the
// same tool, as the never-studied sets are ranked. So held ranks as
// phrasings the bridge has not learned.
func foldTraining(learnable map[string][]intent, held string, measured []intent) []intent {
	var train []intent
	for _, set := range bridgeSets {
		if set != held {
			train = append(train, learnable[set]...)
		}
	}
	skip := map[int]bool{}
	for _, o := range overlapping(train, measured) {
		skip[o.index] = true
	}
	kept := train[:0:0]
	for i, in := range train {
		if !skip[i] {
			kept = append(kept, in)
		}
	}
	return kept
}

// pooled sums sets' scores weighted by their sizes.
type pooled struct{ r1, r5, mrr, n float64 }

func (p *pooled) add(s scores, size int) {
	k := float64(size)
	p.r1, p.r5, p.mrr, p.n = p.r1+s.r1*k, p.r5+s.r5*k, p.mrr+s.mrr*k, p.n+k
}

// String is recall@1 / recall@5 / MRR@10 over everything added.
func (p pooled) String() string {
	return fmt.Sprintf("%.3f/%.3f/%.3f", p.r1/p.n, p.r5/p.n, p.mrr/p.n)
}

// envFloats reads environment variable name as space-separated numbers,
// or returns def if it is not set.
func envFloats(t testing.TB, name string, def []float64) []float64 {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	var out []float64
	for _, f := range strings.Fields(v) {
		x, err := strconv.ParseFloat(f, 64)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, x)
	}
	return out
}
