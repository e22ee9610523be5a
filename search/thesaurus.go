package search

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// The thesaurus (thesaurus.txt, embedded) says which words of tool
// vocabulary stand for each other: abbreviations and other spellings
// ("repo = repository", "k8s = kubernetes", "pr = pull request"), and
// groups of related words such as verb classes ("create, make, new, add").
// A query word also matches the other entries of its groups, at a lower
// weight than itself: an equivalent at weightEquivalent, a related word at
// weightRelated. Entries of several words are phrases: a document holding
// them in a row gets the phrase as one more term, and a query holding them
// in a row searches for the phrase.
//
// The file is parsed on first use, never at init: the CLI links this
// package for its suggestions and must start like hello-world.

//go:embed thesaurus.txt
var thesaurusText string

// Weights of a match through the thesaurus, relative to the query's own
// word (1). Tuned on the development intents (testdata/README.md).
var (
	weightEquivalent = 0.9
	weightRelated    = 0.7
)

// ErrThesaurus is the kind of every error reading a thesaurus.
var ErrThesaurus error = thesaurusError{}

// thesaurusError is ErrThesaurus's type: a value, so that declaring it is
// no work at init.
type thesaurusError struct{}

func (thesaurusError) Error() string { return "bad thesaurus" }

// thesaurus is a parsed thesaurus.txt.
type thesaurus struct {
	alts    map[string][]related  // term → the other entries of its groups (equivalent if any group says so)
	phrases map[string][][]string // first term → the phrases it starts, longest first
	written map[string]string     // term → the entry as written, for the why of a match
	// phrasal are the phrases of a verb and its particle ("set up", "tear
	// down", "close to") that a query may hold, by first word: each word
	// reduced to its term, or kept when it is a common word (phrasalWord).
	phrasal map[string][][]string
	// separable are the phrasal verbs whose object may stand between
	// verb and particle ("let the team know": "let … know" in the file),
	// by verb: their particles (phrasalWord).
	separable map[string][]string
}

// alt is one term a query word may match, with the weight of that match.
type alt struct {
	term    string
	weight  float64
	learned bool   // from the learned bridge (bridge.go), not the thesaurus
	written string // a bridge word as tools write it, for the why of a match
}

// related is an entry of a word's thesaurus groups.
type related struct {
	term       string
	equivalent bool // in a group of equivalents (else related words)
}

func (r related) weight() float64 {
	if r.equivalent {
		return weightEquivalent
	}
	return weightRelated
}

var (
	builtinOnce sync.Once
	builtinThes *thesaurus
)

// builtin is the embedded thesaurus, parsed on first use.
func builtin() *thesaurus {
	builtinOnce.Do(func() {
		t, err := parseThesaurus(thesaurusText)
		if err != nil {
			// The embedded file is checked by TestThesaurusFile; a build
			// whose data is broken must not rank silently without it.
			panic(err)
		}
		builtinThes = t
	})
	return builtinThes
}

// parseThesaurus reads the thesaurus format, one group a line ("#" starts
// a comment):
//
//	a = b = c      equivalents: each matches the others (weightEquivalent)
//	a, b, c        related words: each matches the others (weightRelated)
//	a > b, c       one way: a matches b and c (weightRelated), not the reverse
//
// The a of a one-way line may be a common word that search otherwise
// ignores: a cue, which in a query matches only what it points to ("when >
// time, date"); or a phrasal verb, a phrase with such a word, which keeps
// it and in a query matches only what it points to ("set up > create": not
// "set"). A phrasal verb written "let … know" is separable: its object may
// stand between verb and particle ("let the team know": joinSeparated).
// A line is one kind only. An entry is a word or a phrase of several words,
// reduced to terms the way documents are (stop words dropped, stemmed).
func parseThesaurus(text string) (*thesaurus, error) {
	t := &thesaurus{alts: map[string][]related{}, phrases: map[string][][]string{}, written: map[string]string{}, phrasal: map[string][][]string{}, separable: map[string][]string{}}
	for n, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if problem := t.parseLine(line); problem != "" {
			return nil, fmt.Errorf("%w: line %d: %s", ErrThesaurus, n+1, problem)
		}
	}
	for _, ps := range t.phrases {
		slices.SortStableFunc(ps, func(a, b []string) int { return len(b) - len(a) })
	}
	for _, ps := range t.phrasal {
		slices.SortStableFunc(ps, func(a, b []string) int { return len(b) - len(a) })
	}
	return t, nil
}

