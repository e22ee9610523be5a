package search

import (
	"cmp"
	"iter"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Query is a parsed query: one concept per word (or thesaurus phrase) that
// search does not ignore, and one per value that says what kind of thing
// the tool works on.
type Query struct {
	concepts []concept
	question bool // the query asks something (isQuestion): it wants to look, not to change
	look     bool // the query names no action (namesAction): it wants to look too
}

type concept struct {
	word   string // as the query wrote it, lower case
	alts   []alt  // alts[0] is its own term (weight 1, less in context or a value, 0 for a cue or a phrasal verb); then the thesaurus's, best first
	shape  bool   // a value's kind (a URL, a file…): alts[0] is the kind's term, at weightShape
	kind   string // the kind, as shapeOf names it
	whole  bool   // the whole of a word written in parts (token.whole)
	state  bool   // a word that says a thing's state, not the action (isState)
	plural bool   // written in the plural (isPlural; a phrase's last word)
	pair   bool   // two of the query's words near each other, for what the bridge learned of them together (addPairs)
	at     int    // where the query wrote it: the index of its (first) word, for pairs (pairConcepts)
}

// weightSecondHop scales an entry of an entry's thesaurus groups (two
// steps from the query's word: "remember" → memory → knowledge graph),
// on top of both steps' weights.
var weightSecondHop = 0.4

// weightQuoted is the weight of a word inside quotes: "Old meeting notes"
// is what the tool is to find or write.
var weightQuoted = 0.25

// weightShape is the weight of the kind of a value the query holds
// (https://…, notes.md, *.go, @alice): "file" for notes.md.
var weightShape = 1.0

// weightContext is the weight of a word that follows a preposition
// (isPreposition): the namespace of "list the pods in the default
// namespace" says where, the pods what.
var weightContext = 0.9

// weightTopic is the weight of a word after a topic's marker (isTopic):
// "kubernetes" in "search memory for notes about kubernetes" is what to
// look for in memory, not a reason to rank the Kubernetes tools.
var weightTopic = 0.4

// weightValueWord is the weight of a word inside a value the query holds:
// the "config" and "ts" of src/config.ts name the file, not the tool.
var weightValueWord = 0.25

// ParseQuery reads a query: without its request frames ("can you…", "I
// need to…"), its words reduced to terms as documents' are, runs of words
// the thesaurus knows as a phrase taken as one and phrasal verbs ("set
// up", "close to") as what they point to, each with the other entries of
// its thesaurus groups and theirs; then the kinds of the values it holds
// (shapeOf), whose own words count little. A word given twice counts once.
// Whether it is a question (isQuestion) is kept for ranking.
func ParseQuery(text string) Query {
	return parseQuery(text, true)
}

// parseQuery reads a query, with the learned bridge's words or without
// them (Suggest: a name's words stand for themselves, and the CLI's "did
// you mean" need not parse the bridge).
func parseQuery(text string, learned bool) Query {
	b := queryBuilder{th: builtin(), learned: learned}
	fields := withoutFrames(withoutBefore(strings.Fields(text)))
	b.q.question = isQuestion(fields)
	qw := readQueryWords(b.th, fields)
	var run []queryToken // words in a row, for phrases
	for _, t := range qw.tokens {
		if t.phrasal {
			b.addRun(run)
			run = run[:0]
			b.add(t.term, t.written, 0, t.w, t.at) // documents never have it
			continue
		}
		if t.whole {
			b.addRun(run)
			run = run[:0]
			b.add(t.term, t.written, t.w, t.w, t.at)
			if c := &b.q.concepts[len(b.q.concepts)-1]; c.alts[0].term == t.term {
				c.whole = true
			}
			continue
		}
		run = append(run, t)
	}
	b.addRun(run)
	for _, cue := range qw.cues {
		b.add(cue.term, cue.written, 0, cue.w, cue.at) // documents never have the cue itself
	}
	for _, k := range qw.kinds {
		if !b.has(k.alts[0].term) {
			b.q.concepts = append(b.q.concepts, k)
		}
	}
	if learned {
		b.addPairs()
	}
	b.q.look = !b.q.question && !namesAction(fields, b.q.concepts)
	b.q.markNumberAndState(fields)
	return b.q
}

// markNumberAndState marks the concepts written in the plural and those
// that say a thing's state (isState). A request's first word is where it
// puts its verb: there a state word is one only before a plural ("open
// bugs", "merged PRs"), not before its object ("open the file", "open a
// PR").
func (q *Query) markNumberAndState(fields []string) {
	for i := range q.concepts {
		if c := &q.concepts[i]; !c.shape {
			c.plural = isPlural(c.word[strings.LastIndexByte(c.word, ' ')+1:])
		}
	}
	// The first word is the first that has a letter or digit, not a
	// bullet or dash before it ("- open the file", "... merged PRs").
	for len(fields) > 0 && !strings.ContainsFunc(fields[0], isAlnum) {
		fields = fields[1:]
	}
	for i := range q.concepts {
		c := &q.concepts[i]
		c.state = isState(*c)
		if i == 0 && c.state && !q.question && len(fields) > 0 && strings.HasPrefix(c.word, normalWord(fields[0])) {
			next := len(q.concepts) > 1 && len(fields) > 1 && strings.HasPrefix(normalWord(fields[1]), q.concepts[1].word)
			c.state = next && q.concepts[1].plural
		}
	}
}

func isAlnum(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// isState reports whether a concept says what state a thing is in rather
// than what to do: a past participle ("the merged PRs", "the crashed pod",
// "files modified by the PR") or "open" ("which issues are still open"),
// but as a request's first word, where the request puts its verb, only
// before a plural ("open bugs", not "open the file": markNumberAndState). It
// still matches what it says, but does not cover a tool's name's verb
// (merge_pull_request, open_nodes).
func isState(c concept) bool {
	if c.shape || strings.Contains(c.word, " ") {
		return false
	}
	return len(c.word) > 4 && strings.HasSuffix(c.word, "ed") || c.word == "open"
}

// namesAction reports whether a request (its words, without frames, and
// its concepts) names an action: it starts with a word that can be a verb
// ("approve the PR", "draft a doc": a request's verb comes first, in its
// base form), or one of its words is, or stands for, a verb tools' names
// use ("a new page", "the ssh command"). A request that names only things
// ("child blocks of block abc", "tasks due this week", "gitlab projects
// named payments") wants to look at them.
func namesAction(fields []string, concepts []concept) bool {
	for _, f := range fields {
		if w := normalWord(f); w != "" && !stopWords()[w] {
			if isVerb(w) {
				return true
			}
			break
		}
	}
	for _, c := range concepts {
		if !c.shape && !c.pair && slices.ContainsFunc(c.alts, standsForNameVerb) {
			return true
		}
	}
	return false
}

// standsForNameVerb reports whether a concept's alternative is a verb
// tools' names use and stands for the query's word: the word itself,
// what a phrasal verb points to (its own weight is 0) or a thesaurus
// entry at least related; not a second step, nor a learned bridge word,
// which only ranks ("database" → post, learned from rows added as pages,
// does not make "tasks in the notion database" a request to write).
func standsForNameVerb(a alt) bool {
	return !a.learned && (a.weight == 0 || a.weight >= 0.5) && isNameVerb(a.term)
}

// isNameVerb reports whether a term (stemmed) is a verb tools' names use
// for their action: those that change something (isWriteVerb) and those
// that look or act otherwise (get_issue, search_code, take_screenshot).
func isNameVerb(t string) bool {
	if isWriteVerb(t) {
		return true
	}
	switch t {
	case "get", "list", "read", "search", "find", "retriev", "queri", "fetch", "view", "show", "describ", "explain",
		"take", "run", "execut", "open", "press", "click", "type", "select", "hover", "navig", "wait", "handl",
		"emul", "evalu", "fill", "drag", "resiz", "echo", "trigger", "simul", "perform", "convert", "calcul",
		"reconnect", "forward", "stop", "start", "restart", "ping", "check", "look", "load", "download", "export", "import":
		return true
	}
	return false
}

// queryToken is one token of a query with its weight: 1, less after a
// preposition (weightContext), inside a value or a number
// (weightValueWord).
type queryToken struct {
	token
	w       float64
	phrasal bool // a verb and its particle ("set up"): only its thesaurus entries count
	at      int  // the index of the query's word it is of
}

// queryWords is what ParseQuery reads from a query's words before it
// builds concepts: the tokens, the kinds of the values, the cues.
type queryWords struct {
	topic  bool // after a topic's marker (isTopic), in the same clause
	tokens []queryToken
	kinds  []concept
	cues   []queryToken // at weight 1: a cue says what the request asks wherever it stands
}

// readQueryWords reads a query's words (request frames already removed).
func readQueryWords(th *thesaurus, fields []string) queryWords {
	var qw queryWords
	fields = th.joinSeparated(fields)
	from, to := sqlStatement(fields)
	if to > from {
		qw.kinds = append(qw.kinds, concept{word: strings.ToLower(strings.Join(fields[from:to], " ")), alts: []alt{{term: "sql", weight: weightShape}}, shape: true, kind: "sql", at: from})
	}
	codeFrom, codeTo := codeSpan(fields)
	if codeTo > codeFrom && !(codeFrom < to && from < codeTo) {
		qw.kinds = append(qw.kinds, concept{word: strings.ToLower(strings.Trim(strings.Join(fields[codeFrom:codeTo], " "), "`,;.:!?")), alts: []alt{{term: "code", weight: weightShape}}, shape: true, kind: "code", at: codeFrom})
	}
	context := false // after a preposition, in the same clause
	for i := 0; i < len(fields); i++ {
		if i >= from && i < to || i >= codeFrom && i < codeTo {
			// A statement's words name its tables and columns, code's
			// its own names, not the tool.
			qw.addTokens(fields[i], weightValueWord, i)
			continue
		}
		if end := quoteEnd(fields, i); end > i && (end > i+1 || shapeOf(fields[i]) == "") {
			// Quoted text is what the tool is to type, find or
			// write, not the tool (a value quoted alone, "notes.md",
			// is still a value).
			for k, f := range fields[i:end] {
				qw.addTokens(f, weightQuoted, i+k)
			}
			i = end - 1
			continue
		}
		if n, key := th.phrasalAt(fields, i); n > 0 {
			qw.tokens = append(qw.tokens, phrasalToken(fields[i:i+n], key, context, i))
			i += n - 1
			if last := fields[i]; endsClause(last) {
				context = false
			} else if isPreposition(normalWord(last)) {
				context = true // close to the station
			}
			continue
		}
		context = qw.readWord(th, fields, i, context)
	}
	return qw
}

// addTokens adds the tokens of a query's word f, each at weight w.
func (qw *queryWords) addTokens(f string, w float64, at int) {
	for _, t := range tokenize(f, nil) {
		qw.tokens = append(qw.tokens, queryToken{t, w, false, at})
	}
}

// phrasalToken is the token of a phrasal verb written as fields.
func phrasalToken(fields []string, key string, context bool, at int) queryToken {
	w := 1.0
	if context {
		w = weightContext
	}
	var written []string
	for _, f := range fields {
		written = append(written, normalWord(f))
	}
	return queryToken{token{term: key, written: strings.Join(written, " ")}, w, true, at}
}

// readWord reads the word fields[i] of a query, in context or not (after a
// preposition, in the same clause), and returns whether the next word is.
func (qw *queryWords) readWord(th *thesaurus, fields []string, i int, context bool) bool {
	f := fields[i]
	if f == "+" && i > 0 && i+1 < len(fields) && isNumber(fields[i-1]) && isNumber(fields[i+1]) {
		f = "plus" // 19 + 23
	}
	lower := strings.ToLower(strings.Trim(f, ",;.:!?\"'()"))
	if isPreposition(lower) {
		context = true
	}
	if isTopic(lower) {
		qw.topic = true
	}
	w := 1.0
	if context {
		w = weightContext
	}
	if qw.topic && !isTopic(lower) {
		w = weightTopic // instead of weightContext
	}
	kind := shapeOf(f)
	if isDistance(lower) {
		kind = "radius" // 2.5mi, not a file
	}
	if kind == "" && i+1 < len(fields) && strings.HasSuffix(f, ",") && isCoordinates(f+strings.TrimRight(fields[i+1], ",;.:!?)")) {
		kind = "coordinates" // 40.7128, -74.0060
	}
	if kind == "" && i+1 < len(fields) && isNumber(f) && distanceUnit(fields[i+1]) {
		kind = "radius" // within 1km, 1500 m of a point: how far to search
	}
	if key, ok := searchQualifier(lower); kind == "" && ok {
		// is:pr, extension:yml, org:acme: a code host's search syntax,
		// typed as the request; its key says what is searched.
		alts := []alt{{term: "search", weight: weightShape}}
		if key != "" {
			alts = []alt{{term: key, weight: weightShape}, {term: "search", weight: weightShape}}
		}
		qw.kinds = append(qw.kinds, concept{word: lower, alts: alts, shape: true, kind: "search", at: i})
	} else if kind != "" {
		if !projectPath(strings.ToLower(strings.Trim(f, "\"'`()[]{}<>,;!?.:"))) {
			w *= weightValueWord // but a project's path is also what it names: src/components
		}
		alts := []alt{{term: kindTerm(kind), weight: weightShape}}
		if kind == "issue" {
			// acme/api#77 is an issue or a pull request: forges number
			// them in one sequence.
			alts = append(alts, alt{term: "pull request", weight: weightShape * weightEquivalent})
		}
		qw.kinds = append(qw.kinds, concept{word: strings.ToLower(f), alts: alts, shape: true, kind: kind, at: i})
	} else if isDigits(strings.TrimLeft(lower, "#")) || isDecimal(lower) {
		w *= weightValueWord // a number is an argument: PR 42, the last 20 lines
	} else if isAssignment(lower) {
		w *= weightValueWord // an argument too: team=platform, LOG_LEVEL=debug
	}
	qw.addTokens(f, w, i)
	for _, word := range words(f) {
		if cue := strings.ToLower(word); stopWords()[cue] && th.alts[cue] != nil {
			qw.cues = append(qw.cues, queryToken{token{term: cue, written: cue}, 1, false, i})
		}
	}
	if lower == "and" || lower == "then" || lower == "or" || endsClause(f) {
		context = false // a new clause
		qw.topic = false
	}
	return context
}

// queryBuilder builds a Query's concepts from its tokens.
type queryBuilder struct {
	th      *thesaurus
	learned bool // add the bridge's words
	q       Query
}

func (b *queryBuilder) has(key string) bool {
	return slices.ContainsFunc(b.q.concepts, func(c concept) bool { return c.alts[0].term == key })
}

// add adds the concept of term key at weight own, and its thesaurus
// entries at their weights times factor.
func (b *queryBuilder) add(key, word string, own, factor float64, at int) {
	if b.has(key) {
		return
	}
	c := concept{word: word, alts: []alt{{term: key, weight: own}}, at: at}
	for _, r := range b.th.alts[key] {
		c.alts = append(c.alts, alt{term: r.term, weight: factor * r.weight()})
	}
	for _, r := range b.th.alts[key] {
		for _, r2 := range b.th.alts[r.term] {
			if r2.term != key && !slices.ContainsFunc(c.alts, func(a alt) bool { return a.term == r2.term }) {
				c.alts = append(c.alts, alt{term: r2.term, weight: weightSecondHop * factor * r.weight() * r2.weight()})
			}
		}
	}
	if b.learned && weightBridge > 0 && factor > 0 {
		// What the learned bridge says the word tends to mean, where
		// the thesaurus says nothing of it (bridge.go).
		for _, bw := range bridge.words(key) {
			if !slices.ContainsFunc(c.alts, func(a alt) bool { return a.term == bw.term }) {
				c.alts = append(c.alts, alt{term: bw.term, weight: weightBridge * factor * bw.strength, learned: true, written: bw.written})
			}
		}
	}
	slices.SortStableFunc(c.alts[1:], func(a, b alt) int { return cmp.Compare(b.weight, a.weight) })
	b.q.concepts = append(b.q.concepts, c)
}

// addPairs adds, for each two of the query's words, phrases, cues or
// values' kinds (pairConcepts) at most pairSpan apart that the bridge
// knows as a pair ("git log", "child blocks", "create … @file"), a
// concept of the words the pair went with beyond what either word alone
// did (bridge.go), at pairWeight. A pair's words only rank: they name no
// action (look) and no server. A pair's word that is a name's verb is
// left out where the request's own words name an action of the other
// kind ("insert child blocks": the pair's get is what "child blocks"
// alone asked for).
func (b *queryBuilder) addPairs() {
	if weightBridge <= 0 || pairWeight <= 0 {
		return
	}
	var writes, reads bool // the request's own words name an action that changes something, one that does not
	for _, c := range b.q.concepts {
		for _, a := range c.alts {
			if !c.shape && standsForNameVerb(a) {
				writes = writes || isWriteVerb(a.term)
				reads = reads || !isWriteVerb(a.term)
			}
		}
	}
	units := pairConcepts(b.q.concepts)
	for i, j := range nearPairs(len(units)) {
		key := pairTerm(units[i]) + " " + pairTerm(units[j])
		words := bridge.words(key)
		if len(words) == 0 || b.has(key) {
			continue
		}
		c := concept{word: units[i].word + " " + units[j].word, alts: []alt{{term: key}}, pair: true}
		for _, bw := range words {
			if isNameVerb(bw.term) && writes != reads && isWriteVerb(bw.term) != writes {
				continue
			}
			c.alts = append(c.alts, alt{term: bw.term, weight: weightBridge * pairWeight * bw.strength, learned: true, written: bw.written})
		}
		if len(c.alts) > 1 {
			b.q.concepts = append(b.q.concepts, c)
		}
	}
}

// nearPairs yields the positions (i, j), i before j, of each two of n
// pair concepts (pairConcepts) in order that are at most pairSpan apart: the pairs queries read
// (addPairs) and the learner counts, so that both agree. For each j, the
// nearest i comes first.
func nearPairs(n int) iter.Seq2[int, int] {
	return func(yield func(int, int) bool) {
		for j := 1; j < n; j++ {
			for i := j - 1; i >= max(0, j-pairSpan); i-- {
				if !yield(i, j) {
					return
				}
			}
		}
	}
}

// pairSpan is how far apart, in pair concepts (pairConcepts), two words of
// a request may be and still be a pair: 1 is two in a row. Requests put
// other words between the two that go together ("let the team in the
// release channel know": team … know → post), and a pair learned at any
// distance up to the span is one key. Chosen by cross-validation
// (MCPX_SEARCH_PAIR_SPANS): MRR@10 over the 21 folds 0.874 at 1, 0.881 at
// 2, 0.883 at 3, 0.886 at 4, 0.887 at 6, 0.886 at any distance;
// bridge.txt 1.2 MB at 1, 2.5 MB at 4, 2.8 MB at 6, 3.2 MB at any.
var pairSpan = 4

// pairWeight scales a pair's bridge words, as weightBridge a word's;
// chosen by cross-validation (TestBridgeCrossValidate,
// MCPX_SEARCH_PAIR_WEIGHTS): MRR@10 over the 21 folds 0.809 without pairs,
// 0.832 at 1, 0.836 at 1.5 and at 2 (pairs from one intent on, three
// words each; from two intents on, 0.824–0.827).
var pairWeight = 1.5

// minOwnWeight is the least weight of a query's own term (alts[0]) that
// is a word of the request's own: a value's, a number's, quoted text's or
// a topic's words weigh less. Only such words, and cues and phrasal verbs
// (0), start a bridge key.
const minOwnWeight = 0.5

// pairConcepts are what a pair is made of, in the order the query wrote
// them: its own words and phrases (minOwnWeight), its phrasal verbs and
// cues ("set up", "where"), and its values' kinds ("create .env.example"
// is the pair create … a file).
func pairConcepts(concepts []concept) []concept {
	var units []concept
	for _, c := range concepts {
		if !c.pair && (c.shape || c.alts[0].weight == 0 || c.alts[0].weight >= minOwnWeight) {
			units = append(units, c)
		}
	}
	slices.SortStableFunc(units, func(a, b concept) int { return cmp.Compare(a.at, b.at) })
	return units
}

// pairTerm is c as a pair's key writes it: a phrase's terms joined by "_"
// (a key's one space parts its two), a value by its kind, marked as not
// the word ("@file": a file's name says more than the word file).
func pairTerm(c concept) string {
	if c.shape {
		return "@" + c.kind
	}
	return strings.ReplaceAll(c.alts[0].term, " ", "_")
}

// addRun adds a run of words in a row: the longest phrases the thesaurus
// knows as one concept each, the other words one by one.
func (b *queryBuilder) addRun(run []queryToken) {
	for i := 0; i < len(run); {
		terms := make([]string, 0, len(run)-i)
		for _, t := range run[i:] {
			terms = append(terms, t.term)
		}
		n := max(b.th.phraseAt(terms, 0), 1)
		var written []string
		w := 1.0
		for _, t := range run[i : i+n] {
			written = append(written, t.written)
			w = min(w, t.w)
		}
		b.add(strings.Join(terms[:n], " "), strings.Join(written, " "), w, w, run[i].at)
		i += n
	}
}

// sqlStatement returns where a statement of SQL the query holds starts and
// ends (fields[from:to]), or 0, 0: from a statement's verb to the end, when
// the keyword that verb needs follows (SELECT … FROM, INSERT INTO, UPDATE …
// SET, DELETE FROM, CREATE TABLE…) and both are written in capitals or the
// statement holds SQL's punctuation (count(*), a = 1, …;): "select the last
// orders from the database" is English, "SELECT * FROM orders" SQL.
func sqlStatement(fields []string) (from, to int) {
	word := func(f string) (w string, upper bool) {
		w = strings.Trim(f, ",;()")
		return strings.ToLower(w), w == strings.ToUpper(w)
	}
	for i, f := range fields {
		verb, upper := word(f)
		var partners []string
		switch verb {
		case "select", "delete":
			partners = []string{"from"}
		case "insert":
			partners = []string{"into"}
		case "update":
			partners = []string{"set"}
		case "create", "alter", "drop":
			partners = []string{"table", "index", "view"}
		default:
			continue
		}
		partner, punct := false, false
		for _, g := range fields[i+1:] {
			if w, u := word(g); slices.Contains(partners, w) && !partner {
				partner, upper = true, upper && u
			}
			punct = punct || strings.ContainsAny(g, "*=;(")
		}
		if partner && (upper || punct) {
			for i > 0 && isSQLPrefix(fields[i-1]) {
				i-- // EXPLAIN ANALYZE SELECT …: the plan of the statement is SQL too
			}
			return i, len(fields)
		}
	}
	return 0, 0
}

// searchQualifier reports whether f (lower case) is a qualifier of a code
// host's search syntax (is:pr, extension:yml, org:acme), and the term of
// what its key searches ("" when the key only narrows where: org, repo).
func searchQualifier(f string) (string, bool) {
	key, value, ok := strings.Cut(f, ":")
	if !ok || value == "" || strings.HasPrefix(value, "//") {
		return "", false
	}
	switch key {
	case "is":
		switch value {
		case "pr", "pull-request", "merged", "draft":
			return "pull request", true
		case "issue", "open", "closed":
			return "issu", true
		}
	case "mentions", "review-requested", "reviewed-by", "commenter", "involves":
		return "issu", true
	case "extension", "filename", "path", "in", "symbol":
		return "code", true
	case "topic", "stars", "forks", "archived", "pushed":
		return "repositori", true
	case "followers", "location", "repos":
		return "user", true
	case "org", "repo", "user":
		return "", true
	}
	return "", false
}

// isSQLPrefix reports whether f is a keyword written in capitals that
// asks for a statement's plan rather than its rows (EXPLAIN, ANALYZE).
func isSQLPrefix(f string) bool {
	switch f {
	case "EXPLAIN", "ANALYZE", "ANALYSE", "VERBOSE":
		return true
	}
	return false
}

// codeSpan returns where the first span of code the query quotes in
// backticks starts and ends (fields[from:to]), or 0, 0: "where is `func
// NewRouter` defined", "run `document.title` in the page".
func codeSpan(fields []string) (from, to int) {
	for i, f := range fields {
		if !strings.HasPrefix(f, "`") {
			continue
		}
		for j := i; j < len(fields); j++ {
			g := strings.TrimRight(fields[j], ",;.:!?")
			if strings.HasSuffix(g, "`") && (j > i || len(g) > 1) {
				if strings.Trim(strings.Join(fields[i:j+1], ""), "`,;.:!?") == "" {
					break // `` quotes nothing: look for the next span
				}
				return i, j + 1
			}
		}
	}
	return 0, 0
}

// quoteEnd returns the end (exclusive) of the text quoted in double or
// single quotes that starts at fields[i] ("Old meeting notes", 'hello
// world', “Saved”), or i when none does: the quote must close, at the end
// of a word, within the query.
func quoteEnd(fields []string, i int) int {
	open, _ := utf8.DecodeRuneInString(fields[i])
	var closing rune
	switch open {
	case '"':
		closing = '"'
	case '\'':
		closing = '\''
	case '“':
		closing = '”'
	default:
		return i
	}
	for j := i; j < len(fields); j++ {
		f := strings.TrimRight(fields[j], ",;.:!?)")
		if j == i {
			f = f[utf8.RuneLen(open):]
		}
		if last, n := utf8.DecodeLastRuneInString(f); n > 0 && last == closing {
			return j + 1
		}
	}
	return i
}

// isQuestion reports whether a query (its words) asks a question rather
// than for an action: it starts with a question word ("which pods are
// crashing", "is the build green", "when was it created") or ends with
// "?". A request put as a question ("can you create…", "how do I
// delete…") is not one.
func isQuestion(fields []string) bool {
	if len(fields) == 0 {
		return false
	}
	word := func(i int) string {
		if i >= len(fields) {
			return ""
		}
		return normalWord(fields[i])
	}
	switch word(0) {
	case "can", "could", "would", "will", "please", "pls":
		return false // a request: can you…
	case "how":
		switch word(1) {
		case "do", "can", "should", "would", "to", "could":
			return false // how do I…: asks for the action
		}
		return true
	case "what", "what's", "whats", "which", "who", "who's", "whom", "whose", "where", "where's", "when", "why", "whether",
		"is", "are", "was", "were", "does", "do", "did", "has", "have", "had", "any", "isn't", "aren't", "doesn't", "didn't":
		return true
	}
	return strings.HasSuffix(fields[len(fields)-1], "?")
}

// normalWord is a query's word lower-cased, without the punctuation around
// it, with a typographic apostrophe made plain.
func normalWord(f string) string {
	return strings.ReplaceAll(strings.ToLower(strings.Trim(f, ",;.:!?\"'()")), "’", "'")
}

// endsClause reports whether a query's word ends a clause (a comma, a full
// stop…).
func endsClause(f string) bool { return strings.ContainsAny(f[len(f)-1:], ",;.:!?") }

// withoutBefore drops the verb of a leading clause that says when, not
// what: "before I delete anything, tell me which cluster kubectl talks to".
// That verb is the agent's next step, not the request ("delete" would
// win); the clause's object stays, for it is often the request's too
// ("before I touch PR 77: its author").
func withoutBefore(fields []string) []string {
	if len(fields) < 4 || normalWord(fields[0]) != "before" || endsClause(fields[2]) {
		return fields
	}
	switch normalWord(fields[1]) {
	case "i", "we", "you":
		return fields[3:]
	}
	return fields
}

// frames are the words around a request that say nothing of the task:
// "can you…", "I need to…", "go ahead and…", "tell me…", "for me". They are
// dropped before a query is read (withoutFrames), with any word that
// would otherwise count ("go" would navigate, "make" create, "tell" send).
var frames = [][]string{
	{"can", "you"}, {"could", "you"}, {"would", "you"}, {"will", "you"}, {"would", "you", "mind"},
	{"i", "need", "to"}, {"i", "want", "to"}, {"i'd", "like", "to"}, {"i", "would", "like", "to"}, {"i", "have", "to"},
	{"we", "need", "to"}, {"i'm", "trying", "to"}, {"i", "am", "trying", "to"}, {"trying", "to"}, {"try", "to"},
	{"help", "me"}, {"help", "us"}, {"go", "ahead", "and"}, {"make", "sure"}, {"make", "sure", "that"},
	{"find", "out"}, {"figure", "out"}, {"tell", "me"}, {"tell", "us"}, {"let", "me", "know"}, {"let", "us", "know"},
	{"for", "me"}, {"for", "us"}, {"is", "there", "a", "way", "to"}, {"is", "it", "possible", "to"},
	{"how", "do", "i"}, {"how", "can", "i"}, {"how", "would", "i"}, {"how", "should", "i"},
	{"what's", "the", "best", "way", "to"}, {"what", "is", "the", "best", "way", "to"},
	{"right", "now"}, {"real", "quick"}, {"quickly"}, {"asap"}, {"if", "possible"}, {"if", "you", "can"},
	{"thanks"}, {"thank", "you"}, {"kindly"}, {"please"}, {"hey"},
}

// withoutFrames returns fields without the words of frames.
func withoutFrames(fields []string) []string {
	out := make([]string, 0, len(fields))
	for i := 0; i < len(fields); {
		n := 0
		for _, fr := range frames {
			if len(fr) > n && i+len(fr) <= len(fields) && slices.EqualFunc(fr, fields[i:i+len(fr)], func(w, f string) bool { return w == normalWord(f) }) {
				n = len(fr)
			}
		}
		if n == 0 {
			out = append(out, fields[i])
			i++
			continue
		}
		// A frame ending a clause ("…for me.") keeps the clause's end.
		if last := fields[i+n-1]; endsClause(last) && len(out) > 0 && !endsClause(out[len(out)-1]) {
			out[len(out)-1] += last[len(last)-1:]
		}
		i += n
	}
	return out
}

// isTopic reports whether a query's word says that the words after it (in
// the same clause) are what the tool's content is about, or its name:
// "search memory for anything about deadlines", "the page titled
// Roadmap". They name what the tool will look for, not the tool.
func isTopic(w string) bool {
	switch w {
	case "about", "regarding", "concerning", "mentioning", "titled", "named", "called":
		return true
	}
	return false
}

// isPreposition: the words after it (in the same clause) say where or of
// what, not what the tool does: "list the pods in the default namespace".
func isPreposition(w string) bool {
	switch w {
	case "in", "on", "of", "at", "from", "to", "into", "onto", "for", "with", "about", "by", "over", "under",
		"between", "through", "across", "inside", "within", "during", "via", "per", "without", "among", "off":
		return true
	}
	return false
}

// Empty reports whether the query has no word search can use (only
// common words, or none).
func (q Query) Empty() bool { return len(q.concepts) == 0 }

// shapeOf is the kind of thing a word of a query is, when it is a value
// rather than a word — an agent names the file or page it works on — as
// the term tools use for it: "url" (https://…, www.…, localhost:3000,
// example.com), "directory" (src/, db/migrations), "file" (notes.md,
// ./run.sh, /etc/hosts), "pattern" (*.go), "user" (@alice, Slack's
// U024BE7LH), "channel" (#general, Slack's C024BE91L), "emoji"
// (:eyes:), "coordinates" (40.71,-74.01), "environment" (OPENAI_API_KEY,
// $HOME), "email" (jane@x.io), "javascript" (document.title); else "".
func shapeOf(f string) string {
	f = strings.Trim(f, "\"'`()[]{}<>,;!?")
	if len(f) > 2 && f[0] == ':' && f[len(f)-1] == ':' && isName(strings.ReplaceAll(f[1:len(f)-1], "+", "")) {
		return "emoji" // :thumbsup:, :+1:
	}
	if isEmojiChars(f) {
		return "emoji" // 👀, 👍🏽
	}
	f = strings.TrimRight(f, ".:")
	f = strings.TrimSuffix(strings.TrimSuffix(f, "'s"), "’s") // c.go's contents
	if len(f) < 2 {
		return ""
	}
	lower := strings.ToLower(f)
	switch {
	case strings.Contains(lower, "://"), strings.HasPrefix(lower, "www."), strings.HasPrefix(lower, "localhost"):
		return "url"
	case isIssueRef(f), len(f) > 1 && f[0] == '#' && isDigits(f[1:]):
		return "issue" // acme/api#77, #12
	case strings.ContainsAny(f, "*?") && !strings.ContainsAny(f, "()=,"):
		return "pattern" // not count(*), a=?
	case f[0] == '@' && isName(f[1:]):
		return "user"
	case isEmail(f):
		return "email" // jane@x.io, not a file
	case isCoordinates(f):
		return "coordinates"
	case isEnvName(f) || conventionalEnv(f):
		return "environment" // OPENAI_API_KEY, $HOME, PATH
	case f[0] == '#' && isName(f[1:]) && !isDigits(f[1:]):
		return "channel"
	case isSlackID(f, "CGD"):
		return "channel" // C024BE91L: a channel's id, as Slack writes it
	case isSlackID(f, "UW"):
		return "user" // U024BE7LH
	case conventionalFile(lower):
		return "file"
	case isBrowserGlobal(f):
		return "javascript" // document.title, window.scrollTo(0, not a file
	}
	dir, base := "", lower
	if i := strings.LastIndexByte(lower, '/'); i >= 0 {
		dir, base = lower[:i+1], lower[i+1:]
	}
	name, ext, dotted := cutLast(base, '.')
	switch {
	case dotted && isName(name) && webDomains(ext) && dir == "":
		return "url" // example.com, x.com
	case dotted && len(ext) <= 5 && isName(ext) && !isDigits(ext) && (len(name) >= 2 || len(ext) >= 2 && isName(name)):
		return "file" // notes.md, a.go, not e.g
	case dir != "" && base == "" && len(dir) > 1:
		return "directory" // src/, /var/log/
	case dir != "" && (dir[0] == '/' || strings.HasPrefix(dir, "./") || strings.HasPrefix(dir, "~/")):
		return "file"
	case projectPath(lower):
		return "directory" // db/migrations, src/components: not owner/repo
	}
	return ""
}

// isEmojiChars reports whether f is written in emoji alone (👀, 👍🏽,
// ✅): pictographic symbols with their skin-tone modifiers, variation
// selectors and joiners.
func isEmojiChars(f string) bool {
	pictographs := 0
	for _, r := range f {
		switch {
		case r == 0x200d || r >= 0xfe00 && r <= 0xfe0f || r >= 0x1f3fb && r <= 0x1f3ff:
			// a joiner, a variation selector, a skin tone
		case unicode.Is(unicode.So, r) && (r >= 0x2600 && r <= 0x27bf || r >= 0x1f000):
			pictographs++
		default:
			return false
		}
	}
	return pictographs > 0
}

// isBrowserGlobal reports whether f reads a property of one of the
// browser's globals, as a page's JavaScript does (document.title,
// window.scrollTo(0, localStorage.getItem('k')), and not a file's name
// (document.pdf, window.png): the property is one of the document's, or is
// written as code is, in camel case, called or followed by another.
func isBrowserGlobal(f string) bool {
	global, prop, ok := strings.Cut(f, ".")
	if !ok || prop == "" {
		return false
	}
	switch strings.ToLower(global) {
	case "document", "window", "navigator", "localstorage", "sessionstorage":
	default:
		return false
	}
	switch prop {
	case "title", "body", "cookie", "referrer", "domain", "head", "forms", "links", "images":
		return true
	}
	return strings.ContainsAny(prop, ".([ABCDEFGHIJKLMNOPQRSTUVWXYZ")
}

// isSlackID reports whether f is written as Slack writes the id of a
// channel (C…, G…, D…) or a user (U…, W…): one of kinds' capitals, then 7
// to 11 capitals and digits, at least one of each (C0456DEF, C07INCIDNT),
// so that neither a word in capitals (CONTRIBUTING) nor a number is one.
func isSlackID(f, kinds string) bool {
	if len(f) < 8 || len(f) > 12 || !strings.ContainsRune(kinds, rune(f[0])) {
		return false
	}
	var letters, digits int
	for _, r := range f[1:] {
		switch {
		case r >= 'A' && r <= 'Z':
			letters++
		case r >= '0' && r <= '9':
			digits++
		default:
			return false
		}
	}
	return letters > 0 && digits > 0
}

// isEmail reports whether f is an e-mail address: a name, @, and a
// domain with a dot (jane@x.io).
func isEmail(f string) bool {
	local, domain, ok := strings.Cut(f, "@")
	return ok && isName(local) && strings.Contains(strings.Trim(domain, "."), ".") && isName(domain)
}

// isCoordinates reports whether f is a latitude and a longitude, decimal
// numbers with a comma between them (40.7128,-74.0060).
func isCoordinates(f string) bool {
	lat, lng, ok := strings.Cut(f, ",")
	return ok && isDecimal(lat) && isDecimal(lng)
}

// isEnvName reports whether f is written as environment variables are:
// capitals, digits and underscores, with at least one underscore
// (AWS_REGION), or a capitalised name after a $ ($HOME).
func isEnvName(f string) bool {
	name, dollar := strings.CutPrefix(f, "$")
	if len(name) < 2 || (!dollar && !strings.Contains(name, "_")) || name[0] < 'A' || name[0] > 'Z' {
		return false
	}
	for _, r := range name {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// isDistance reports whether f (lower case) is a distance written as one
// word: a number, then its unit (1km, 2.5mi); not 500m, which is as
// often ten minutes (--since=10m) or half a CPU.
func isDistance(f string) bool {
	n := strings.IndexFunc(f, func(r rune) bool { return !(r >= '0' && r <= '9' || r == '.') })
	return n > 0 && isNumber(f[:n]) && f[n:] != "m" && distanceUnit(f[n:])
}

// distanceUnit reports whether u is a unit of distance (m, km, miles…).
func distanceUnit(u string) bool {
	switch strings.ToLower(strings.TrimRight(u, ",;.:!?)")) {
	case "m", "km", "mi", "ft", "yd", "meter", "meters", "metre", "metres", "kilometer", "kilometers", "kilometre", "kilometres",
		"mile", "miles", "feet", "yard", "yards":
		return true
	}
	return false
}

// isAssignment reports whether a query's word gives a key a value
// (team=platform, LOG_LEVEL=debug, --replicas=3).
func isAssignment(w string) bool {
	key, value, ok := strings.Cut(strings.TrimLeft(w, "-"), "=")
	return ok && isName(key) && value != "" && !strings.ContainsAny(value, "=")
}

// isNumber reports whether a query's word is a number (19, -1.5, 23?).
func isNumber(f string) bool {
	f = strings.TrimRight(f, ",;.:!?)")
	return isDigits(strings.TrimPrefix(f, "-")) || isDecimal(f)
}

// isDecimal reports whether s is a number with a fractional part, signed
// or not (-74.0060).
func isDecimal(s string) bool {
	whole, frac, ok := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	return ok && isDigits(whole) && isDigits(frac)
}

func cutLast(s string, sep byte) (before, after string, found bool) {
	if i := strings.LastIndexByte(s, sep); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// isName: letters, digits, and - _ . only, at least one letter or digit.
func isName(s string) bool {
	ok := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			ok = true
		case r == '-' || r == '_' || r == '.':
		default:
			return false
		}
	}
	return ok
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// conventionalFile reports whether name is a file every project knows by
// its name alone, or a dot file (.env, .gitignore).
func conventionalFile(name string) bool {
	switch name {
	case "readme", "license", "licence", "changelog", "makefile", "dockerfile", "gemfile", "procfile", "vagrantfile", "jenkinsfile":
		return true
	}
	return len(name) > 2 && name[0] == '.' && name[1] != '.' && name[1] != '/' && isName(name[1:]) && !formatExt(name[1:])
}

// projectPath reports whether f (lower case) is a relative path without
// an extension whose first directory is one every project knows by its
// name alone (db/migrations, src/components), so that it is read as a
// directory rather than as a repository's owner/name. (deploy/x is not
// one: kubectl's deployment.)
func projectPath(f string) bool {
	first, rest, ok := strings.Cut(f, "/")
	if !ok || rest == "" || strings.HasSuffix(rest, "/") || strings.Contains(rest[strings.LastIndexByte(rest, '/')+1:], ".") {
		return false
	}
	switch first {
	case "src", "lib", "db", "docs", "doc", "test", "tests", "build", "dist", "scripts", "config",
		"internal", "cmd", "pkg", "app", "public", "assets", "static", "migrations", "bin", "vendor", "node_modules",
		"tmp", "var", "etc", "out", "target", "examples", "testdata":
		return true
	}
	return false
}

// formatExt reports whether ext, written alone after a dot (".md", ".gz"),
// is a file format an agent asks for ("as .md", "into a .gz"), not a dot
// file (.env, .gitignore): the query means the format's word.
func formatExt(ext string) bool {
	switch ext {
	case "md", "txt", "json", "yaml", "yml", "csv", "tsv", "xml", "html", "pdf", "png", "jpg", "jpeg", "gif", "svg",
		"gz", "tgz", "zip", "tar", "bz2", "xz", "mp3", "mp4", "wav":
		return true
	}
	return false
}

// conventionalEnv reports whether f is an environment variable every
// process knows by its name alone, written in capitals (PATH, HOME).
func conventionalEnv(f string) bool {
	switch f {
	case "PATH", "HOME", "USER", "SHELL", "LANG", "TMPDIR", "EDITOR", "PWD", "TERM", "GOPATH", "PYTHONPATH":
		return true
	}
	return false
}

// isIssueRef reports whether f is a reference to a repository's issue or
// pull request as forges write it: owner/repo#number (acme/api#77).
func isIssueRef(f string) bool {
	repo, num, ok := strings.Cut(f, "#")
	owner, name, slash := strings.Cut(repo, "/")
	return ok && slash && isDigits(num) && isName(owner) && isName(name)
}

// webDomains reports whether ext is a top-level domain common in the
// addresses an agent types (example.com), not a file extension.
func webDomains(ext string) bool {
	switch ext {
	case "com", "org", "net", "io", "dev", "app", "ai", "co", "edu", "gov", "info":
		return true
	}
	return false
}

// kindTerm is the term of a value's kind, as documents index it
// ("directory" → directori).
func kindTerm(kind string) string {
	t, _ := term(kind)
	return t
}
