package search

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
)

// Query is a parsed query: one concept per word (or thesaurus phrase) that
// search does not ignore, and one per value that says what kind of thing
// the tool works on.
type Query struct {
	concepts []concept
}

type concept struct {
	word  string // as the query wrote it, lower case
	alts  []alt  // alts[0] is its own term (weight 1, less in context or a value, 0 for a cue); then the thesaurus's, best first
	shape bool   // a value's kind (a URL, a file…): alts[0] is the kind, at weightShape
	whole bool   // the whole of a word written in parts (token.whole)
}

// weightShape is the weight of the kind of a value the query holds
// (https://…, notes.md, *.go, @alice): "file" for notes.md.
var weightShape = 1.0

// weightContext is the weight of a word that follows a preposition
// (isPreposition): the namespace of "list the pods in the default
// namespace" says where, the pods what.
var weightContext = 0.9

// weightValueWord is the weight of a word inside a value the query holds:
// the "config" and "ts" of src/config.ts name the file, not the tool.
var weightValueWord = 0.25

// ParseQuery reads a query: its words reduced to terms as documents' are,
// runs of words the thesaurus knows as a phrase taken as one, each with
// the other entries of its thesaurus groups; then the kinds of the values
// it holds (shapeOf), whose own words count little. A word given twice
// counts once.
func ParseQuery(text string) Query {
	th := builtin()
	var q Query
	has := func(key string) bool {
		return slices.ContainsFunc(q.concepts, func(c concept) bool { return c.alts[0].term == key })
	}
	// add adds the concept of term key at weight own, and its thesaurus
	// entries at their weights times factor.
	add := func(key, word string, own, factor float64) {
		if has(key) {
			return
		}
		c := concept{word: word, alts: []alt{{key, own}}}
		for _, r := range th.alts[key] {
			c.alts = append(c.alts, alt{r.term, factor * r.weight()})
		}
		slices.SortStableFunc(c.alts[1:], func(a, b alt) int { return cmp.Compare(b.weight, a.weight) })
		q.concepts = append(q.concepts, c)
	}
	// The query's tokens, each with its weight: 1, less after a
	// preposition (weightContext), inside a value or a number
	// (weightValueWord).
	type weighted struct {
		token
		w float64
	}
	var tokens []weighted
	var kinds []concept
	var cues []string
	context := false // after a preposition, in the same clause
	for _, f := range strings.Fields(text) {
		lower := strings.ToLower(strings.Trim(f, ",;.:!?\"'()"))
		if isPreposition(lower) {
			context = true
		}
		w := 1.0
		if context {
			w = weightContext
		}
		if kind := shapeOf(f); kind != "" {
			w *= weightValueWord
			kinds = append(kinds, concept{word: strings.ToLower(f), alts: []alt{{kind, weightShape}}, shape: true})
		} else if isDigits(strings.TrimLeft(lower, "#")) {
			w *= weightValueWord // a number is an argument: PR 42, the last 20 lines
		}
		for _, t := range tokenize(f, nil) {
			tokens = append(tokens, weighted{t, w})
		}
		for _, word := range words(f) {
			if cue := strings.ToLower(word); stopWords()[cue] && th.alts[cue] != nil {
				cues = append(cues, cue)
			}
		}
		if lower == "and" || lower == "then" || lower == "or" || strings.ContainsAny(f[len(f)-1:], ",;.:!?") {
			context = false // a new clause
		}
	}
	var run []weighted // words in a row, for phrases
	flush := func() {
		for i := 0; i < len(run); {
			terms := make([]string, 0, len(run)-i)
			for _, t := range run[i:] {
				terms = append(terms, t.term)
			}
			n := max(th.phraseAt(terms, 0), 1)
			var words []string
			w := 1.0
			for _, t := range run[i : i+n] {
				words = append(words, t.written)
				w = min(w, t.w)
			}
			add(strings.Join(terms[:n], " "), strings.Join(words, " "), w, w)
			i += n
		}
		run = run[:0]
	}
	for _, t := range tokens {
		if t.whole {
			flush()
			add(t.term, t.written, t.w, t.w)
			if c := &q.concepts[len(q.concepts)-1]; c.alts[0].term == t.term {
				c.whole = true
			}
			continue
		}
		run = append(run, t)
	}
	flush()
	for _, cue := range cues {
		add(cue, cue, 0, 1) // documents never have the cue itself
	}
	for _, k := range kinds {
		if !has(k.alts[0].term) {
			q.concepts = append(q.concepts, k)
		}
	}
	return q
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
// example.com), "directory" (src/), "file" (notes.md, ./run.sh, /etc/hosts),
// "pattern" (*.go), "user" (@alice), "channel" (#general); else "".
func shapeOf(f string) string {
	f = strings.Trim(f, "\"'`()[]{}<>,;!?")
	f = strings.TrimRight(f, ".:")
	if len(f) < 2 {
		return ""
	}
	lower := strings.ToLower(f)
	switch {
	case strings.Contains(lower, "://"), strings.HasPrefix(lower, "www."), strings.HasPrefix(lower, "localhost"):
		return "url"
	case strings.ContainsAny(f, "*?"):
		return "pattern"
	case f[0] == '@' && isName(f[1:]):
		return "user"
	case f[0] == '#' && isName(f[1:]) && !isDigits(f[1:]):
		return "channel"
	case conventionalFile(lower):
		return "file"
	}
	dir, base := "", lower
	if i := strings.LastIndexByte(lower, '/'); i >= 0 {
		dir, base = lower[:i+1], lower[i+1:]
	}
	name, ext, dotted := cutLast(base, '.')
	switch {
	case dotted && len(name) >= 2 && isName(name) && webDomains(ext) && dir == "":
		return "url"
	case dotted && len(name) >= 2 && len(ext) <= 5 && isName(ext) && !isDigits(ext):
		return "file"
	case dir != "" && base == "" && len(dir) > 1:
		return "directory" // src/, /var/log/
	case dir != "" && (dir[0] == '/' || strings.HasPrefix(dir, "./") || strings.HasPrefix(dir, "~/")):
		return "file"
	}
	return ""
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
	return len(name) > 2 && name[0] == '.' && name[1] != '.' && name[1] != '/' && isName(name[1:])
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