// parseLine adds one line's group to t, or says what is wrong with it.
func (t *thesaurus) parseLine(line string) (problem string) {
	entries, oneWay, equivalent, problem := splitLine(line)
	if problem != "" {
		return problem
	}
	group, problem := t.group(entries, oneWay)
	if problem != "" {
		return problem
	}
	if len(group) < 2 {
		return "a group needs at least two entries"
	}
	if oneWay {
		for _, b := range group[1:] {
			t.add(group[0], b, false)
		}
		return ""
	}
	for _, a := range group {
		for _, b := range group {
			if a != b {
				t.add(a, b, equivalent)
			}
		}
	}
	return ""
}

// splitLine tells a line's kind (one way, equivalents or related words)
// and splits it into its entries as written.
func splitLine(line string) (entries []string, oneWay, equivalent bool, problem string) {
	kinds := 0
	for _, sep := range []string{"=", ",", ">"} {
		if strings.Contains(line, sep) {
			kinds++
		}
	}
	oneWay = strings.Contains(line, ">")
	switch {
	case kinds == 0:
		return nil, false, false, "a group needs at least two entries"
	case kinds > 1 && !(oneWay && kinds == 2 && !strings.Contains(line, "=")):
		return nil, false, false, "a line is equivalents (a = b), related words (a, b) or one way (a > b, c), not a mix"
	case oneWay && strings.Count(line, ">") > 1:
		return nil, false, false, "one way is a single word or phrase, then \">\", then what it matches"
	}
	switch {
	case oneWay:
		from, to, _ := strings.Cut(line, ">")
		entries = append([]string{from}, strings.Split(to, ",")...)
	case strings.Contains(line, "="):
		entries, equivalent = strings.Split(line, "="), true
	default:
		entries = strings.Split(line, ",")
	}
	return entries, oneWay, equivalent, ""
}

// group reduces a line's entries to their keys, recording on the way how
// each was written, the phrases and the phrasal verbs.
func (t *thesaurus) group(entries []string, oneWay bool) (group []string, problem string) {
	for _, entry := range entries {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			return nil, "an empty entry"
		}
		if verb, particle, ok := strings.Cut(entry, "…"); ok && oneWay && len(group) == 0 {
			// A separable phrasal verb: "let … know".
			v, pt := strings.Fields(verb), strings.Fields(particle)
			if len(v) != 1 || len(pt) != 1 {
				return nil, fmt.Sprintf("%q: a separable phrasal verb is a word, \"…\", a word", entry)
			}
			entry = v[0] + " " + pt[0]
			t.separable[phrasalWord(v[0])] = append(t.separable[phrasalWord(v[0])], phrasalWord(pt[0]))
		}
		terms := entryTerms(entry)
		if p := phrasalWords(entry); oneWay && len(group) == 0 && p != nil {
			// A verb and its particle: "set up > create".
			key := strings.Join(p, " ")
			if !slices.ContainsFunc(t.phrasal[p[0]], func(q []string) bool { return slices.Equal(p, q) }) {
				t.phrasal[p[0]] = append(t.phrasal[p[0]], p)
			}
			group = append(group, key)
			t.written[key] = entry
			continue
		}
		if len(terms) == 0 && oneWay && len(group) == 0 && stopWords()[strings.ToLower(entry)] {
			// A cue: a common word documents do not index, which in a
			// query says what is asked for ("when" → a time).
			terms = []string{strings.ToLower(entry)}
		}
		if len(terms) == 0 {
			return nil, fmt.Sprintf("%q is only common words, which search ignores", entry)
		}
		key := strings.Join(terms, " ")
		if slices.Contains(group, key) {
			return nil, fmt.Sprintf("%q says the same as another entry of the line", entry)
		}
		group = append(group, key)
		if _, ok := t.written[key]; !ok {
			t.written[key] = entry
		}
		if len(terms) > 1 && !slices.ContainsFunc(t.phrases[terms[0]], func(p []string) bool { return slices.Equal(p, terms) }) {
			t.phrases[terms[0]] = append(t.phrases[terms[0]], terms)
		}
	}
	return group, ""
}

// entryTerms reduces an entry to terms, each word whole ("k8s", "oauth2"):
// the terms a document has for those words, whole or not.
func entryTerms(entry string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(entry, func(r rune) bool { return !isWordRune(r) }) {
		if t, ok := term(w); ok {
			out = append(out, t)
		}
	}
	return out
}

// phrasalWords returns the words of entry as phrasalWord reduces them, if
// it is a phrase some word of which is a common word ("set up", "close
// to"); else nil.
func phrasalWords(entry string) []string {
	fields := strings.Fields(entry)
	if len(fields) < 2 {
		return nil
	}
	out := make([]string, len(fields))
	common := false
	for i, f := range fields {
		out[i] = phrasalWord(f)
		common = common || stopWords()[out[i]]
	}
	if !common {
		return nil
	}
	return out
}

// phrasalWord is a word of a phrasal verb: its term, or the word itself
// (lower case) when it is a common word, which search otherwise drops.
func phrasalWord(w string) string {
	w = normalWord(w)
	if t, ok := term(w); ok {
		return t
	}
	return w
}

// phrasalAt returns the longest phrasal verb that starts at fields[i]
// (its length in words, and its key), or 0.
func (t *thesaurus) phrasalAt(fields []string, i int) (int, string) {
	ps := t.phrasal[phrasalWord(fields[i])]
	for _, p := range ps {
		if i+len(p) > len(fields) {
			continue
		}
		ok := true
		for k, w := range p[1:] {
			if phrasalWord(fields[i+1+k]) != w {
				ok = false
				break
			}
		}
		if ok {
			return len(p), strings.Join(p, " ")
		}
	}
	return 0, ""
}

// maxSeparated is how many words may stand between a separable phrasal
// verb and its particle ("let the #deploys channel know").
const maxSeparated = 3

// joinSeparated returns fields with the particle of each separable
// phrasal verb moved next to its verb, when at most maxSeparated words of
// the same clause stand between them: "let the team know" is read as
// "let know the team". It returns fields itself when there is none.
func (t *thesaurus) joinSeparated(fields []string) []string {
	for i := 0; i+2 < len(fields); i++ {
		particles := t.separable[phrasalWord(fields[i])]
		if particles == nil || t.startsPhrase(fields, i) {
			continue // "pull request into main" is a pull request, not pull … into
		}
		for j := i + 2; j < len(fields) && j <= i+1+maxSeparated && !endsClause(fields[j-1]); j++ {
			if !slices.Contains(particles, phrasalWord(fields[j])) {
				continue
			}
			out := make([]string, 0, len(fields))
			out = append(out, fields[:i+1]...)
			particle := fields[j]
			trimmed := strings.TrimRight(particle, ",;.:!?")
			out = append(out, trimmed)
			out = append(out, fields[i+1:j]...)
			// The particle's punctuation still ends the clause where it did.
			out[len(out)-1] += particle[len(trimmed):]
			return append(out, fields[j+1:]...)
		}
	}
	return fields
}

// startsPhrase reports whether fields[i] and the word after it begin a
// phrase the thesaurus knows ("pull request").
func (t *thesaurus) startsPhrase(fields []string, i int) bool {
	next := phrasalWord(fields[i+1])
	return slices.ContainsFunc(t.phrases[phrasalWord(fields[i])], func(p []string) bool { return p[1] == next })
}

// add records that term a also matches b (as an equivalent if any group
// of both says so).
func (t *thesaurus) add(a, b string, equivalent bool) {
	for i, x := range t.alts[a] {
		if x.term == b {
			t.alts[a][i].equivalent = x.equivalent || equivalent
			return
		}
	}
	t.alts[a] = append(t.alts[a], related{b, equivalent})
}

// phraseAt returns the longest phrase the thesaurus knows that starts at
// terms[i] (its length in terms), or 0.
func (t *thesaurus) phraseAt(terms []string, i int) int {
	for _, p := range t.phrases[terms[i]] {
		if i+len(p) <= len(terms) && slices.Equal(terms[i:i+len(p)], p) {
			return len(p)
		}
	}
	return 0
}
